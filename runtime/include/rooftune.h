/* rooftune.h — use what rooftune tuned: look up the best kernel for a problem in a tuning
 * database, load its compiled code into your CUDA context and launch it on your stream.
 *
 * `rooftune tune` leaves a database with the winning kernel for each problem (family, shape,
 * dtype, layout) and device, with its cubin, its launch geometry and what serving another
 * shape needs (its constraints and its shape-dependent derived values), and says how each time
 * was obtained (measured on a GPU, predicted by the model, or replayed from a file).  This
 * library reads that database and nothing else: it needs neither NVRTC nor the template
 * manifests nor the rooftune command.  It links cuBLASLt and SQLite; the CUDA driver and cuDNN
 * (attention's fallback) are loaded at run time, so a program linked with it starts on machines
 * without a GPU or cuDNN.
 *
 *     rooftune_db *db;
 *     if (rooftune_open("tuned.db", &db) == ROOFTUNE_OK) {
 *       rooftune_info info;
 *       rooftune_gemm(db, "bf16", "nn", M, N, K, dA, dB, dC, stream, &info); // tuned or cuBLASLt
 *       rooftune_close(db);
 *     }
 *
 * Serving rules.  A lookup considers the winners of the query's family, dtype and layout whose
 * provenance agrees (below), ranked by: tuned for this very shape first, then the distance of
 * the tuned shape to the queried one, then agreeing provenance, then a measured time over a
 * replayed one over a predicted one, then the fastest, then the oldest.  It walks that ranking
 * and serves the first winner that ADMITS the queried shape, and says by which rule:
 *   1. ROOFTUNE_RULE_EXACT    a winner tuned for this shape;
 *   2. ROOFTUNE_RULE_NEAREST  the best-ranked winner of the nearest tuned shape, when it admits
 *                             the shape and lies within the distance cap;
 *   3. ROOFTUNE_RULE_NEXT     a better-ranked winner did not admit the shape (a constraint of
 *                             its kernel fails for it, it has nothing to launch, or, with
 *                             ROOFTUNE_RUNNABLE, it is not verified): the next
 *                             one in the ranking that admits it, still within the cap (another
 *                             template of the same tuned shape, or a further shape);
 *   4. ROOFTUNE_RULE_LIBRARY  no tuned winner admits it within the cap: the family's vendor
 *                             library (cuBLASLt's own heuristic for gemm, cuDNN's own choice
 *                             for attention where cuDNN loads) serves the call;
 *   0. ROOFTUNE_RULE_NONE     nothing serves it (a family without a vendor library).
 * A winner admits a shape when, evaluated for that shape, every constraint of its template
 * that reads the shape holds (gemm_wgmma's K % BLOCK_K == 0, gemm_skinny's M <= 16) and its
 * launch geometry is within CUDA's limits; a winner stored before schema 4 (no constraints
 * with it) admits only its own shape.  A library winner (a tuned cuBLASLt algorithm or cuDNN
 * plan) admits any shape; the library checks it at call time.  The match lists every
 * better-ranked winner that was passed over and why (passed_over), and for rule 4 or 0 why
 * nothing tuned served (reason).
 *
 * Distance.  The log-distance sqrt(sum_i (ln a_i - ln b_i)^2) over the family's serving
 * coordinates, so halving a coordinate costs the same at any size:
 *   gemm                (BATCH, M, N, K), a missing batch = 1;
 *   attention prefill   (B*HQ, SQ, SKV) when SQ > 8;
 *   attention decode    (B*HKV, SKV) when SQ <= 8 (the grid's parallelism and the keys each
 *                       split streams: what decides the split count);
 *   other families      the dimensions of the shape in order, and the batch.
 * Problems of another kind (prefill against decode), rank or layout are never compared.  The
 * cap: query.nearest_max when > 0, else $ROOFTUNE_NEAREST_MAX, else ROOFTUNE_NEAREST_MAX_DEFAULT,
 * chosen from the loss of serving each shape of rooftune's benchmark suite with another's
 * winner (README, "Serving other shapes").
 *
 * Verification.  A winner is verified when its output was checked against its family's reference
 * on the GPU that measured it and the check passed (`rooftune tune --device cuda` checks every
 * candidate before timing it).  A winner predicted by the model (`--device model:GPU`), replayed
 * from a file or imported was never checked: its cubin may compute anything.  This library never
 * launches an unverified winner unless the caller allows it: with ROOFTUNE_RUNNABLE (what
 * rooftune_gemm and rooftune_attention ask) an unverified winner is passed over ("not verified:
 * ...", in passed_over) and the rules go on to the next verified winner or the vendor library;
 * a lookup without it still shows the winner, with verified 0 and runnable 0, and
 * rooftune_kernel_load refuses its match with ROOFTUNE_ERR_UNVERIFIED naming why.  The query flag
 * ROOFTUNE_ALLOW_UNVERIFIED serves and loads such winners anyway, and rooftune_set_flags() asks
 * the same of the one-call functions.  A winner stored before schema 7 is verified when its row
 * records a measured, successful time with a reference check's error (db/schema.h).
 *
 * Provenance is never dropped silently: a winner made on another GPU (when the query names a
 * device), with another CUDA toolkit (query.toolkit, by default this library's: the CUDA
 * version it was built with and the cuBLASLt it runs with), or by a template version older
 * than one in the database is refused unless the query allows mismatches, and then the match
 * says which (ROOFTUNE_MISMATCH_*).
 *
 * Threads.  A rooftune_db may be shared by threads: lookups take a mutex and are answered from
 * an in-memory index built on the first lookup (and from a cache of earlier answers): a
 * repeated lookup costs about a microsecond, a new shape tens of microseconds (bench/bench_db).
 * rooftune_reload() rereads the file.
 *
 * Errors.  Every function returns ROOFTUNE_OK (0) or a ROOFTUNE_ERR_* code;
 * rooftune_strerror() gives the code's meaning, rooftune_status_name() its name, and
 * rooftune_last_error() the calling thread's last detailed message (naming the file or
 * argument).
 *
 * ABI.  The structs below end in reserved room: zero them before use (= {0}, memset, or
 * designated initializers, which also keep -Wextra quiet as fields are added), and
 * fields added in later 0.x versions come out of that room, so their size and the offsets of
 * the fields here stay the same.  rooftune_version_number() is the library's version at run
 * time, ROOFTUNE_VERSION_NUMBER the header's; rooftune_struct_size() the library's size of a
 * struct, for bindings in other languages to check their layouts against.
 */
#ifndef ROOFTUNE_H
#define ROOFTUNE_H

#include <stddef.h>

#ifdef __cplusplus
extern "C" {
#endif

#define ROOFTUNE_VERSION_MAJOR 0
#define ROOFTUNE_VERSION_MINOR 3
#define ROOFTUNE_VERSION_PATCH 0
#define ROOFTUNE_VERSION_NUMBER \
  (ROOFTUNE_VERSION_MAJOR * 10000 + ROOFTUNE_VERSION_MINOR * 100 + ROOFTUNE_VERSION_PATCH)
/* The public API's version: changes when a declaration here does. */
#define ROOFTUNE_API_VERSION 3

/* The default distance cap of rules 2 and 3 (see above). */
#define ROOFTUNE_NEAREST_MAX_DEFAULT 1.25

/* Status codes: X(NAME, number, meaning).  The enum, rooftune_strerror() and
 * rooftune_status_name() come from this one table; numbers are stable. */
#define ROOFTUNE_STATUS_TABLE(X)                                          \
  X(OK, 0, "success")                                                     \
  X(ERR_INVALID, 1, "invalid argument")                                   \
  X(ERR_NOMEM, 2, "out of memory")                                        \
  X(ERR_IO, 3, "the database file is missing or unreadable")              \
  X(ERR_NOT_FOUND, 4, "nothing tuned fits the query")                     \
  X(ERR_DB, 5, "the database is damaged or locked")                       \
  X(ERR_DB_FOREIGN, 6, "the file is not a rooftune database")             \
  X(ERR_DB_VERSION, 7, "the database schema does not match this library") \
  X(ERR_NO_DRIVER, 8, "no CUDA driver on this machine")                   \
  X(ERR_NO_GPU, 9, "no CUDA GPU or no current CUDA context")              \
  X(ERR_CUDA, 10, "a CUDA driver call failed")                            \
  X(ERR_CUBLAS, 11, "a cuBLASLt call failed")                             \
  X(ERR_LAUNCH, 12, "the kernel launch failed")                           \
  X(ERR_UNSUPPORTED, 13, "not supported")                                 \
  X(ERR_INTERNAL, 14, "internal error")                                   \
  X(ERR_UNVERIFIED, 15, "the winner was never checked against its reference")

enum {
#define ROOFTUNE_STATUS_ENUM_(name, number, meaning) ROOFTUNE_##name = number,
  ROOFTUNE_STATUS_TABLE(ROOFTUNE_STATUS_ENUM_)
#undef ROOFTUNE_STATUS_ENUM_
};

/* The meaning of a status code ("the file is not a rooftune database"); "unknown status code"
 * outside the table. */
const char *rooftune_strerror(int code);
/* Its name ("ERR_DB_FOREIGN"); "UNKNOWN" outside the table. */
const char *rooftune_status_name(int code);
/* The calling thread's last detailed error message, "" when none. */
const char *rooftune_last_error(void);
/* "0.3.0", and the same as ROOFTUNE_VERSION_NUMBER computes it (300). */
const char *rooftune_version(void);
int rooftune_version_number(void);
/* sizeof the public struct NAME ("rooftune_match", ...) in this library; 0 for another name. */
size_t rooftune_struct_size(const char *name);

typedef struct rooftune_db rooftune_db;         /* an open database (thread-safe) */
typedef struct rooftune_kernel rooftune_kernel; /* a winner loaded into one CUDA context */

/* Opens a tuning database read-only. */
int rooftune_open(const char *path, rooftune_db **out);
/* Closes it; kernels loaded from it stay valid until rooftune_kernel_free. */
void rooftune_close(rooftune_db *db);
/* Drops the in-memory index; the next lookup rereads the file (after another tune). */
int rooftune_reload(rooftune_db *db);

/* --- lookup --------------------------------------------------------------------------- */

/* How the served winner's shape relates to the queried one. */
enum { ROOFTUNE_MATCH_NONE = 0, ROOFTUNE_MATCH_EXACT = 1, ROOFTUNE_MATCH_NEAREST = 2 };

/* Which serving rule answered (see above). */
enum {
  ROOFTUNE_RULE_NONE = 0,
  ROOFTUNE_RULE_EXACT = 1,
  ROOFTUNE_RULE_NEAREST = 2,
  ROOFTUNE_RULE_NEXT = 3,
  ROOFTUNE_RULE_LIBRARY = 4
};

/* Query flags. */
enum {
  ROOFTUNE_EXACT_ONLY = 1,       /* no winner tuned for another shape */
  ROOFTUNE_ALLOW_MISMATCH = 2,   /* serve another GPU's, toolkit's or template version's winner,
                                  with its mismatch bits set, rather than nothing */
  ROOFTUNE_RUNNABLE = 4,         /* only winners this library can launch (a cubin, or a library
                                  algorithm) and that are verified (see above): what
                                  rooftune_gemm and rooftune_attention ask */
  ROOFTUNE_ALLOW_UNVERIFIED = 8, /* since 0.3: serve and launch winners no reference check passed
                                    for (predicted, replayed, imported) as if they were verified */
};

/* Mismatch bits of a match. */
enum {
  ROOFTUNE_MISMATCH_DEVICE = 1,   /* made on a GPU other than the query's device */
  ROOFTUNE_MISMATCH_TOOLKIT = 2,  /* made with another CUDA toolkit than the query's */
  ROOFTUNE_MISMATCH_TEMPLATE = 4, /* the database holds a newer version of its template */
};

typedef struct rooftune_query {
  const char *family;  /* "gemm", "attention" */
  const char *shape;   /* "4096x4096x4096", batch as "8@4096x4096x4096"; attention as
                          rooftune_attention_shape() writes it */
  const char *dtype;   /* "f32", "f16", "bf16" */
  const char *layout;  /* "nn", "nt"; NULL or "" for the family's default */
  const char *device;  /* a GPU name or part of one ("H200", "model:h200"); NULL = any device */
  int flags;           /* ROOFTUNE_EXACT_ONLY | ROOFTUNE_ALLOW_MISMATCH | ROOFTUNE_RUNNABLE |
                          ROOFTUNE_ALLOW_UNVERIFIED */
  double nearest_max;  /* the distance cap; 0 = $ROOFTUNE_NEAREST_MAX, else the default;
                          negative, NaN or infinite: ROOFTUNE_ERR_INVALID */
  const char *toolkit; /* the toolkit winners must be made with ("cuda 13.0, nvrtc 13.0,
                          cublaslt 130100"); NULL = this library's */
  void *reserved[8];   /* zero */
} rooftune_query;

typedef struct rooftune_match {
  int match;         /* ROOFTUNE_MATCH_NONE, _EXACT or _NEAREST */
  unsigned mismatch; /* ROOFTUNE_MISMATCH_* bits (0 = provenance agrees) */
  double distance;   /* log-distance to the tuned shape (0 when exact) */
  char family[16];   /* the tuned problem */
  char shape[64];
  char dtype[8];
  char layout[8];
  char template_name[64]; /* "gemm_mma", or "cublaslt" for a library winner */
  char template_hash[72]; /* the template source's hash ("" for a library) */
  char config[768];       /* "BLOCK_M=128,BLOCK_N=64,..." or the algorithm's identity */
  char device[128];       /* the GPU it was tuned on, or "model:h200" / "replay:FILE" */
  int cc_major, cc_minor; /* its compute capability (0 for pseudo devices) */
  int sm_count;
  char toolkit[96];        /* "cuda 13.0, nvrtc 13.0, cublaslt 130100" */
  char timing[12];         /* "measured", "predicted" or "replayed" */
  double time_ms;          /* the tuned shape's median time, as timing says */
  double spread;           /* (p90-p10)/median of the repetitions */
  char entry[128];         /* kernel name in the cubin; "" for a library winner */
  char arch[16];           /* "sm_90a" */
  size_t cubin_size;       /* 0 when the winner has no cubin */
  char library_algo[1024]; /* cuBLASLt algorithm identity for a library winner, else "" */
  int geometry_ok;         /* 1 when grid/block/smem below hold for the QUERIED shape */
  unsigned grid[3];        /* launch geometry */
  unsigned block[3];
  unsigned smem;   /* dynamic shared memory, bytes */
  char vars[1024]; /* parameter and shape-free derived values "BLOCK_M=128,...,THREADS=256" */
  long long id;    /* the winner's row (for rooftune_kernel_load) */
  /* since 0.2 */
  int rule;               /* ROOFTUNE_RULE_*: which serving rule answered */
  int runnable;           /* 1 when this library can launch it (a cubin or a library algorithm)
                              and will (verified, or the query has ROOFTUNE_ALLOW_UNVERIFIED) */
  double nearest_max;     /* the distance cap the lookup applied */
  int passed_count;       /* better-ranked winners passed over */
  char passed_over[2048]; /* one line each: "gemm_wgmma 4096x4096x4096 (distance 0.000244):
                              constraint K % BLOCK_K == 0 fails"; "... and N more" when full */
  char reason[512];       /* rules 4 and 0: why no tuned winner serves; else "" */
  char library[16];       /* rule 4: the vendor library ("cublaslt", "cudnn"); else "" */
  /* since 0.3 */
  int verified; /* 1 when its output passed the reference check on the GPU that
                              measured it; 0: never checked (predicted, replayed, imported) */
  /* since 0.4 */
  char checked_on[4];          /* where its output was checked against the reference and passed:
                              "gpu" (verified), "sim" (computed on the CPU by the sim device:
                              checked, not verified, served only as unverified ones are), "" */
  unsigned char reserved[504]; /* zero */
} rooftune_match;

/* Serves a query by the rules above.  ROOFTUNE_OK with m->match NONE when no tuned winner
 * serves it (m->rule then says whether the vendor library would). */
int rooftune_lookup(rooftune_db *db, const rooftune_query *q, rooftune_match *m);

/* --- load and launch ------------------------------------------------------------------ */

/* Loads the match's cubin into the calling thread's current CUDA context.  A match of an
 * unverified winner (m->verified 0) that was not served with ROOFTUNE_ALLOW_UNVERIFIED (m->runnable
 * 0) is refused with ROOFTUNE_ERR_UNVERIFIED, the reason in rooftune_last_error(). */
int rooftune_kernel_load(rooftune_db *db, const rooftune_match *m, rooftune_kernel **out);
/* Launches with the match's geometry (geometry_ok must be 1) on stream (a CUstream or
 * cudaStream_t; NULL = the default stream); args as for cuLaunchKernel.  For GEMM the arguments
 * are (A, B, C, int M, int N, int K) as device pointers, except for TMA templates (vars holds
 * TMA_BOX_K, e.g. gemm_wgmma): there A and B are CUtensorMap descriptors (passed by value, so
 * args points at the CUtensorMap), built over your pointers with cuTensorMapEncodeTiled as
 * kernels/gemm.h describes, boxes TMA_BOX_M/N/K from vars; rooftune_gemm does this for you.
 * Attention kernels take one attn_args struct (templates/attention/attn_abi.h), TMA ones the
 * tensor maps first; rooftune_attention does this for you. */
int rooftune_kernel_launch(rooftune_kernel *k, void *stream, void **args);
/* Launches with explicit geometry. */
int rooftune_kernel_launch_geometry(rooftune_kernel *k, const unsigned grid[3],
                                    const unsigned block[3], unsigned smem, void *stream,
                                    void **args);
/* Unloads the module. */
void rooftune_kernel_free(rooftune_kernel *k);

/* --- one call: GEMM and attention -------------------------------------------------------- */

/* What ran, as a call's info says: the rule that served it (ROOFTUNE_PATH_* = ROOFTUNE_RULE_*). */
enum {
  ROOFTUNE_PATH_TUNED = ROOFTUNE_RULE_EXACT,     /* the kernel tuned for this exact shape */
  ROOFTUNE_PATH_NEAREST = ROOFTUNE_RULE_NEAREST, /* the kernel tuned for the nearest shape */
  ROOFTUNE_PATH_NEXT = ROOFTUNE_RULE_NEXT, /* a further winner: better ones did not admit it */
  ROOFTUNE_PATH_LIBRARY = ROOFTUNE_RULE_LIBRARY, /* the vendor library's own choice */
  ROOFTUNE_PATH_CUBLASLT = ROOFTUNE_RULE_LIBRARY,
};

typedef struct rooftune_info {
  int path;               /* ROOFTUNE_PATH_* */
  char template_name[64]; /* what ran: the template, or "cublaslt" / "cudnn" */
  char config[768];       /* its configuration ("" for the library's own choice) */
  char reason[256];       /* why the library ran, else "" */
  /* since 0.2 */
  char shape[64];         /* the tuned shape that served ("" for the library's own choice) */
  double distance;        /* its distance to the call's shape */
  int passed_count;       /* better-ranked winners passed over */
  char passed_over[1024]; /* why, one line each (rooftune_match.passed_over) */
  /* since 0.3 */
  int verified;                /* 1 when a tuned winner that passed its reference check ran; 0 when
                              the vendor library's own choice ran, or an unverified winner the
                              caller allowed (rooftune_set_flags) */
  unsigned char reserved[252]; /* zero */
} rooftune_info;
typedef rooftune_info rooftune_gemm_info;

/* Since 0.3: query flags every later one-call function on db (rooftune_gemm*, rooftune_attention)
 * adds to its own.  Only ROOFTUNE_ALLOW_UNVERIFIED is taken: those calls then launch unverified
 * winners too (a kernel predicted by the model, never checked against the reference: for trying
 * one out, never for results that matter), and info->verified says when one ran.  0 restores
 * the default.  ROOFTUNE_ERR_INVALID for any other bit.  Set it before sharing db with threads. */
int rooftune_set_flags(rooftune_db *db, int flags);

/* C = A * B on the caller's stream in the current CUDA context, with fp32 accumulation and an
 * fp32 output.  Row-major: A is MxK, C is MxN; B is KxN for layout "nn" (NULL) and NxK for
 * "nt".  A and B hold dtype ("f32", "f16", "bf16") elements; all three are device pointers.
 * Serves (M,N,K) by the rules above with ROOFTUNE_RUNNABLE and this GPU as the device; the
 * vendor library is cuBLASLt.  info (may be NULL) says which ran and why.
 * TMA winners (gemm_wgmma on sm_90): the two tensor maps are encoded on every call from A, B,
 * M, N, K, the layout and the winner's TMA box sizes (host-side, about a microsecond; nothing
 * is cached, so new pointers or shapes are always right).  TMA needs A and B 16-byte aligned
 * and K*element_bytes (for "nn" also N*element_bytes) a multiple of 16; otherwise this call
 * runs cuBLASLt and info->reason says which requirement failed.  The other templates read A
 * and B in 16-byte vectors and write C in pairs: their winners run only on 16-byte-aligned A, B
 * and C (any allocation is; a view that starts inside one may not), else cuBLASLt runs. */
int rooftune_gemm(rooftune_db *db, const char *dtype, const char *layout, long long M, long long N,
                  long long K, const void *A, const void *B, float *C, void *stream,
                  rooftune_info *info);

/* rooftune_gemm over `batch` independent products C[b] = A[b] * B[b] (1..4096), stored one
 * after another: A[b] starts b*M*K elements after A, B[b] b*K*N after B, C[b] b*M*N after C.
 * The tuned shape is "batch@MxNxK" (`rooftune tune gemm --shape 8@512x512x64`); the distance
 * counts the batch as a coordinate.  cuBLASLt's fallback runs it as a strided batch. */
int rooftune_gemm_batched(rooftune_db *db, const char *dtype, const char *layout, long long batch,
                          long long M, long long N, long long K, const void *A, const void *B,
                          float *C, void *stream, rooftune_info *info);

/* An attention call: O = softmax(scale * Q K^T) V per query head, in the layouts of
 * templates/attention/attn_abi.h (Q and O [batch, seq_q, heads_q, head_dim]; K and V
 * [batch, seq_kv, heads_kv, head_dim], or paged [num_pages, page_size, heads_kv, head_dim]
 * read through block_table, vLLM's layout), f16 or bf16 with fp32 accumulation. */
typedef struct rooftune_attention_problem {
  const char *dtype;      /* "f16" or "bf16" */
  long long batch;        /* B sequences */
  long long heads_q;      /* HQ query heads */
  long long heads_kv;     /* HKV key/value heads (HQ % HKV == 0); 0 = heads_q */
  long long seq_q;        /* SQ queries per sequence (at most 8: a decode problem) */
  long long seq_kv;       /* SKV keys per sequence (0 = seq_q); with kv_lens the most any has */
  long long head_dim;     /* D */
  int causal;             /* 1: query i attends keys j <= i + kv_len - seq_q (bottom right) */
  int page_size;          /* 0: K and V contiguous; 16, 32 or 64: paged */
  long long num_pages;    /* paged: pages in the K and V pools */
  float scale;            /* the softmax scale; 0 = 1/sqrt(head_dim) */
  const void *q, *k, *v;  /* device pointers */
  void *o;                /* device pointer, the output */
  float *lse;             /* optional [batch, heads_q, seq_q] fp32 log-sum-exp, or NULL */
  const int *block_table; /* paged: [batch, ceil(seq_kv / page_size)] page indices */
  const int *kv_lens;     /* optional [batch] keys of each sequence (<= seq_kv), or NULL */
  void *reserved[8];      /* zero */
} rooftune_attention_problem;

/* The shape text a lookup takes for problem p ("1x32:8x1:8192x128:paged16": the family's
 * syntax, `rooftune lookup attention --shape`); ROOFTUNE_ERR_INVALID naming the bad field. */
int rooftune_attention_shape(const rooftune_attention_problem *p, char *buf, size_t size);

/* Runs attention problem p on the caller's stream in the current CUDA context.  Serves its
 * shape by the rules above (ROOFTUNE_RUNNABLE, this GPU), launches the winner with the family's
 * argument struct over p's pointers (and, for TMA winners, the tensor maps over Q, K and V,
 * encoded per call), with the split-KV scratch a split-KV winner needs, which this library
 * allocates and keeps per CUDA context and stream.  Tuned kernels need Q, K, V and O 16-byte
 * aligned.  When no tuned winner serves, cuDNN's fused attention (SDPA) runs it: cuDNN is loaded
 * at run time (libcudnn.so.9, found as the tuner finds it), the graph is built over p's layouts
 * with its scale, its paged pool and its kv_lens read on the GPU, and the graph with its plan
 * is kept per CUDA context, stream and problem (the first call of a problem pays for building
 * it, some engines compile kernels then; later calls only rebind their pointers); info->path is
 * ROOFTUNE_PATH_LIBRARY, template_name "cudnn" and info->reason why no tuned kernel ran.  A
 * tuned cuDNN plan is served by the rules like any winner.  Where cuDNN is not installed the
 * call returns ROOFTUNE_ERR_NOT_FOUND, where it cannot run the problem ROOFTUNE_ERR_UNSUPPORTED,
 * each with both reasons in rooftune_last_error() and info->reason saying why nothing tuned
 * ran. */
int rooftune_attention(rooftune_db *db, const rooftune_attention_problem *p, void *stream,
                       rooftune_info *info);

/* --- GEMM with fp8 inputs and a fused epilogue ---------------------------------------- */

/* What rooftune_gemm_ex computes beyond D = A * B (kernels/gemm.h's options; the tuned problem
 * is the shape with those options, e.g. `rooftune tune gemm --shape
 * 4096x14336x4096:nt+bias+gelu+out=bf16 --dtype bf16`):
 *     D = act(alpha * scale_a * scale_b * A*B + beta * C + bias) + residual
 * in fp32, rounded to out_dtype.  Start from ROOFTUNE_GEMM_OPTIONS_INIT (alpha 1, nothing
 * else).  C, bias and residual hold out_dtype elements (C and residual M x N per batch, bias N
 * elements shared by the batch); scale_a and scale_b are device pointers to one float each (fp8
 * inputs; NULL means 1). */
typedef struct rooftune_gemm_options {
  const char *b_dtype;    /* B's type when it is not A's (fp8: "e4m3", "e5m2"); NULL: A's */
  const char *out_dtype;  /* "f32" (NULL), "f16" or "bf16" */
  float alpha;            /* the product's scale (1 in ROOFTUNE_GEMM_OPTIONS_INIT) */
  float beta;             /* C's scale; used when C is given */
  const void *C;          /* NULL: no beta * C */
  const void *bias;       /* NULL: no bias */
  const char *activation; /* NULL or "none", "relu", "gelu" (tanh form), "silu" */
  const void *residual;   /* NULL: no residual */
  const float *scale_a;   /* fp8: A's per-tensor scale (device), NULL for 1 */
  const float *scale_b;   /* fp8: B's per-tensor scale (device), NULL for 1 */
  int vector_scales;      /* fp8: 1 when scale_a holds M floats (per row of A) and scale_b N
                              (per column of B), the tuned problem's +vscale */
} rooftune_gemm_options;

#define ROOFTUNE_GEMM_OPTIONS_INIT \
  { NULL, NULL, 1.0f, 0.0f, NULL, NULL, NULL, NULL, NULL, NULL, 0 }

/* rooftune_gemm_batched with options (opt NULL: plain, as rooftune_gemm_batched) and inputs of
 * any gemm dtype ("f32", "f16", "bf16", "e4m3", "e5m2"; fp8 needs layout "nt").  The tuned
 * kernel for the problem with these options serves the call (a winner tuned with other
 * options never does); else cuBLASLt's fused epilogue (BIAS, RELU, GELU, beta with C, a
 * residual without activation as C with beta 1), and where cuBLASLt has none (SiLU, a residual
 * after an activation or beside beta) ROOFTUNE_ERR_UNSUPPORTED with the reason in
 * rooftune_last_error(). */
int rooftune_gemm_ex(rooftune_db *db, const char *dtype, const char *layout, long long batch,
                     long long M, long long N, long long K, const void *A, const void *B, void *D,
                     const rooftune_gemm_options *opt, void *stream, rooftune_gemm_info *info);

#ifdef __cplusplus
}
#endif

#endif
