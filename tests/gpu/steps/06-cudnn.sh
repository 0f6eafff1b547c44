# tier: 1
# sourced by tests/gpu/run.sh.  The attention family on a causal SQ < SKV prefill and a ragged
# paged decode, with cuDNN's SDPA candidates (at most 3, ROOFTUNE_CUDNN_MAX) checked beside the
# templates' (the "cudnn" lines of tests/gpu/tiers.txt).
run_table 1 cudnn || step_fail=1
