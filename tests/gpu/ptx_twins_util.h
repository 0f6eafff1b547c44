/* ptx_twins_util.h — the microtest of every rt_ptx.h wrapper (templates/ptxcheck/ptx_twins.cu),
 * shared by tests/gpu/test_ptx_twins.c (GPU against sim) and tests/unit/test_ptx_twins.c (the
 * NVRTC compiles and the sim half): the table of cases, the source NVRTC and the sim get, the
 * deterministic inputs, a run on the sim and the comparison naming each wrapper that differs. */
#ifndef ROOFTUNE_PTX_TWINS_UTIL_H
#define ROOFTUNE_PTX_TWINS_UTIL_H

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "sim/sim.h"
#include "test.h"

/* X(NAME, TOL, SM90): the case, how its words compare (PT_EXACT bit for bit; PT_FLOAT bit for
 * bit but any NaN equals any NaN; PT_APPROX within 2^-21 relative, ex2/lg2.approx's bound of
 * the PTX ISA 9.7.4 with a margin), and whether it runs only from sm_90 on (cvt.rn.tf32.f32 is
 * sm_90's, the e4m3x2 conversion sm_89's) */
// clang-format off (one case a line)
#define PTX_TWIN_CASES(X)    \
  X(CVT_BF16, PT_EXACT, 0)   \
  X(CVT_F16, PT_EXACT, 0)    \
  X(F16_TO_F32, PT_FLOAT, 0) \
  X(PACK2_F16, PT_EXACT, 0)  \
  X(PACK2_BF16, PT_EXACT, 0) \
  X(TF32_RN, PT_EXACT, 1)    \
  X(TF32_RNA, PT_EXACT, 0)   \
  X(E4M3X2, PT_EXACT, 1)     \
  X(FMAX, PT_FLOAT, 0)       \
  X(REG_MOVE, PT_EXACT, 0)   \
  X(EXP2, PT_APPROX, 0)      \
  X(LOG2, PT_APPROX, 0)      \
  X(SHFL, PT_EXACT, 0)       \
  X(LDSM, PT_EXACT, 0)       \
  X(LDSM_TRANS, PT_EXACT, 0) \
  X(MMA_F16, PT_EXACT, 0)    \
  X(MMA_BF16, PT_EXACT, 0)   \
  X(MMA_TF32, PT_EXACT, 0)   \
  X(CP_ASYNC, PT_EXACT, 0)   \
  X(ST_SHARED, PT_EXACT, 0)  \
  X(LD, PT_EXACT, 0)         \
  X(BAR_SYNC1, PT_EXACT, 0)  \
  X(MBAR, PT_EXACT, 1)       \
  X(TMA, PT_EXACT, 1)        \
  X(WGMMA_SS, PT_EXACT, 1)   \
  X(WGMMA_RS, PT_EXACT, 1)   \
  X(CLUSTER0, PT_EXACT, 1)   \
  X(CLUSTER1, PT_EXACT, 1)
// clang-format on

enum { PT_EXACT, PT_FLOAT, PT_APPROX };
#define PT_ENUM(n, tol, sm90) PC_##n,
enum { PTX_TWIN_CASES(PT_ENUM) PT_NCASES };
#undef PT_ENUM
#define PT_SLOTS   32
#define PT_THREADS 128
#define PT_IN      10240
#define PT_SMEM    (16384 + 1024 + 1024)
#define PT_OUT     (PT_NCASES * PT_THREADS * PT_SLOTS)

/* The TMA case's tensor map: in's 4096 random words as 64 x 64 uint32 (rows of 256 bytes), boxes
 * of 32 x 16, the 128-byte swizzle; cuTensorMapEncodeTiled's arguments (CUtensorMapDataType 2:
 * UINT32, CUtensorMapSwizzle 3: 128B), and sim_tensor_map_encode's */
static const unsigned long long pt_tma_dims[3] = {64, 64, 1}, pt_tma_strides[2] = {256, 16384};
static const unsigned pt_tma_box[3] = {32, 16, 1}, pt_tma_elem_strides[3] = {1, 1, 1};
enum { PT_TMA_TYPE = 2, PT_TMA_SWIZZLE = 3 };
typedef struct {
  unsigned long long opaque[16];
} __attribute__((aligned(64))) pt_map;

typedef struct {
  const char *name;
  int tol, sm90;
} pt_case;
#define PT_ROW(n, tol, sm90) {#n, tol, sm90},
static const pt_case pt_cases[PT_NCASES] = {PTX_TWIN_CASES(PT_ROW)};
#undef PT_ROW

/* The source tree: $ROOFTUNE_SOURCE_DIR (a carried build on the GPU machine), else this build's. */
static const char *pt_root(void) {
  const char *e = getenv("ROOFTUNE_SOURCE_DIR");
  return e && *e ? e : ROOFTUNE_SOURCE_DIR;
}
/* The source's two kernels: one block of everything, and a cluster of two blocks (the cluster
 * cases) */
typedef struct {
  const char *entry;
  unsigned blocks;
} pt_kernel;
static const pt_kernel pt_kernels[2] = {{"ptx_twins", 1}, {"ptx_twins_cluster", 2}};

/* opt for kernel `entry` on `arch`: and rt_ptx.h's folder */
static void pt_options(compile_options *opt, const char *arch, const char *entry) {
  static char common[4096];
  snprintf(common, sizeof common, "%s/templates/common", pt_root());
  memset(opt, 0, sizeof *opt);
  opt->arch = arch;
  opt->entry = entry;
  opt->include_dirs[0] = common;
  opt->include_count = 1;
}

/* The kernel's source with the case numbers and sizes defined before it; NULL (and a failed
 * check) when the file cannot be read.  Free with free(). */
static char *pt_source(void) {
  char path[4200];
  snprintf(path, sizeof path, "%s/templates/ptxcheck/ptx_twins.cu", pt_root());
  FILE *f = fopen(path, "rb");
  if (!f) {
    fprintf(stderr, "cannot read %s\n", path);
    CHECK(0);
    return NULL;
  }
  fseek(f, 0, SEEK_END);
  long n = ftell(f);
  fseek(f, 0, SEEK_SET);
  size_t head = 64 * (PT_NCASES + 2);
  char *s = malloc(head + (size_t)n + 1);
  if (!s) {
    fclose(f);
    return NULL;
  }
  size_t o = (size_t)snprintf(s, head, "#define PC_SLOTS %d\n", PT_SLOTS);
  for (int c = 0; c < PT_NCASES; c++)
    o += (size_t)snprintf(s + o, head - o, "#define PC_%s %d\n", pt_cases[c].name, c);
  o += (size_t)snprintf(s + o, head - o, "#line 1 \"ptx_twins.cu\"\n");
  size_t got = fread(s + o, 1, (size_t)n, f);
  s[o + got] = 0;
  fclose(f);
  return s;
}

/* bf16 / f16 bits of a small integer (exact) */
static unsigned pt_half(int v, int bf16) {
  if (v == 0) return 0;
  unsigned sign = v < 0 ? 0x8000u : 0;
  int a = abs(v), e = 0;
  while ((a >> e) > 1) e++;
  unsigned frac = (unsigned)(a - (1 << e)) << (bf16 ? 7 - e : 10 - e);
  return sign | (bf16 ? (unsigned)(e + 127) << 7 : (unsigned)(e + 15) << 10) | frac;
}

/* The inputs (PT_IN words): random bits, then f16 and bf16 pairs of integers in [-3, 3]. */
static void pt_inputs(unsigned *in) {
  unsigned long long x = 0x9e3779b97f4a7c15ull;
  for (int i = 0; i < PT_IN; i++) {
    x ^= x << 13, x ^= x >> 7, x ^= x << 17;
    unsigned r = (unsigned)(x >> 16);
    if (i < 4096)
      in[i] = r;
    else {
      int bf = i >= 6144;
      in[i] = pt_half((int)(r % 7) - 3, bf) | pt_half((int)((r >> 8) % 7) - 3, bf) << 16;
    }
  }
  /* a few words of every class among the random bits: zeros, infinities, NaNs, denormals, ties */
  const unsigned special[] = {0,           0x80000000u, 0x7f800000u, 0xff800000u, 0x7fc00000u,
                              0xffc00001u, 0x00000001u, 0x807fffffu, 0x3f808000u, 0x3f818000u,
                              0x3f800fffu, 0x47800000u, 0x477ff000u, 0x38800000u, 0x33000000u};
  for (size_t i = 0; i < sizeof special / sizeof *special; i++) in[i * 37] = special[i];
}

static int pt_word_equal(unsigned a, unsigned b, int tol) {
  if (a == b) return 1;
  float fa, fb;
  memcpy(&fa, &a, 4);
  memcpy(&fb, &b, 4);
  if (tol != PT_EXACT && isnan(fa) && isnan(fb)) return 1;
  if (tol == PT_APPROX) return fabs((double)fa - fb) <= ldexp(fmax(fabs((double)fb), 1e-30), -21);
  return 0;
}

/* Compares the sim's words with the GPU's for each case (the sm_90 ones only when sm90): the
 * number of cases that differ, each named with its first differing thread and word. */
static int pt_compare(const unsigned *gpu, const unsigned *sim, int sm90) {
  int bad = 0;
  for (int c = 0; c < PT_NCASES; c++) {
    if (pt_cases[c].sm90 && !sm90) continue;
    int diff = 0, first = -1;
    for (int i = 0; i < PT_THREADS * PT_SLOTS; i++) {
      size_t o = (size_t)c * PT_THREADS * PT_SLOTS + (size_t)i;
      if (!pt_word_equal(gpu[o], sim[o], pt_cases[c].tol)) diff++, first = first < 0 ? i : first;
    }
    if (diff) {
      size_t o = (size_t)c * PT_THREADS * PT_SLOTS + (size_t)first;
      printf(
          "ptx twin %s differs from the GPU in %d words; first: thread %d word %d, gpu 0x%08x sim "
          "0x%08x\n",
          pt_cases[c].name, diff, first / PT_SLOTS, first % PT_SLOTS, gpu[o], sim[o]);
      bad++;
    } else {
      printf("ptx twin %-11s agrees\n", pt_cases[c].name);
    }
  }
  return bad;
}

/* Kernel k run on the sim for `arch`: out (PT_OUT words, zeros at first) gets its words, the
 * others' kept.  RT_OK or the sim's status with its message printed. */
static rt_status pt_run_sim1(const char *src, const char *arch, int k, const unsigned *in_host,
                             unsigned *out) {
  compile_options opt;
  pt_options(&opt, arch, pt_kernels[k].entry);
  sim_module *m = NULL;
  rt_error err;
  rt_error_clear(&err);
  rt_status st = sim_compile(src, "ptx_twins.cu", &opt, NULL, &m, &err);
  unsigned *in = sim_buffer_alloc(PT_IN * 4, "in"), *o = sim_buffer_alloc(PT_OUT * 4, "out");
  pt_map map;
  if (st == RT_OK && (!in || !o)) st = RT_ERR_NOMEM;
  if (st == RT_OK) {
    memcpy(in, in_host, PT_IN * 4);
    memcpy(o, out, PT_OUT * 4);
    st = sim_tensor_map_encode(&map, PT_TMA_TYPE, 3, in, pt_tma_dims, pt_tma_strides, pt_tma_box,
                               pt_tma_elem_strides, 0, PT_TMA_SWIZZLE, 0, 0, &err);
  }
  if (st == RT_OK) {
    void *params[] = {&in, &o, &map};
    sim_launch l;
    memset(&l, 0, sizeof l);
    l.grid[0] = l.cluster[0] = pt_kernels[k].blocks, l.grid[1] = l.grid[2] = 1;
    l.block[0] = PT_THREADS, l.block[1] = l.block[2] = 1;
    l.cluster[1] = l.cluster[2] = 1;
    l.shared_bytes = PT_SMEM, l.params = params;
    st = sim_run(m, &l, NULL, &err);
    if (st == RT_OK) memcpy(out, o, PT_OUT * 4);
  }
  if (st) fprintf(stderr, "%s on the sim (%s): %s\n", pt_kernels[k].entry, arch, err.text);
  sim_buffer_free(in);
  sim_buffer_free(o);
  sim_module_free(m);
  return st;
}
/* Both kernels on the sim (the cluster one only from sm_90: sm80 0); out zeroed first. */
static rt_status pt_run_sim(const char *src, const char *arch, int sm90, const unsigned *in,
                            unsigned *out) {
  memset(out, 0, PT_OUT * 4);
  rt_status st = pt_run_sim1(src, arch, 0, in, out);
  return st || !sm90 ? st : pt_run_sim1(src, arch, 1, in, out);
}

#endif
