#!/usr/bin/env bash
# What the host tests guard in the kernels, measured by mutation: each row of the table below
# changes one decision of a template (one exact text, replaced once), rebuilds the host tests
# that emulate the templates and runs them; the mutation is caught when one of them fails.
# Prints one line per mutation and the counts.  No GPU; a few minutes on 2 cores.
#   bash bench/mutations.sh [BUILD_DIR]     (default build/, configured as tests/run.sh does)
# Every file is restored afterwards (also on ^C), and the tests rebuilt.
#
# Groups: "header" — the index headers' own arithmetic (issue 29's six); "decision" — what a
# kernel body decided (which row, which weight, which offset) before it moved into the headers
# (issue 29's four, applied where the decision lives now); "call" — what a body still writes
# itself, the arguments of those calls, which only the sim tests (ctest -L sim: the kernel
# bodies run on the CPU, sim/sim.h) run; "pipeline" — a body's synchronisation (issue 34's
# four), likewise.  A text's \n is a line break.
#   bash bench/mutations.sh [BUILD_DIR [GROUP...]]   (GROUP: only those groups)
set -u
cd "$(dirname "$0")/.."
build=${1:-build}
shift $(($# > 0 ? 1 : 0))
only=" $* "
[ -d "$build" ] || { echo "mutations.sh: no build folder $build (cmake -S . -B $build first)" >&2; exit 2; }
tests="unit_test_attn_emulate unit_test_attn_wgmma_emulate unit_test_attn_decode_emulate unit_test_attn_decode_math
unit_test_gemm_wgmma_emulate unit_test_gemm_index unit_test_gemm_pipe unit_test_gemm_mma_emulate
unit_test_sim_gemm unit_test_sim_attention"
regex="^($(echo $tests | tr ' ' '|'))\$"
backup=$(mktemp -d)
restore() {
  for f in "$backup"/*; do [ -e "$f" ] && cp "$f" "$(cat "$f.path" 2>/dev/null)" 2>/dev/null; done
}
trap 'restore; rm -rf "$backup"' EXIT
trap 'exit 130' INT TERM

# group | file | text | replacement | what it breaks
mutations=$(cat <<'EOF'
header|templates/attention/attn_index.h|j <= i + kv_len - SQ);|j < i + kv_len - SQ);|the causal mask one key short
header|templates/attention/attn_index.h|const int n = i + kv_len - SQ + 1;|const int n = i + kv_len - SQ;|a row's key count one short
header|templates/attention/attn_index.h|ptx_exp2((m - m_new) * scale_log2)|ptx_exp2((m_new - m) * scale_log2)|the rescale's sign
header|templates/attention/attn_decode_index.h|return ptx_exp2(m - attn_exp_base(M));|return ptx_exp2(attn_exp_base(M) - m);|the merge weight's sign
header|templates/attention/attn_decode_index.h|(M + ptx_log2(l)) * ATTN_LN2|(M - ptx_log2(l)) * ATTN_LN2|the LSE
header|templates/attention/attn_decode_index.h|return l > 0.f ? 1.f / l : 0.f;|return l > 0.f ? 2.f / l : 0.f;|the final 1/l
decision|templates/attention/attn_index.h|attn_softmax_alpha(*m, m_new, scale_log2)|attn_softmax_alpha(m_new, *m, scale_log2)|attn_mma's rescale, arguments swapped
decision|templates/attention/attn_wgmma_index.h|return row0 + 8 * r;|return row0 + 8 * r + 1;|attn_wgmma's LSE row off by one
decision|templates/attention/attn_decode_index.h|wt = attn_merge_weight(ATTN_LD_PARTIAL(ml), mx);|wt = 0.5f * attn_merge_weight(ATTN_LD_PARTIAL(ml), mx);|attn_decode's split merge weight halved
decision|templates/gemm/gemm_index.h|return rank * gemm_wgmma_a_part_rows(block_m, cluster) * block_k * es;|return rank * gemm_wgmma_a_part_rows(block_m, cluster) * block_k * 2;|gemm_wgmma's cluster A offset in 2-byte elements
decision|templates/attention/attn_decode_index.h|const float wt = attn_merge_weight(mls[attn_mlscr(w, r, q_rows)], mx);|const float wt = 0.5f * attn_merge_weight(mls[attn_mlscr(w, r, q_rows)], mx);|attn_decode's token-slice merge weight halved
call|templates/attention/attn_mma.cu|attn_mma_softmax_row(s, NT, o, DT, r, mx, &m[r], &l[r], sl2);|attn_mma_softmax_row(s, NT, o, DT, r, mx, &l[r], &m[r], sl2);|attn_mma's call: m and l swapped
call|templates/attention/attn_wgmma.cu|lse[attn_lse_offset(b, h, row, a.SQ, a.HQ)]|lse[attn_lse_offset(b, h, row + 1, a.SQ, a.HQ)]|attn_wgmma's call: LSE row + 1
call|templates/attention/attn_decode.cu|      row_l[r] = L;|      row_l[r] = 0.5f * L;|attn_decode's body: the merged sum halved
call|templates/gemm/gemm_wgmma.cu|gemm_wgmma_a_part_offset(rank, BLOCK_M, BLOCK_K, ES, CLUSTER)|gemm_wgmma_a_part_offset(rank, BLOCK_M, BLOCK_K, 2, CLUSTER)|gemm_wgmma's call: 2-byte elements
pipeline|templates/attention/attn_mma.cu|ptx_cp_async_wait<2 * STAGES - 2>();|ptx_cp_async_wait<2 * STAGES - 1>();|attn_mma's cp.async wait one group short
pipeline|templates/attention/attn_mma.cu|ptx_cp_async_wait<2 * STAGES - 2>();\n    __syncthreads();|ptx_cp_async_wait<2 * STAGES - 2>();|attn_mma's __syncthreads after the wait missing
pipeline|templates/attention/attn_wgmma.cu|        ptx_wgmma_wait<0>();  // O += P_{n-1} V_{n-1} is done\n        ptx_reg_fence<OACC>(o);\n        ptx_reg_fence<SACC / 2>(p);\n        release(BAR(attn_bar_vempty(sp)));|        release(BAR(attn_bar_vempty(sp)));\n        ptx_wgmma_wait<0>();  // O += P_{n-1} V_{n-1} is done\n        ptx_reg_fence<OACC>(o);\n        ptx_reg_fence<SACC / 2>(p);|attn_wgmma's V stage released before its wgmma wait
pipeline|templates/attention/attn_wgmma.cu|ptx_mbar_wait(BAR(attn_bar_kempty(s)), ptx_empty_parity(n, STAGES));|ptx_mbar_wait(BAR(attn_bar_kempty(s)), ptx_full_parity(n, STAGES));|attn_wgmma's K empty-barrier parity wrong
EOF
)

build_tests() { cmake --build "$build" -j "$(nproc)" --target $tests >"$backup/build.log" 2>&1; }
build_tests || { echo "mutations.sh: the tests do not build unmutated; see $backup/build.log" >&2; cat "$backup/build.log" >&2; exit 2; }
ctest --test-dir "$build" -R "$regex" >/dev/null 2>&1 || { echo "mutations.sh: the tests fail unmutated" >&2; exit 2; }
declare -A total caught
n=0
while IFS='|' read -r group file text repl what; do
  [ -n "$group" ] || continue
  [ "$only" = "  " ] || [[ "$only" == *" $group "* ]] || continue
  text=$(printf '%b' "$text") repl=$(printf '%b' "$repl")
  n=$((n + 1))
  cp "$file" "$backup/$n" && echo "$file" >"$backup/$n.path"
  count=$(TEXT=$text perl -0ne '$c = () = /\Q$ENV{TEXT}\E/g; print $c' "$file")
  if [ "$count" != 1 ]; then
    printf '%-8s %-58s NOT APPLIED (the text occurs %s times in %s)\n' "$group" "$what" "$count" "$file"
    continue
  fi
  TEXT=$text REPL=$repl perl -0pi -e 's/\Q$ENV{TEXT}\E/$ENV{REPL}/' "$file"
  total[$group]=$(( ${total[$group]:-0} + 1 ))
  if ! build_tests; then
    verdict="caught (does not compile)"
    caught[$group]=$(( ${caught[$group]:-0} + 1 ))
  else
    failed=$(ctest --test-dir "$build" -R "$regex" 2>&1 | sed -n 's/^[[:space:]]*[0-9]* - \(unit_test_[a-z_0-9]*\) .*/\1/p' | sed 's/unit_test_//' | tr '\n' ' ')
    if [ -n "$failed" ]; then
      verdict="caught by $failed"
      caught[$group]=$(( ${caught[$group]:-0} + 1 ))
    else
      verdict="NOT CAUGHT"
    fi
  fi
  cp "$backup/$n" "$file"
  rm -f "$backup/$n" "$backup/$n.path"
  printf '%-8s %-58s %s\n' "$group" "$what" "$verdict"
done <<<"$mutations"
build_tests
for g in header decision call pipeline; do
  printf 'caught %s of %s %s mutations\n' "${caught[$g]:-0}" "${total[$g]:-0}" "$g"
done
