# tier: 3
# plan: 180
# sourced by tests/gpu/run.sh: see its head for the helpers (log, left, cap, tune_line, one_config)
# 8. the runtime library as applications use it ("runtime"): a gemm_mma and an attn_mma winner
#    measured here into a database of this step's own; examples/load_gemm.c on it and on the
#    main job's winners (4096^3; 4096x4096x4095, which gemm_wgmma's K constraint refuses, so the
#    next rule serves it; 64x64x64, past the distance cap: cuBLASLt), each checking C == K;
#    `rooftune lookup attention` and rooftune_attention's calls (gpu_test_attention_runtime_gpu,
#    when step "tests" did not run it); the Python package's GPU tests (rooftune.gemm and
#    rooftune.attention against PyTorch; they skip with a reason where PyTorch is missing)
if [ "$(left)" -gt 90 ]; then
  log "== runtime: load_gemm, lookup and rooftune_attention, the Python GPU tests"
  rdb=$build/gpu-runtime.db
  rm -f "$rdb" "$rdb-wal" "$rdb-shm"
  gpu_name=$(nvidia-smi --query-gpu=name --format=csv,noheader 2>/dev/null | head -1)
  for spec in "gemm_mma 512x512x512" "attn_mma 2x8:2x256x64:causal"; do
    set -- $spec
    timeout "$(cap 60)" "$bin" tune "$1" --shape "$2" --dtype bf16 --device cuda --budget 3 --timeout 10 \
      --db "$rdb" >>"$logs/tune.log" 2>&1
    log "tune $1 $2 bf16 (budget 3): exit $?"
  done
  for run in "$rdb 512x512x512" "$rdb 480x512x512" "$db 4096x4096x4096" "$db 4096x4096x4095" "$db 64x64x64"; do
    set -- $run
    [ -f "$1" ] || continue
    out=$(timeout "$(cap 30)" "$build/tests/gpu_load_gemm" "$1" "$2" bf16 2>&1)
    rc=$?
    log "load_gemm $(basename "$1") $2 bf16: exit $rc"
    echo "$out" | grep -E "^tuned|^  (template|passed|runs)|^ran|^note" | sed 's/^/    /' | tee -a "$results"
    [ $rc = 0 ] || step_fail=1
  done
  for shape in 2x8:2x256x64:causal 2x8:2x200x64:causal 2x8:2x256x64; do
    log "lookup attention $shape:"
    timeout 10 "$bin" lookup attention --shape "$shape" --dtype bf16 --db "$rdb" --device "$gpu_name" --runnable 2>&1 |
      grep -E "^rule|^template|^passed|^runs" | sed 's/^/    /' | tee -a "$results"
  done
  t=$build/tests/gpu_test_attention_runtime_gpu
  if ! want tests && [ -x "$t" ]; then
    timeout "$(cap 120)" "$t" >"$logs/attention_runtime.log" 2>&1
    rc=$?
    log "gpu_test_attention_runtime_gpu: exit $rc"
    tail -12 "$logs/attention_runtime.log" | sed 's/^/    /' | tee -a "$results"
    case $rc in 0|77) ;; *) step_fail=1 ;; esac
  fi
  # the package from the source tree, pytest from the image (or build-gpu/pylib: RT_GPU_PYLIB=1 prepare.sh)
  pyp=$PWD/python
  [ -d "$build/pylib" ] && pyp=$pyp:$build/pylib
  if PYTHONPATH=$pyp python3 -c 'import pytest' 2>/dev/null; then
    ROOFTUNE_LIBRARY=$build/librooftune.so.0 ROOFTUNE_BIN=$bin ROOFTUNE_GPU_DB=$rdb PYTHONPATH=$pyp \
      timeout "$(cap 150)" python3 -m pytest -q -rs -p no:cacheprovider python/tests/test_gpu.py >"$logs/pytest_gpu.log" 2>&1
    rc=$?
    log "python GPU tests: exit $rc"
    tail -8 "$logs/pytest_gpu.log" | sed 's/^/    /' | tee -a "$results"
    case $rc in 0|5) ;; *) step_fail=1 ;; esac
  else
    log "python GPU tests: not run, no pytest here (RT_GPU_PYLIB=1 bash tests/gpu/prepare.sh puts one in $build/pylib)"
  fi
fi
