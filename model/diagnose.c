/* diagnose.c — the dominant-limit rules of design.md's table, in the order they are checked:
 *   launch overhead  time within DIAG_LAUNCH_FACTOR launch overheads
 *   special function the measured XU pipe (rsqrt, exp, sin ...) busy at or above DIAG_NEAR_ROOF
 *                    of its peak and above the FMA pipe and both roofs (counters only)
 *   compute          FLOP/s at or above DIAG_NEAR_ROOF of the path's ceiling (and above memory)
 *   memory           bytes/s at or above DIAG_NEAR_ROOF of the copy bandwidth
 *   spills           any local-memory spill bytes in the ptxas report
 *   waves / tail     waves / ceil(waves) under DIAG_WAVE_EFF (too few blocks, or a small last wave)
 *   occupancy        both fractions under DIAG_LOW: the occupancy limiter's lever, or more
 *                    pipeline stages when occupancy is already at or above one half (latency)
 *   otherwise        the roof the candidate is closest to
 */
#include "model/diagnose.h"

#include <math.h>
#include <stdio.h>
#include <string.h>
#include <stdlib.h>
#include <strings.h>

/* ---- the lever: "NAME+,NAME-" built from roles ---- */

typedef struct lever_buf {
  char *text;
  size_t size;
  char *move; /* the moves as "NAME=value,...", one per lever item (when checked) */
  size_t move_size;
  char first[48];       /* the first parameter named, for the sentence */
  const diag_input *in; /* the configuration and its domains */
  int blocked;          /* a parameter was left out: its domain ends there */
  int exhausted;        /* a parameter was left out: every move it has that way is measured */
  int reuse;            /* 1: a tile is named only when its move loads fewer bytes */
} lever_buf;

static long long config_value(const rt_vars *config, const char *name, long long dflt) {
  long long v;
  return config && name[0] && rt_vars_get(config, name, &v) ? v : dflt;
}

static int vars_lookup(void *ctx, const char *name, long long *v) {
  return rt_vars_get(ctx, name, v);
}

/* Where moving parameter NAME one way (sign '+' or '-') lands: the configuration's number in
 * the space (space_move: the nearest value that way whose configuration satisfies every
 * constraint and is not measured yet), -1 when no value that way is valid, -3 when every valid
 * one is measured, -2 when the diagnosis has no space or configuration to check against (the
 * lever is then named unchecked). */
static long lever_target(const diag_input *in, const char *name, char sign) {
  if (!in || !in->domains || !in->config) return -2;
  int p = space_param_index(in->domains, name);
  int np = space_nparams(in->domains);
  if (p < 0 || np <= 0 || np > 64) return -2;
  uint16_t cfg[64];
  if (!space_values_to_config(in->domains, vars_lookup, (void *)in->config, cfg)) return -2;
  int count = space_param_at(in->domains, p)->count;
  for (int nth = 1; nth <= count; nth++) {
    long to = space_move(in->domains, cfg, p, sign == '+' ? 1 : -1, nth);
    if (to < 0) return nth == 1 ? -1 : -3;
    if (!in->tried || !in->tried(in->ctx, (size_t)to)) return to;
  }
  return -3;
}

/* 1 when parameter NAME (of a tile role) is a reuse lever: moving it to configuration `to`
 * loads fewer bytes than the candidate (the cost formula's), or nothing says otherwise. */
static int lever_reuses(const lever_buf *b, long to) {
  const diag_input *in = b->in;
  if (!b->reuse || to < 0 || !in->bytes_at || !(in->l2_bytes > 0)) return 1;
  return in->bytes_at(in->ctx, (size_t)to) < in->l2_bytes * (1 - 1e-9);
}

static void lever_add_name(lever_buf *b, const char *name, char sign) {
  if (!name[0]) return;
  /* the same parameter never appears twice */
  for (const char *s = b->text; (s = strstr(s, name)) != NULL; s++) {
    int starts = s == b->text || s[-1] == ',';
    if (starts && (s[strlen(name)] == '+' || s[strlen(name)] == '-')) return;
  }
  long to = lever_target(b->in, name, sign);
  if (to == -1) { /* no valid configuration that way: not a lever */
    b->blocked = 1;
    return;
  }
  if (to == -3) { /* every configuration that way is measured: nothing new to try */
    b->exhausted = 1;
    return;
  }
  if (!lever_reuses(b, to)) return;
  char item[52];
  snprintf(item, sizeof item, "%s%c", name, sign);
  size_t n = strlen(item);
  size_t len = strlen(b->text);
  if (len + n + 2 > b->size) return;
  /* the concrete move: "NAME=value" of the configuration it lands on */
  char mv[96] = "";
  if (to >= 0) {
    int p = space_param_index(b->in->domains, name);
    const space_param *sp = space_param_at(b->in->domains, p);
    int pos = space_config(b->in->domains, (size_t)to)[p];
    if (sp->ints)
      snprintf(mv, sizeof mv, "%s=%lld", name, sp->ints[pos]);
    else
      snprintf(mv, sizeof mv, "%s=%s", name, sp->idents[pos]);
  }
  size_t ml = strlen(b->move), mn = strlen(mv);
  if (to >= 0 && ml + mn + 2 > b->move_size) return;
  if (len) b->text[len++] = ',';
  memcpy(b->text + len, item, n + 1);
  if (to >= 0) {
    if (ml) b->move[ml++] = ',';
    memcpy(b->move + ml, mv, mn + 1);
  }
  if (!b->first[0]) snprintf(b->first, sizeof b->first, "%s", name);
}

static void lever_add(lever_buf *b, const param_roles *roles, param_role role, char sign) {
  if (!roles) return;
  for (int i = 0; i < ROLE_MAX_PARAMS; i++) lever_add_name(b, roles->names[role][i], sign);
}

/* The tile of ROLE (tile_m or tile_n) and the problem's M or N it covers, from the
 * configuration's values; 0 when it does not hold both. */
static int tile_and_dim(const diag_input *in, param_role role, long long *tile, long long *dim) {
  *dim = config_value(in->config, role == ROLE_TILE_M ? "M" : "N", 0);
  *tile = config_value(in->config, in->roles->names[role][0], 0);
  return *dim > 0 && *tile > 0;
}

/* 1 when the tile of ROLE already spans the problem: a larger one re-reads nothing less. */
static int tile_spans_problem(const diag_input *in, param_role role) {
  long long tile, dim;
  return tile_and_dim(in, role, &tile, &dim) && tile >= dim;
}

/* Both output-tile sides, the smaller first: raising it cuts the larger share of re-reads
 * (A is read once per column of blocks, B once per row of blocks).  Raising skips a side that
 * already spans the problem (BLOCK_M past M = 1 re-reads nothing less). */
static void lever_tiles(lever_buf *b, const diag_input *in, char sign) {
  const param_roles *r = in->roles;
  if (!r) return;
  long long m = config_value(in->config, r->names[ROLE_TILE_M][0], 0);
  long long n = config_value(in->config, r->names[ROLE_TILE_N][0], 0);
  int n_first = sign == '+' ? n <= m : n >= m;
  param_role first = n_first ? ROLE_TILE_N : ROLE_TILE_M;
  param_role second = n_first ? ROLE_TILE_M : ROLE_TILE_N;
  if (sign == '-' || !tile_spans_problem(in, first)) lever_add(b, r, first, sign);
  if (sign == '-' || !tile_spans_problem(in, second)) lever_add(b, r, second, sign);
}

/* Larger tiles as a memory-bound kernel's lever: only those whose move loads fewer bytes. */
static void lever_reuse_tiles(lever_buf *b, const diag_input *in) {
  b->reuse = 1;
  lever_tiles(b, in, '+');
  b->reuse = 0;
}

/* The role of the first parameter in the lever (ROLE_COUNT when none). */
static param_role lever_first_role(const lever_buf *b) {
  const param_roles *r = b->in ? b->in->roles : NULL;
  for (int role = 0; r && b->first[0] && role < ROLE_COUNT; role++)
    for (int i = 0; i < ROLE_MAX_PARAMS; i++)
      if (strcmp(r->names[role][i], b->first) == 0) return (param_role)role;
  return ROLE_COUNT;
}

/* What moving the lever's first parameter does for a memory-bound kernel, as words. */
static void lever_memory_words(const lever_buf *b, char *buf, size_t size) {
  param_role first = lever_first_role(b);
  if (first == ROLE_SPLIT_K)
    snprintf(buf, size, "a smaller %s writes fewer partial sums", b->first);
  else if (first == ROLE_VECTOR)
    snprintf(buf, size, "a larger %s moves the bytes in fewer, wider loads", b->first);
  else if (first == ROLE_STAGES || first == ROLE_UNROLL)
    snprintf(buf, size, "raising %s keeps more loads in flight", b->first);
  else
    snprintf(buf, size, "a larger %s reuses loaded data more", b->first);
}

/* 0 when the configuration loads every input about once (the cost formula's bytes within 5 %
 * of the problem's compulsory bytes): larger tiles have no re-reads left to cut. */
static int diag_rereads(const diag_input *in) {
  return !(in->min_bytes > 0 && in->l2_bytes > 0 && in->l2_bytes <= 1.05 * in->min_bytes);
}

/* Smaller output tiles, the side that pads more first: round_up(M, BLOCK_M) / M against the
 * same for N, when the configuration holds the problem's M and N; else as lever_tiles. */
static void lever_padded_tiles(lever_buf *b, const diag_input *in) {
  const param_roles *r = in->roles;
  if (!r) return;
  long long bm, m, bn, n;
  if (!tile_and_dim(in, ROLE_TILE_M, &bm, &m) || !tile_and_dim(in, ROLE_TILE_N, &bn, &n)) {
    lever_tiles(b, in, '-');
    return;
  }
  double pad_m = (double)((m + bm - 1) / bm * bm) / (double)m;
  double pad_n = (double)((n + bn - 1) / bn * bn) / (double)n;
  int n_first = pad_n > pad_m;
  lever_add(b, r, n_first ? ROLE_TILE_N : ROLE_TILE_M, '-');
  lever_add(b, r, n_first ? ROLE_TILE_M : ROLE_TILE_N, '-');
}

/* ---- numbers for sentences ---- */

static void fmt_rate(char *buf, size_t size, double v, const char *unit) {
  if (v >= 1e12)
    snprintf(buf, size, "%.*f T%s", v >= 1e14 ? 0 : 1, v / 1e12, unit);
  else if (v >= 1e9)
    snprintf(buf, size, "%.*f G%s", v >= 1e11 ? 0 : 1, v / 1e9, unit);
  else
    snprintf(buf, size, "%.3g %s", v, unit);
}

static const char *path_words(compute_path p, int wgmma) {
  switch (p) {
    case PATH_SIMT_F32: return "fp32 SIMT";
    case PATH_TC_TF32: return "tf32 tensor cores";
    case PATH_TC_F8: return "fp8 tensor cores, wgmma";
    default: return wgmma ? "f16/bf16 tensor cores, wgmma" : "f16/bf16 tensor cores, mma.sync";
  }
}

static int pct(double f) { return (int)lround(f * 100.0); }

/* What a warp-stall reason (Nsight Compute's names) means, as the end of "N % of stalls ...". */
static const char *stall_words(const char *reason) {
  static const struct {
    const char *reason, *words;
  } t[] = {{"long_scoreboard", "wait on global or local memory (long scoreboard)"},
           {"barrier", "wait at a block barrier (__syncthreads)"},
           {"membar", "wait on a memory barrier"},
           {"short_scoreboard", "wait on shared memory or special functions (short scoreboard)"},
           {"mio_throttle", "wait for the shared-memory instruction queue (MIO throttle)"},
           {"lg_throttle", "wait for the global/local memory queue (LG throttle)"},
           {"math_pipe_throttle", "wait for a busy math pipe"},
           {"wait", "wait out fixed instruction latencies"},
           {"not_selected", "are ready but another warp issued (not selected)"},
           {"gmma", "wait on wgmma"},
           {"branch_resolving", "wait for a branch to resolve"},
           {"dispatch_stall", "wait for dispatch"},
           {"drain", "wait for stores to drain at exit"},
           {"imc_miss", "wait on the constant cache"},
           {"no_instruction", "wait for instructions (instruction cache)"},
           {"sleeping", "sleep"},
           {"tex_throttle", "wait for the texture queue"},
           {"misc", "wait for other reasons"}};
  for (size_t i = 0; i < sizeof t / sizeof t[0]; i++)
    if (!strcmp(t[i].reason, reason)) return t[i].words;
  return "stall";
}

/* "41 % of stalls wait on a memory barrier" from counters' "membar:0.41,..."; "" without. */
static void stall_phrase(const hw_counters *m, char *buf, size_t size) {
  buf[0] = 0;
  if (!m || !m->stalls[0]) return;
  char reason[40];
  size_t n = strcspn(m->stalls, ":");
  if (n >= sizeof reason) return;
  memcpy(reason, m->stalls, n);
  reason[n] = 0;
  double share = m->stalls[n] == ':' ? atof(m->stalls + n + 1) : 0;
  snprintf(buf, size, "%d %% of stalls %s", pct(share), stall_words(reason));
}

/* ---- the diagnosis, in the order it is made ---- */

/* What the rules of one diagnosis share. */
typedef struct diag_ctx {
  const diag_input *in;        /* the candidate, measured facts in place of modelled ones */
  const roofline_ceilings *cl; /* the roofs */
  const hw_counters *hw;       /* its hardware counters, NULL when not measured */
  diagnosis *out;              /* what is being filled */
  double peak;                 /* the compute path's FLOP/s ceiling */
  double executed;             /* FLOPs the kernel does, padding included */
  double exec_frac;            /* their rate against peak */
  double l2_frac;              /* L2 bytes/s against the L2 bandwidth; 0 unknown */
  double wave_eff;             /* waves / ceil(waves); 1 when unknown */
  lever_buf lb;                /* the lever being built */
  char stalls[160];            /* the measured stall phrase, "" when none or said */
} diag_ctx;

/* The input and the path's peak, or RT_ERR_INVALID for a time or ceilings that are not positive. */
static rt_status diag_check(const diag_input *in, const roofline_ceilings *cl, double *peak,
                            rt_error *err) {
  if (!(in->time_s > 0) || !isfinite(in->time_s))
    return rt_error_set(err, RT_ERR_INVALID, "diagnosis needs a positive time, got %g s",
                        in->time_s);
  if (in->path < 0 || in->path >= PATH_COUNT)
    return rt_error_set(err, RT_ERR_INVALID, "unknown compute path %d", (int)in->path);
  *peak = cl->flops[in->path];
  if (in->path == PATH_TC_F16 && !in->wgmma && cl->mma_sync_fraction > 0)
    *peak *= cl->mma_sync_fraction;
  if (!(cl->bw > 0) || !(*peak > 0))
    return rt_error_set(err, RT_ERR_INVALID,
                        "diagnosis needs positive ceilings (bandwidth %g B/s, compute %g FLOP/s)",
                        cl->bw, *peak);
  return RT_OK;
}

/* Measured facts replace modelled ones where the counters have them: IN copied into *mi with
 * them, and out->basis lists which.  Returns the input the rules read (in when unmeasured). */
static const diag_input *diag_measured(const diag_input *in, const hw_counters *hw, diag_input *mi,
                                       diagnosis *out) {
  if (!hw) return in;
  *mi = *in;
  double dram = hw->dram_read_bytes + hw->dram_write_bytes;
  size_t bl = 0;
  if (dram > 0) {
    mi->dram_bytes = dram;
    bl += (size_t)snprintf(out->basis + bl, sizeof out->basis - bl, "%sdram", bl ? "," : "");
  }
  if (hw->l2_bytes > 0) {
    mi->l2_bytes = hw->l2_bytes;
    mi->min_bytes = 0; /* measured L2 traffic: no formula to compare it with */
    bl += (size_t)snprintf(out->basis + bl, sizeof out->basis - bl, "%sl2", bl ? "," : "");
  }
  if (hw->occupancy > 0) {
    mi->facts.occupancy = hw->occupancy;
    bl += (size_t)snprintf(out->basis + bl, sizeof out->basis - bl, "%soccupancy", bl ? "," : "");
  }
  if (hw->stalls[0]) snprintf(out->basis + bl, sizeof out->basis - bl, "%sstalls", bl ? "," : "");
  return mi;
}

/* The roofline position: achieved rates and their fractions of the roofs, the intensity
 * against the ridge, and the rate of the math done on padding. */
static void diag_roofline(diag_ctx *c) {
  const diag_input *in = c->in;
  diagnosis *out = c->out;
  out->achieved_flops = in->flops / in->time_s;
  out->achieved_bw = in->dram_bytes / in->time_s;
  out->flops_frac = out->achieved_flops / c->peak;
  out->bw_frac = out->achieved_bw / c->cl->bw;
  c->l2_frac = in->l2_bytes > 0 && c->cl->l2_bw > 0 ? in->l2_bytes / in->time_s / c->cl->l2_bw : 0;
  out->intensity = in->dram_bytes > 0 ? in->flops / in->dram_bytes : 0;
  out->ridge = c->peak / c->cl->bw;
  /* the math units also work on the padded parts of partial tiles */
  c->executed = in->executed_flops > in->flops ? in->executed_flops : in->flops;
  c->exec_frac = c->executed / in->time_s / c->peak;
}

/* Waves of resident blocks over the GPU and the idle part of the last one. */
static void diag_waves(diag_ctx *c) {
  const static_facts *f = &c->in->facts;
  c->wave_eff = 1.0;
  if (f->grid_blocks > 0 && f->blocks_per_sm > 0 && c->cl->sm_count > 0) {
    double full;
    roofline_waves(f->grid_blocks, f->work_blocks, (double)c->cl->sm_count * f->blocks_per_sm,
                   &c->out->waves, &full);
    c->out->tail = full - c->out->waves;
    c->wave_eff = c->out->waves / full;
  }
}

/* The limit rules, each filling limit, sentence and lever.  Compute-bound, at a roof or not. */
static void say_compute(diag_ctx *c, char *s, size_t ss) {
  const diag_input *in = c->in;
  const roofline_ceilings *cl = c->cl;
  diagnosis *out = c->out;
  lever_buf *lb = &c->lb;
  char roof[32];
  snprintf(out->limit, sizeof out->limit, "compute");
  fmt_rate(roof, sizeof roof, c->peak, "FLOP/s");
  if (out->flops_frac >= DIAG_AT_ROOF && in->path == PATH_TC_F16 && !in->wgmma &&
      cl->mma_sync_fraction > 0 && cl->mma_sync_fraction < 1) {
    snprintf(s, ss,
             "compute-bound at %d %% of %s (%s): at this path's roof; only a wgmma template "
             "(sm_90a) goes faster",
             pct(out->flops_frac), roof, path_words(in->path, in->wgmma));
  } else if (out->flops_frac >= DIAG_AT_ROOF) {
    snprintf(s, ss, "compute-bound at %d %% of %s (%s): at the roof, stop", pct(out->flops_frac),
             roof, path_words(in->path, in->wgmma));
  } else if (in->path == PATH_SIMT_F32) {
    snprintf(s, ss,
             "compute-bound at %d %% of %s (%s): tensor cores (tf32) or a lower precision are "
             "the faster path",
             pct(out->flops_frac), roof, path_words(in->path, in->wgmma));
  } else if (in->path == PATH_TC_F16 && !in->wgmma && cl->mma_sync_fraction < 1) {
    snprintf(s, ss,
             "compute-bound at %d %% of %s (%s): a wgmma template (sm_90a) has the higher "
             "ceiling",
             pct(out->flops_frac), roof, path_words(in->path, in->wgmma));
  } else {
    /* larger per-warp tiles issue more MMAs per load and per synchronisation */
    lever_add(lb, in->roles, ROLE_TILE_K, '+');
    lever_tiles(lb, in, '+');
    snprintf(s, ss, "compute-bound at %d %% of %s (%s): %s%s issues more math per load",
             pct(out->flops_frac), roof, path_words(in->path, in->wgmma),
             lb->first[0] ? "a larger " : "a larger tile", lb->first);
  }
}

/* Near a roof: launch overhead, compute (on padding, or on the problem's math), L2, DRAM.
 * 0 when the candidate is near none of them. */
static int say_roof(diag_ctx *c, char *s, size_t ss) {
  const diag_input *in = c->in;
  const roofline_ceilings *cl = c->cl;
  diagnosis *out = c->out;
  lever_buf *lb = &c->lb;
  char roof[32];
  if (cl->launch_overhead_s > 0 && in->time_s < DIAG_LAUNCH_FACTOR * cl->launch_overhead_s) {
    snprintf(out->limit, sizeof out->limit, "launch");
    snprintf(s, ss,
             "launch-bound: %.1f us is within %.0fx the %.0f us launch overhead: batch, fuse or "
             "graph the launches (no template lever)",
             in->time_s * 1e6, DIAG_LAUNCH_FACTOR, cl->launch_overhead_s * 1e6);
  } else if (c->hw && c->hw->xu_pipe >= DIAG_NEAR_ROOF && c->hw->xu_pipe >= c->hw->fma_pipe &&
             c->hw->xu_pipe >= out->flops_frac && c->hw->xu_pipe >= out->bw_frac) {
    /* the special-function unit issues far fewer operations per clock than the FMA pipe: a
     * kernel of many rsqrt or exp waits on it before it reaches the fp32 roof */
    snprintf(out->limit, sizeof out->limit, "xu");
    snprintf(
        s, ss,
        "bound by the special-function unit (XU: rsqrt, exp, sin ...) at %d %% of its peak, the "
        "FMA pipe at %d %% and %d %% of the fp32 roof: fewer or cheaper transcendental operations "
        "(fast intrinsics, values computed once) go faster; no template parameter moves it",
        pct(c->hw->xu_pipe), pct(c->hw->fma_pipe), pct(out->flops_frac));
  } else if (in->flops > 0 && c->executed >= DIAG_PAD_FACTOR * in->flops &&
             c->exec_frac >= DIAG_NEAR_ROOF && c->exec_frac >= out->bw_frac) {
    snprintf(out->limit, sizeof out->limit, "compute");
    fmt_rate(roof, sizeof roof, c->peak, "FLOP/s");
    lever_padded_tiles(lb, in);
    snprintf(s, ss,
             "compute-bound on padding: partial tiles make the kernel do %.1fx the problem's math, "
             "at %d %% of %s (%s) counting it and %d %% without: %s%s wastes less",
             c->executed / in->flops, pct(c->exec_frac), roof, path_words(in->path, in->wgmma),
             pct(out->flops_frac),
             lb->first[0] ? "a smaller " : "a smaller tile or another template", lb->first);
  } else if (out->flops_frac >= DIAG_NEAR_ROOF && out->flops_frac >= out->bw_frac) {
    say_compute(c, s, ss);
  } else if (c->l2_frac >= DIAG_NEAR_ROOF && c->l2_frac > out->bw_frac) {
    snprintf(out->limit, sizeof out->limit, "memory");
    fmt_rate(roof, sizeof roof, cl->l2_bw, "B/s");
    lever_tiles(lb, in, '+');
    lever_add(lb, in->roles, ROLE_TILE_K, '+');
    snprintf(s, ss,
             "L2-bound: loads through L2 at %d %% of its ~%s (DRAM at %d %%): %s%s %s each "
             "input tile fewer times",
             pct(c->l2_frac), roof, pct(out->bw_frac), lb->first[0] ? "a larger " : "larger tiles",
             lb->first, lb->first[0] ? "loads" : "load");
  } else if (out->bw_frac >= DIAG_NEAR_ROOF) {
    snprintf(out->limit, sizeof out->limit, "memory");
    fmt_rate(roof, sizeof roof, cl->bw, "B/s");
    int rereads = diag_rereads(in);
    if (rereads) lever_reuse_tiles(lb, in);
    lever_add(lb, in->roles, ROLE_SPLIT_K, '-');
    lever_add(lb, in->roles, ROLE_VECTOR, '+');
    if (out->bw_frac < DIAG_AT_ROOF) lever_add(lb, in->roles, ROLE_UNROLL, '+');
    char words[96];
    lever_memory_words(lb, words, sizeof words);
    if (lb->first[0])
      snprintf(s, ss,
               "memory-bound at %d %% of the %s copy bandwidth (%.0f FLOP/B against a ridge of "
               "%.0f): %s%s",
               pct(out->bw_frac), roof, out->intensity, out->ridge,
               rereads ? "" : "every input is read about once; ", words);
    else
      snprintf(s, ss,
               "memory-bound at %d %% of the %s copy bandwidth (%.0f FLOP/B against a ridge of "
               "%.0f): more reuse, fewer bytes (precision) or fusion",
               pct(out->bw_frac), roof, out->intensity, out->ridge);
  } else {
    return 0;
  }
  return 1;
}

/* Spills to local memory. */
static void say_spills(diag_ctx *c, char *s, size_t ss) {
  const diag_input *in = c->in;
  lever_buf *lb = &c->lb;
  snprintf(c->out->limit, sizeof c->out->limit, "spills");
  lever_tiles(lb, in, '-');
  lever_add(lb, in->roles, ROLE_WARPS, '+');
  lever_add(lb, in->roles, ROLE_UNROLL, '-');
  snprintf(s, ss, "spills %d bytes per thread to local memory (%d registers): %s%s removes them",
           in->facts.spill_stores + in->facts.spill_loads, in->facts.registers,
           lb->first[0] ? "a smaller " : "a smaller per-thread tile", lb->first);
}

const char *diag_idle_words(const diagnosis *d, char *buf, size_t size) {
  double full = d->waves + d->tail;
  if (d->tail < 1 || !(full > 0))
    snprintf(buf, size, "%d %% of the last wave", pct(d->tail));
  else
    snprintf(buf, size, "%d %% of the GPU throughout", pct(d->tail / full));
  return buf;
}

/* Too few blocks for one wave, or a last wave that leaves much of the GPU idle. */
static void say_waves(diag_ctx *c, char *s, size_t ss) {
  const diag_input *in = c->in;
  const static_facts *f = &in->facts;
  diagnosis *out = c->out;
  lever_buf *lb = &c->lb;
  snprintf(out->limit, sizeof out->limit, "waves");
  long long capacity = (long long)c->cl->sm_count * f->blocks_per_sm;
  if (out->waves < 1) {
    lever_add(lb, in->roles, ROLE_SPLIT_K, '+');
    lever_tiles(lb, in, '-');
    int split_first = lb->first[0] && strcmp(lb->first, in->roles->names[ROLE_SPLIT_K][0]) == 0;
    snprintf(s, ss,
             "waves: %lld blocks fill %d %% of the %lld the GPU holds at once: %s%s makes more "
             "blocks",
             f->work_blocks > f->grid_blocks ? f->work_blocks : f->grid_blocks, pct(out->waves),
             capacity,
             !lb->first[0] ? "split-K or a smaller tile"
             : split_first ? "raising "
                           : "a smaller ",
             lb->first);
  } else {
    lever_tiles(lb, in, '-');
    lever_add(lb, in->roles, ROLE_SPLIT_K, '+');
    char idle[64];
    snprintf(s, ss, "waves: %.2f waves of %lld blocks leave %s idle: another %s balances the waves",
             out->waves, capacity, diag_idle_words(out, idle, sizeof idle),
             lb->first[0] ? lb->first : "tile size");
  }
}

/* Far from both roofs: latency (occupancy is fine, or nothing limits it), or the occupancy
 * limiter's lever. */
static void say_occupancy(diag_ctx *c, char *s, size_t ss) {
  const diag_input *in = c->in;
  const static_facts *f = &in->facts;
  diagnosis *out = c->out;
  lever_buf *lb = &c->lb;
  snprintf(out->limit, sizeof out->limit, "occupancy");
  const char *lim = f->limiter;
  if (f->occupancy >= 0.5 || !lim[0]) {
    /* more loads in flight per warp: a deeper pipeline, or more unrolled loads */
    lever_add(lb, in->roles, ROLE_STAGES, '+');
    lever_add(lb, in->roles, ROLE_UNROLL, '+');
    snprintf(s, ss,
             "latency-bound: %s%s%d %% of compute and %d %% of bandwidth at %d %% %soccupancy: "
             "%s%s hides more latency",
             c->stalls, c->stalls[0] ? "; " : "", pct(out->flops_frac), pct(out->bw_frac),
             pct(f->occupancy), c->hw && c->hw->occupancy > 0 ? "measured " : "",
             lb->first[0] ? "raising " : "more independent work per warp", lb->first);
    c->stalls[0] = 0; /* said */
    return;
  }
  const char *what;
  if (strcmp(lim, "registers") == 0) {
    lever_tiles(lb, in, '-');
    lever_add(lb, in->roles, ROLE_WARPS, '+');
    what = "smaller per-thread tiles free registers";
  } else if (strcmp(lim, "smem") == 0) {
    lever_add(lb, in->roles, ROLE_STAGES, '-');
    lever_add(lb, in->roles, ROLE_TILE_K, '-');
    lever_tiles(lb, in, '-');
    what = "fewer stages or smaller tiles free shared memory";
  } else if (strcmp(lim, "threads") == 0) {
    lever_add(lb, in->roles, ROLE_WARPS, '-');
    what = "fewer warps per block let more blocks in";
  } else { /* blocks: each block is too small */
    lever_tiles(lb, in, '+');
    lever_add(lb, in->roles, ROLE_WARPS, '+');
    what = "larger blocks fill the SM";
  }
  snprintf(s, ss,
           "occupancy-limited: %d %% occupancy (%d blocks/SM, limited by %s), %d %% of "
           "compute and %d %% of bandwidth: %s%s%s",
           pct(f->occupancy), f->blocks_per_sm, lim, pct(out->flops_frac), pct(out->bw_frac), what,
           lb->first[0] ? ", starting with " : "", lb->first);
}

/* Near no roof and no other limit: the roof the candidate is closest to. */
static void say_closest(diag_ctx *c, char *s, size_t ss) {
  const diag_input *in = c->in;
  diagnosis *out = c->out;
  lever_buf *lb = &c->lb;
  char roof[32], got[32];
  if (out->bw_frac >= out->flops_frac) {
    snprintf(out->limit, sizeof out->limit, "memory");
    fmt_rate(roof, sizeof roof, c->cl->bw, "B/s");
    fmt_rate(got, sizeof got, out->achieved_bw, "B/s");
    if (diag_rereads(in)) lever_reuse_tiles(lb, in);
    lever_add(lb, in->roles, ROLE_STAGES, '+');
    lever_add(lb, in->roles, ROLE_UNROLL, '+');
    char words[96];
    lever_memory_words(lb, words, sizeof words);
    snprintf(s, ss, "closest to the memory roof: %s is %d %% of the %s copy bandwidth: %s", got,
             pct(out->bw_frac), roof,
             lb->first[0] ? words : "more reuse moves fewer bytes per FLOP");
  } else {
    snprintf(out->limit, sizeof out->limit, "compute");
    fmt_rate(roof, sizeof roof, c->peak, "FLOP/s");
    lever_add(lb, in->roles, ROLE_STAGES, '+');
    lever_tiles(lb, in, '+');
    snprintf(s, ss, "closest to the compute roof: %d %% of %s (%s): %s%s keeps the math units fed",
             pct(out->flops_frac), roof, path_words(in->path, in->wgmma),
             lb->first[0] ? "a deeper or larger " : "deeper pipelining", lb->first);
  }
}

/* The dominant limit: the first rule that applies, in the order of design.md's table. */
static void say_limit(diag_ctx *c, char *s, size_t ss) {
  const diagnosis *out = c->out;
  if (say_roof(c, s, ss)) return;
  if (c->in->facts.spill_stores + c->in->facts.spill_loads > 0)
    say_spills(c, s, ss);
  else if (c->wave_eff < DIAG_WAVE_EFF)
    say_waves(c, s, ss);
  else if (out->flops_frac < DIAG_LOW && out->bw_frac < DIAG_LOW)
    say_occupancy(c, s, ss);
  else
    say_closest(c, s, ss);
}

/* What follows the verdict: a lever blocked at its parameters' ends, the measured stalls, and
 * the DRAM traffic a fused epilogue saves. */
static void say_notes(diag_ctx *c, char *s, size_t ss) {
  const diag_input *in = c->in;
  if (!c->out->lever[0] && c->lb.exhausted) { /* what they would move to is measured */
    size_t len = strlen(s);
    snprintf(s + len, ss - len,
             " (every configuration its parameters move to that way is measured: this "
             "neighbourhood is exhausted)");
  } else if (!c->out->lever[0] && c->lb.blocked) { /* the parameters that would help end here */
    size_t len = strlen(s);
    snprintf(s + len, ss - len, " (this template's parameters cannot go further that way)");
  }
  if (c->stalls[0]) { /* measured: what the warps wait on, after the verdict */
    size_t len = strlen(s);
    snprintf(s + len, ss - len, "; measured: %s", c->stalls);
  }
  if (in->fused_bytes > 0 && c->cl->bw > 0) {
    size_t len = strlen(s);
    snprintf(s + len, ss - len,
             "; the fused epilogue saves %.0f MB of DRAM traffic against a separate pass (%.0f us "
             "at the "
             "copy bandwidth)",
             in->fused_bytes / 1e6, in->fused_bytes / c->cl->bw * 1e6);
  }
}

rt_status diagnose(const diag_input *in, const roofline_ceilings *cl, diagnosis *out,
                   rt_error *err) {
  memset(out, 0, sizeof *out);
  diag_ctx c = {.cl = cl, .out = out};
  rt_status st = diag_check(in, cl, &c.peak, err);
  if (st) return st;
  diag_input mi;
  c.hw = in->measured && in->measured->measured ? in->measured : NULL;
  c.in = in = diag_measured(in, c.hw, &mi, out);
  stall_phrase(c.hw, c.stalls, sizeof c.stalls);
  diag_roofline(&c);
  diag_waves(&c);

  c.lb = (lever_buf){.text = out->lever,
                     .size = sizeof out->lever,
                     .move = out->move,
                     .move_size = sizeof out->move,
                     .in = in};
  say_limit(&c, out->sentence, sizeof out->sentence);
  say_notes(&c, out->sentence, sizeof out->sentence);
  return RT_OK;
}
