/* rooftune.h — use what rooftune tuned: look up the best kernel for a problem in a tuning
 * database, load its compiled code into your CUDA context and launch it on your stream.
 *
 * `rooftune tune` leaves a database with the winning kernel for each problem (family, shape,
 * dtype, layout) and device, with its cubin and launch geometry, and says how each time was
 * obtained (measured on a GPU, predicted by the model, or replayed from a file).  This library
 * reads that database; it needs neither NVRTC nor the rooftune command.  The CUDA driver is
 * loaded at run time, so a program linked with it starts on machines without a GPU.
 *
 *     rooftune_db *db;
 *     if (rooftune_open("tuned.db", &db) == ROOFTUNE_OK) {
 *       rooftune_gemm_info info;
 *       rooftune_gemm(db, "bf16", "nn", M, N, K, dA, dB, dC, stream, &info); // tuned or cuBLASLt
 *       rooftune_close(db);
 *     }
 *
 * Lookups.  An exact match has the same family, dtype, layout and shape.  Otherwise the nearest
 * tuned shape is the one with the smallest log-distance
 *     sqrt(sum_i (ln a_i - ln b_i)^2)    over the dimensions (M, N, K, batch; a missing batch = 1)
 * so halving one dimension costs the same at any size; ties go to the older entry.  Among
 * several winners for one shape (templates, devices), one without a provenance mismatch wins,
 * then a measured time over a replayed one over a predicted one, then the fastest.
 * Provenance is never dropped silently: a winner made on another GPU (when the query names a
 * device), with another CUDA toolkit, or by a template version older than one in the database is
 * refused unless the query allows mismatches, and then the match says which (ROOFTUNE_MISMATCH_*).
 *
 * Threads.  A rooftune_db may be shared by threads: lookups take a mutex and are answered from
 * an in-memory index built on the first lookup (and from a cache of earlier answers), so a
 * repeated lookup costs a few microseconds.  rooftune_reload() rereads the file.
 *
 * Errors.  Every function returns ROOFTUNE_OK (0) or a ROOFTUNE_ERR_* code;
 * rooftune_strerror() gives the code's meaning and rooftune_last_error() the calling thread's
 * last detailed message (naming the file or argument).
 */
#ifndef ROOFTUNE_H
#define ROOFTUNE_H

#include <stddef.h>

#ifdef __cplusplus
extern "C" {
#endif

#define ROOFTUNE_API_VERSION 1

/* Status codes (stable numbers). */
enum {
  ROOFTUNE_OK = 0,
  ROOFTUNE_ERR_INVALID = 1,     /* a bad argument (shape, dtype, NULL pointer) */
  ROOFTUNE_ERR_NOMEM = 2,       /* out of memory */
  ROOFTUNE_ERR_IO = 3,          /* the database file is missing or unreadable */
  ROOFTUNE_ERR_NOT_FOUND = 4,   /* nothing tuned fits, or the winner has no cubin */
  ROOFTUNE_ERR_DB = 5,          /* the database is damaged or locked */
  ROOFTUNE_ERR_DB_FOREIGN = 6,  /* the file is not a rooftune database */
  ROOFTUNE_ERR_DB_VERSION = 7,  /* the database's schema is newer (or older) than this library */
  ROOFTUNE_ERR_NO_DRIVER = 8,   /* no CUDA driver on this machine */
  ROOFTUNE_ERR_NO_GPU = 9,      /* a driver but no GPU, or no current CUDA context */
  ROOFTUNE_ERR_CUDA = 10,       /* a CUDA driver call failed */
  ROOFTUNE_ERR_CUBLAS = 11,     /* a cuBLASLt call failed */
  ROOFTUNE_ERR_LAUNCH = 12,     /* the kernel launch failed */
  ROOFTUNE_ERR_UNSUPPORTED = 13, /* e.g. a winner whose argument layout rooftune_gemm cannot fill */
  ROOFTUNE_ERR_INTERNAL = 14
};

/* The meaning of a status code ("the file is not a rooftune database"). */
const char *rooftune_strerror(int code);
/* The calling thread's last detailed error message, "" when none. */
const char *rooftune_last_error(void);
/* "0.1.0" */
const char *rooftune_version(void);

typedef struct rooftune_db rooftune_db;         /* an open database (thread-safe) */
typedef struct rooftune_kernel rooftune_kernel; /* a winner loaded into one CUDA context */

/* Opens a tuning database read-only. */
int rooftune_open(const char *path, rooftune_db **out);
/* Closes it; kernels loaded from it stay valid until rooftune_kernel_free. */
void rooftune_close(rooftune_db *db);
/* Drops the in-memory index; the next lookup rereads the file (after another tune). */
int rooftune_reload(rooftune_db *db);

/* --- lookup --------------------------------------------------------------------------- */

enum { ROOFTUNE_MATCH_NONE = 0, ROOFTUNE_MATCH_EXACT = 1, ROOFTUNE_MATCH_NEAREST = 2 };

/* Query flags. */
enum {
  ROOFTUNE_EXACT_ONLY = 1,     /* no nearest-shape answers */
  ROOFTUNE_ALLOW_MISMATCH = 2, /* serve another GPU's, toolkit's or template version's winner,
                                  with its mismatch bits set, rather than nothing */
};

/* Mismatch bits of a match. */
enum {
  ROOFTUNE_MISMATCH_DEVICE = 1,   /* made on a GPU other than the query's device */
  ROOFTUNE_MISMATCH_TOOLKIT = 2,  /* made with another CUDA toolkit than this library's */
  ROOFTUNE_MISMATCH_TEMPLATE = 4, /* the database holds a newer version of its template */
};

typedef struct rooftune_query {
  const char *family; /* "gemm" */
  const char *shape;  /* "4096x4096x4096", batch as "8@4096x4096x4096" */
  const char *dtype;  /* "f32", "f16", "bf16" */
  const char *layout; /* "nn", "nt"; NULL or "" for the family's default */
  const char *device; /* a GPU name or part of one ("H200", "model:h200"); NULL = any device */
  int flags;          /* ROOFTUNE_EXACT_ONLY | ROOFTUNE_ALLOW_MISMATCH */
} rooftune_query;

typedef struct rooftune_match {
  int match;               /* ROOFTUNE_MATCH_NONE, _EXACT or _NEAREST */
  unsigned mismatch;       /* ROOFTUNE_MISMATCH_* bits (0 = provenance agrees) */
  double distance;         /* log-distance to the tuned shape (0 when exact) */
  char family[16];         /* the tuned problem */
  char shape[64];
  char dtype[8];
  char layout[8];
  char template_name[64];  /* "gemm_mma", or "cublaslt" for a library winner */
  char template_hash[72];  /* the template source's hash ("" for a library) */
  char config[768];        /* "BLOCK_M=128,BLOCK_N=64,..." or the algorithm's identity */
  char device[128];        /* the GPU it was tuned on, or "model:h200" / "replay:FILE" */
  int cc_major, cc_minor;  /* its compute capability (0 for pseudo devices) */
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
  unsigned smem;           /* dynamic shared memory, bytes */
  char vars[1024];         /* parameter and derived values "BLOCK_M=128,...,THREADS=256" */
  long long id;            /* the winner's row (for rooftune_kernel_load) */
} rooftune_match;

/* Finds the winner for a query.  ROOFTUNE_OK with m->match NONE when nothing fits. */
int rooftune_lookup(rooftune_db *db, const rooftune_query *q, rooftune_match *m);

/* --- load and launch ------------------------------------------------------------------ */

/* Loads the match's cubin into the calling thread's current CUDA context. */
int rooftune_kernel_load(rooftune_db *db, const rooftune_match *m, rooftune_kernel **out);
/* Launches with the match's geometry (geometry_ok must be 1) on stream (a CUstream or
 * cudaStream_t; NULL = the default stream); args as for cuLaunchKernel.  For GEMM the arguments
 * are (A, B, C, int M, int N, int K) as device pointers, except for TMA templates (vars holds
 * TMA_BOX_K, e.g. gemm_wgmma): there A and B are CUtensorMap descriptors (passed by value, so
 * args points at the CUtensorMap), built over your pointers with cuTensorMapEncodeTiled as
 * kernels/gemm.h describes, boxes TMA_BOX_M/N/K from vars; rooftune_gemm does this for you. */
int rooftune_kernel_launch(rooftune_kernel *k, void *stream, void **args);
/* Launches with explicit geometry. */
int rooftune_kernel_launch_geometry(rooftune_kernel *k, const unsigned grid[3],
                                    const unsigned block[3], unsigned smem, void *stream,
                                    void **args);
/* Unloads the module. */
void rooftune_kernel_free(rooftune_kernel *k);

/* --- GEMM in one call ------------------------------------------------------------------ */

enum {
  ROOFTUNE_PATH_TUNED = 1,    /* the tuned kernel for this exact shape */
  ROOFTUNE_PATH_NEAREST = 2,  /* the kernel tuned for the nearest shape */
  ROOFTUNE_PATH_CUBLASLT = 3, /* cuBLASLt's own heuristic choice (nothing usable was tuned) */
};

typedef struct rooftune_gemm_info {
  int path;                /* ROOFTUNE_PATH_* */
  char template_name[64];  /* what ran ("cublaslt" for the fallback) */
  char config[768];        /* its configuration ("" for the fallback) */
  char reason[256];        /* why the fallback was taken, else "" */
} rooftune_gemm_info;

/* C = A * B on the caller's stream in the current CUDA context, with fp32 accumulation and an
 * fp32 output.  Row-major: A is MxK, C is MxN; B is KxN for layout "nn" (NULL) and NxK for
 * "nt".  A and B hold dtype ("f32", "f16", "bf16") elements; all three are device pointers.
 * Uses the tuned kernel for (M,N,K) on this GPU when the database (may be NULL) has one it can
 * launch, else cuBLASLt.  info (may be NULL) says which ran and why.
 * TMA winners (gemm_wgmma on sm_90): the two tensor maps are encoded on every call from A, B,
 * M, N, K, the layout and the winner's TMA box sizes (host-side, about a microsecond; nothing
 * is cached, so new pointers or shapes are always right).  TMA needs A and B 16-byte aligned
 * and K*element_bytes (for "nn" also N*element_bytes) a multiple of 16; otherwise this call
 * runs cuBLASLt and info->reason says which requirement failed.  The other templates read A
 * and B in 16-byte vectors and write C in pairs: their winners run only on 16-byte-aligned A, B
 * and C (any allocation is; a view that starts inside one may not), else cuBLASLt runs. */
int rooftune_gemm(rooftune_db *db, const char *dtype, const char *layout, long long M,
                  long long N, long long K, const void *A, const void *B, float *C, void *stream,
                  rooftune_gemm_info *info);

/* rooftune_gemm over `batch` independent products C[b] = A[b] * B[b] (1..4096), stored one
 * after another: A[b] starts b*M*K elements after A, B[b] b*K*N after B, C[b] b*M*N after C.
 * The tuned shape is "batch@MxNxK" (`rooftune tune gemm --shape 8@512x512x64`); the nearest
 * one counts the batch as a dimension.  cuBLASLt's fallback runs it as a strided batch. */
int rooftune_gemm_batched(rooftune_db *db, const char *dtype, const char *layout, long long batch,
                          long long M, long long N, long long K, const void *A, const void *B,
                          float *C, void *stream, rooftune_gemm_info *info);

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
  const char *b_dtype;     /* B's type when it is not A's (fp8: "e4m3", "e5m2"); NULL: A's */
  const char *out_dtype;   /* "f32" (NULL), "f16" or "bf16" */
  float alpha;             /* the product's scale (1 in ROOFTUNE_GEMM_OPTIONS_INIT) */
  float beta;              /* C's scale; used when C is given */
  const void *C;           /* NULL: no beta * C */
  const void *bias;        /* NULL: no bias */
  const char *activation;  /* NULL or "none", "relu", "gelu" (tanh form), "silu" */
  const void *residual;    /* NULL: no residual */
  const float *scale_a;    /* fp8: A's per-tensor scale (device), NULL for 1 */
  const float *scale_b;    /* fp8: B's per-tensor scale (device), NULL for 1 */
  int vector_scales;       /* fp8: 1 when scale_a holds M floats (per row of A) and scale_b N
                              (per column of B), the tuned problem's +vscale */
} rooftune_gemm_options;

#define ROOFTUNE_GEMM_OPTIONS_INIT {NULL, NULL, 1.0f, 0.0f, NULL, NULL, NULL, NULL, NULL, NULL, 0}

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
