/* occupancy.c — the CUDA Occupancy Calculator's arithmetic (see occupancy.h for the sources). */
#include "model/occupancy.h"

#include <stdio.h>
#include <string.h>

static int occ_round_up(long long v, int unit) {
  if (unit <= 1) return (int)v;
  return (int)((v + unit - 1) / unit * unit);
}

rt_status occupancy_compute(const arch_spec *a, const occupancy_input *in, occupancy *out,
                            rt_error *err) {
  memset(out, 0, sizeof *out);
  out->limiter = "";
  if (!a) return rt_error_set(err, RT_ERR_INVALID, "no architecture given for occupancy");
  if (in->threads_per_block <= 0 || in->registers_per_thread < 0 || in->smem_static < 0 ||
      in->smem_dynamic < 0)
    return rt_error_set(err, RT_ERR_INVALID,
                        "occupancy needs threads > 0 and non-negative registers and shared "
                        "memory (got threads %d, registers %d, smem %d+%d)",
                        in->threads_per_block, in->registers_per_thread, in->smem_static,
                        in->smem_dynamic);

  int warps = (in->threads_per_block + 31) / 32;
  out->warps_per_block = warps;

  /* registers */
  if (in->registers_per_thread > a->max_regs_per_thread) {
    out->by_registers = 0;
  } else if (in->registers_per_thread == 0) {
    out->by_registers = a->regs_per_sm; /* no register limit: more than any other limit */
  } else {
    out->regs_per_warp = occ_round_up((long long)in->registers_per_thread * 32, a->reg_alloc_unit);
    out->by_registers = (a->regs_per_sm / out->regs_per_warp) / warps;
  }

  /* shared memory */
  long long smem = (long long)in->smem_static + in->smem_dynamic;
  out->smem_per_block = occ_round_up(smem, a->smem_alloc_unit) + a->smem_reserved_per_block;
  if (smem > a->smem_per_block_optin)
    out->by_smem = 0;
  else if (out->smem_per_block == 0)
    out->by_smem = a->smem_per_sm; /* none used, none reserved (sm_75) */
  else
    out->by_smem = a->smem_per_sm / out->smem_per_block;

  /* threads (warp slots) */
  if (in->threads_per_block > a->max_threads_per_block)
    out->by_threads = 0;
  else
    out->by_threads = a->max_warps_per_sm / warps;

  out->by_blocks = a->max_blocks_per_sm;

  struct {
    int n;
    const char *name;
  } lim[4] = {{out->by_threads, "threads"},
              {out->by_blocks, "blocks"},
              {out->by_registers, "registers"},
              {out->by_smem, "smem"}};
  int best = 0;
  for (int i = 1; i < 4; i++)
    if (lim[i].n < lim[best].n) best = i;
  out->blocks_per_sm = lim[best].n;
  out->limiter = lim[best].name;
  out->active_warps = out->blocks_per_sm * warps;
  out->fraction = (double)out->active_warps / a->max_warps_per_sm;
  return RT_OK;
}

rt_status occupancy_fill_facts(const arch_spec *arch, static_facts *f, rt_error *err) {
  occupancy o;
  occupancy_input in = {f->threads_per_block, f->registers, f->smem_static, f->smem_dynamic};
  rt_status s = occupancy_compute(arch, &in, &o, err);
  if (s) return s;
  f->blocks_per_sm = o.blocks_per_sm;
  f->occupancy = o.fraction;
  snprintf(f->limiter, sizeof f->limiter, "%s", o.limiter);
  return RT_OK;
}
