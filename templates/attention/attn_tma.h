/* attn_tma.h — the TMA tensor maps of the attention family's TMA templates (attn_wgmma): the
 * struct of maps such a kernel takes as its first argument, and a pure function that computes,
 * for Q, K and V, exactly the arguments the host hands cuTensorMapEncodeTiled.  Valid C (the
 * host side, kernels/attention.c, and the host tests include it) and CUDA C++ (the template
 * includes it for attn_tma_maps), so both sides agree on the layout by construction.
 *
 * A TMA template's manifest says ATTN_TMA = 1 and gives its box sizes as derived values:
 * TMA_INNER (head-dim elements per box: 64, one 128-byte swizzle row of 16-bit elements),
 * TMA_ROWS_Q (query rows per Q box: the block's BLOCK_M) and TMA_ROWS_KV (key rows per K or V
 * box: BLOCK_N).  The host then, for each launch:
 *     attn_tma_plan(&problem, &box, params, &bad)          (this file: pure, no driver)
 *     cuTensorMapEncodeTiled(&maps.q, params[ATTN_TMA_Q].type, params[..].rank, ...) x 3
 *     args = {&maps, &attn_args}; cuLaunchKernel(...)
 * in the argument order of attn_tma_params (the fields are cuTensorMapEncodeTiled's, in its
 * order; the enum values are cuda.h's, written out here so this file needs no CUDA header; the
 * host test checks them against cuda.h).
 *
 * The maps.  Each operand is a rank-4 tensor, innermost dimension first, exactly the ABI's
 * row-major layouts (attn_abi.h):
 *     Q:    dims (D, HQ,  SQ,  B)  byte strides (D*es, HQ*D*es,  SQ*HQ*D*es)
 *     K, V: dims (D, HKV, SKV, B)  byte strides (D*es, HKV*D*es, SKV*HKV*D*es)
 * with boxes (TMA_INNER, 1, TMA_ROWS_Q, 1) and (TMA_INNER, 1, TMA_ROWS_KV, 1): one box is
 * TMA_INNER head-dim columns of ROWS consecutive tokens of one head of one sequence; a tile
 * of the head dim D takes D / TMA_INNER boxes.  Element strides 1, no interleave, 128-byte
 * swizzle, L2 promotion 256 B, out-of-bounds elements filled with zeros (FLOAT_OOB_FILL_NONE):
 * rows past SQ or SKV of a box read as 0, so the kernel loads partial tiles whole.  Keeping
 * the sequence and batch dimensions apart (rank 4, not 3) makes the zero fill stop at the end
 * of each sequence rather than run into the next one.
 *
 * The rules attn_tma_plan enforces (cuTensorMapEncodeTiled's, for this use), each with its
 * status code:
 *   ATTN_TMA_ERR_DTYPE   inputs must be f16 or bf16 (2-byte elements)
 *   ATTN_TMA_ERR_SHAPE   B, HQ, HKV, SQ, SKV, D all >= 1 and <= 2^32; HQ a multiple of HKV
 *                        (a sequence with no keys at all, SKV == 0, needs no map: the host
 *                        writes O = 0 and LSE = -inf itself or skips the launch)
 *   ATTN_TMA_ERR_ALIGN   every base address 16-byte aligned
 *   ATTN_TMA_ERR_STRIDE  every byte stride a multiple of 16 and below 2^40 (D*es % 16: true
 *                        for every head dim the family has)
 *   ATTN_TMA_ERR_BOX     box dims 1..256; the inner box TMA_INNER*es bytes a multiple of 16
 *                        and at most 128 (the 128-byte swizzle span); D a multiple of
 *                        TMA_INNER (the kernel loads D / TMA_INNER boxes per tile)
 * On failure *bad says which operand (ATTN_TMA_Q, _K or _V; -1 for a fault of the problem or
 * the box as a whole) and attn_tma_strerror names the rule.
 */
#ifndef ROOFTUNE_ATTN_TMA_H
#define ROOFTUNE_ATTN_TMA_H

#if defined(__cplusplus)
#define ATTN_TMA_ALIGNAS(n) alignas(n)
#else
#define ATTN_TMA_ALIGNAS(n) _Alignas(n)
#endif

/* One CUtensorMap: 128 opaque bytes, 64-byte aligned (cuTensorMapEncodeTiled's requirement; a
 * __grid_constant__ kernel parameter of this type keeps it). */
typedef struct attn_tma_map {
  ATTN_TMA_ALIGNAS(64) unsigned long long opaque[16]; /* the encoded CUtensorMap */
} attn_tma_map;

/* The first kernel argument of a TMA attention template (passed by value, __grid_constant__). */
typedef struct attn_tma_maps {
  attn_tma_map q; /* Q  [B, SQ, HQ, D] */
  attn_tma_map k; /* K  [B, SKV, HKV, D] */
  attn_tma_map v; /* V  [B, SKV, HKV, D] */
} attn_tma_maps;

/* cuda.h's enum values (CUtensorMapDataType, ...Interleave, ...Swizzle, ...L2promotion,
 * ...FloatOOBfill) that the plan uses. */
#define ATTN_TMA_DTYPE_FLOAT16     6   /* CU_TENSOR_MAP_DATA_TYPE_FLOAT16 */
#define ATTN_TMA_DTYPE_BFLOAT16    9   /* CU_TENSOR_MAP_DATA_TYPE_BFLOAT16 */
#define ATTN_TMA_INTERLEAVE_NONE   0   /* CU_TENSOR_MAP_INTERLEAVE_NONE */
#define ATTN_TMA_SWIZZLE_128B      3   /* CU_TENSOR_MAP_SWIZZLE_128B */
#define ATTN_TMA_L2_PROMOTION_256B 3   /* CU_TENSOR_MAP_L2_PROMOTION_L2_256B */
#define ATTN_TMA_OOB_FILL_ZERO     0   /* CU_TENSOR_MAP_FLOAT_OOB_FILL_NONE: zeros */
#define ATTN_TMA_RANK              4   /* (D, heads, tokens, batch) */
#define ATTN_TMA_SWIZZLE_BYTES     128 /* the span of the 128-byte swizzle */

/* Operands, in the order of attn_tma_maps. */
enum { ATTN_TMA_Q = 0, ATTN_TMA_K = 1, ATTN_TMA_V = 2, ATTN_TMA_OPERANDS = 3 };

/* Status codes of attn_tma_plan. */
enum {
  ATTN_TMA_OK = 0,
  ATTN_TMA_ERR_DTYPE = 1,
  ATTN_TMA_ERR_SHAPE = 2,
  ATTN_TMA_ERR_ALIGN = 3,
  ATTN_TMA_ERR_STRIDE = 4,
  ATTN_TMA_ERR_BOX = 5
};

static inline const char *attn_tma_strerror(int rc) {
  switch (rc) {
    case ATTN_TMA_OK: return "ok";
    case ATTN_TMA_ERR_DTYPE:
      return "TMA attention templates take f16 or bf16 inputs (2-byte elements)";
    case ATTN_TMA_ERR_SHAPE:
      return "TMA needs every dimension (B, HQ, HKV, SQ, SKV, D) in 1..2^32 and HQ a multiple of "
             "HKV";
    case ATTN_TMA_ERR_ALIGN: return "TMA needs the operand's address to be 16-byte aligned";
    case ATTN_TMA_ERR_STRIDE:
      return "TMA needs every byte stride to be a multiple of 16 and below 2^40";
    case ATTN_TMA_ERR_BOX:
      return "TMA box outside the limits: dims 1..256, inner box a multiple of 16 bytes and at "
             "most the "
             "128-byte swizzle span, D a multiple of the inner box";
    default: return "unknown TMA plan status";
  }
}

#if !defined(__CUDACC_RTC__)
#include <stdint.h>

/* The problem as the maps see it. */
typedef struct attn_tma_problem {
  long long B, HQ, HKV, SQ, SKV, D; /* attn_abi.h's dimensions */
  int elem_bytes;                   /* 2 */
  int bf16;                         /* 1: bf16, 0: f16 */
  unsigned long long q, k, v;       /* device addresses of Q, K, V */
} attn_tma_problem;

/* The configuration's box sizes (its derived TMA_INNER, TMA_ROWS_Q, TMA_ROWS_KV). */
typedef struct attn_tma_box {
  long long inner;   /* TMA_INNER: head-dim elements per box */
  long long rows_q;  /* TMA_ROWS_Q: query rows per Q box */
  long long rows_kv; /* TMA_ROWS_KV: key rows per K or V box */
} attn_tma_box;

/* Exactly the arguments of cuTensorMapEncodeTiled for one operand, in its order (uint64_t and
 * uint32_t are cuda.h's cuuint64_t and cuuint32_t). */
typedef struct attn_tma_params {
  int type;                 /* tensorDataType: ATTN_TMA_DTYPE_FLOAT16 or _BFLOAT16 */
  uint32_t rank;            /* tensorRank: 4 */
  uint64_t base;            /* globalAddress */
  uint64_t dims[4];         /* globalDim: D, heads, tokens, B */
  uint64_t strides[3];      /* globalStrides: bytes between heads, tokens, sequences */
  uint32_t box[4];          /* boxDim: inner, 1, rows, 1 */
  uint32_t elem_strides[4]; /* elementStrides: all 1 */
  int interleave;           /* ATTN_TMA_INTERLEAVE_NONE */
  int swizzle;              /* ATTN_TMA_SWIZZLE_128B */
  int l2;                   /* ATTN_TMA_L2_PROMOTION_256B */
  int oob;                  /* ATTN_TMA_OOB_FILL_ZERO */
} attn_tma_params;

static inline int attn_tma_operand(attn_tma_params *o, int bf16, int es, unsigned long long base,
                                   long long D, long long heads, long long tokens, long long B,
                                   long long inner, long long rows) {
  const unsigned long long lim = 1ull << 40, s0 = (unsigned long long)(D * es);
  if (base % 16 != 0) return ATTN_TMA_ERR_ALIGN;
  /* each stride below 2^40, tested before the next product so none can wrap */
  if (s0 % 16 || s0 >= lim || (unsigned long long)heads >= lim / s0) return ATTN_TMA_ERR_STRIDE;
  const unsigned long long s1 = s0 * (unsigned long long)heads;
  if ((unsigned long long)tokens >= lim / s1) return ATTN_TMA_ERR_STRIDE;
  const unsigned long long s2 = s1 * (unsigned long long)tokens;
  if (s1 % 16 || s2 % 16) return ATTN_TMA_ERR_STRIDE;
  o->type = bf16 ? ATTN_TMA_DTYPE_BFLOAT16 : ATTN_TMA_DTYPE_FLOAT16;
  o->rank = ATTN_TMA_RANK;
  o->base = base;
  o->dims[0] = (uint64_t)D;
  o->dims[1] = (uint64_t)heads;
  o->dims[2] = (uint64_t)tokens;
  o->dims[3] = (uint64_t)B;
  o->strides[0] = s0;
  o->strides[1] = s1;
  o->strides[2] = s2;
  o->box[0] = (uint32_t)inner;
  o->box[1] = 1;
  o->box[2] = (uint32_t)rows;
  o->box[3] = 1;
  for (int i = 0; i < 4; i++) o->elem_strides[i] = 1;
  o->interleave = ATTN_TMA_INTERLEAVE_NONE;
  o->swizzle = ATTN_TMA_SWIZZLE_128B;
  o->l2 = ATTN_TMA_L2_PROMOTION_256B;
  o->oob = ATTN_TMA_OOB_FILL_ZERO;
  return ATTN_TMA_OK;
}

/* The encode arguments of Q's, K's and V's maps (out[ATTN_TMA_Q], [_K], [_V]) for problem p
 * with box sizes bx.  Returns ATTN_TMA_OK, or a status above with *bad (may be NULL) the
 * operand at fault, -1 when the problem or the box as a whole is.  Pure: no driver, no
 * allocation; out is written only on success. */
static inline int attn_tma_plan(const attn_tma_problem *p, const attn_tma_box *bx,
                                attn_tma_params out[ATTN_TMA_OPERANDS], int *bad) {
  const long long lim = 1ll << 32;
  const long long dims[6] = {p->B, p->HQ, p->HKV, p->SQ, p->SKV, p->D};
  attn_tma_params tmp[ATTN_TMA_OPERANDS];
  int rc;
  if (bad) *bad = -1;
  if (p->elem_bytes != 2) return ATTN_TMA_ERR_DTYPE;
  for (int i = 0; i < 6; i++)
    if (dims[i] < 1 || dims[i] > lim) return ATTN_TMA_ERR_SHAPE;
  if (p->HQ % p->HKV != 0) return ATTN_TMA_ERR_SHAPE;
  if (bx->inner < 1 || bx->inner > 256 || bx->rows_q < 1 || bx->rows_q > 256 || bx->rows_kv < 1 ||
      bx->rows_kv > 256 || (bx->inner * p->elem_bytes) % 16 != 0 ||
      bx->inner * p->elem_bytes > ATTN_TMA_SWIZZLE_BYTES || p->D % bx->inner != 0)
    return ATTN_TMA_ERR_BOX;
  const unsigned long long base[3] = {p->q, p->k, p->v};
  for (int o = 0; o < ATTN_TMA_OPERANDS; o++) {
    const int isq = o == ATTN_TMA_Q;
    rc = attn_tma_operand(&tmp[o], p->bf16, p->elem_bytes, base[o], p->D, isq ? p->HQ : p->HKV,
                          isq ? p->SQ : p->SKV, p->B, bx->inner, isq ? bx->rows_q : bx->rows_kv);
    if (rc) {
      if (bad) *bad = o;
      return rc;
    }
  }
  for (int o = 0; o < ATTN_TMA_OPERANDS; o++) out[o] = tmp[o];
  return ATTN_TMA_OK;
}
#endif /* !__CUDACC_RTC__ */

#endif
