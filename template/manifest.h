/* manifest.h — a template's JSON manifest: its parameters, derived values, constraints, launch
 * geometry and cost formulas; the search space it spans for one problem on one device; and the
 * #define prefix that turns one configuration into compilable source.
 *
 * Format (every expression is a string in the language of expr.h, or a JSON integer):
 *
 *   {
 *     "name": "gemm_mma",                 C identifier, unique among templates
 *     "family": "gemm",                   kernel family (kernels/family.h)
 *     "description": "one line",          optional
 *     "source": "gemm_mma.cu",            relative to the manifest's folder; must exist
 *     "entry": "gemm_mma",                the __global__ function (extern "C"), C identifier
 *     "dtypes": ["f16", "bf16"],          any of f32 tf32 f16 bf16 f64 e4m3 e5m2 i8
 *     "archs": ["sm_80", "sm_90"],        NVRTC targets: sm_NN or sm_NNa
 *     "options": ["-use_fast_math"],      optional, extra NVRTC options
 *     "instruction": "mma",               optional: simt (default) | mma | wgmma
 *     "params": {"BLOCK_M": [64, 128], "LAYOUT_B": ["row", "col"], ...},
 *     "roles": {"BLOCK_M": "tile_m", ...}, optional, diagnose.h role names
 *     "cover": [["CLUSTER", "PERSISTENT"], ...], optional: parameter pairs that interact (the
 *                                 code differs per pair of values), which a covering set
 *                                 (template/cover.h) holds every valid value pair of
 *     "derived": {"THREADS": "WARPS_M*WARPS_N*32", ...},
 *     "constraints": ["BLOCK_M % (WARPS_M*16) == 0", ...],
 *     "launch": {"grid": [e, e, e], "block": [e, e, e], "smem": e,    smem optional (0)
 *                "work": e},      optional: blocks' worth of work the grid shares, for a
 *                                 persistent grid whose blocks loop over work units (default:
 *                                 the grid's blocks); the model device and the wave diagnosis
 *                                 count rounds of it
 *     "cost": {"flops": e, "dram_bytes": e,
 *              "executed_flops": e, optional: the arithmetic the kernel does, the padded parts
 *                                 of its tiles included (a 128-row tile over M = 1 does 128x
 *                                 the problem's FLOPs); default flops.  The model device times
 *                                 compute by it and the diagnosis names padding from it
 *              "bytes_in_flight": e, optional: DRAM bytes one block has requested and not yet
 *                                 received, for templates that stream through registers
 *                                 (gemm_skinny: THREADS*16*UNROLL*COLS); default: its shared
 *                                 memory staging, at least 16 bytes a thread.  The model
 *                                 device's memory latency hiding reads it
 *              "scratch_bytes": e} optional: bytes the kernel writes to scratch and reads back
 *                                 itself (split-K or split-KV partials), not in dram_bytes: the
 *                                 model counts them whole (they are no shared re-read that L2
 *                                 absorbs); default 0
 *   }
 *
 * Parameters: an ordered, non-empty list of integers, or of C identifiers, no repeats, at most
 * 65535 values; parameter and derived names are C identifiers that do not start with RT_.
 * Limits, each refused at load with the number found (never cut): the file at most
 * MANIFEST_FILE_MAX bytes; "source" a file name without quotes, backslashes or control
 * characters (it is written into the #line directive of the compiled source); at most
 * MANIFEST_NAMES_MAX parameters and derived values together, each name at most
 * RT_VAR_NAME_MAX - 1 characters (a configuration's values travel as rt_vars beside the
 * problem's and device's); a configuration's text ("A=1,B=2") at most MANIFEST_CONFIG_MAX
 * characters; at most MANIFEST_SPACE_MAX combinations of parameter values before constraints
 * (refused before anything is enumerated); every expression within expr.h's limits.  A space
 * with more than MANIFEST_CONFIGS_MAX valid configurations is refused when it is built.  Cost
 * values are never negative: a configuration whose cost formula gives one fails with the
 * field named.
 * Object order is declaration order: it fixes the configuration format, the space order
 * (lexicographic over parameters in declaration order, each over its domain in the order
 * written), and derived values, which are evaluated in that order and may use earlier ones.
 * Expressions may also use names the manifest does not declare: problem dimensions (M, N, K,
 * BATCH), dtype facts (dtype_bytes, dtype_is_f16, ...) and device facts (device.*, the list is
 * MANIFEST_DEVICE_FACTS below; a device name outside that list is an error at load).  Those
 * come from the caller's rt_vars when a space is built or a launch computed.  An identifier
 * parameter's value inside expressions is its domain position (see expr.h: LAYOUT_B == col).
 *
 * Errors (RT_ERR_MANIFEST, RT_ERR_EXPR, RT_ERR_PARSE for JSON syntax, RT_ERR_IO) carry the file
 * (err->source), the field (err->field: "constraints[2]", "params.BLOCK_M[3]", "derived.SMEM",
 * "launch.grid[1]") and the column inside an expression (err->column), or the JSON line and
 * column; rt_error_format() prints them as one line.
 *
 * Source prefix (manifest_source_prefix), exactly, in this order:
 *   #define RT_DTYPE_<dtype> 1          e.g. RT_DTYPE_f16 (only when a dtype is given)
 *   #define RT_DTYPE_BYTES <n>          bytes per element of that dtype
 *   #define <PARAM> <value>             every parameter; an identifier parameter gets its
 *   #define <PARAM>_<ident> 1            identifier text as value plus this flag line
 *   #define <DERIVED> <value>           every derived value that depends only on parameters,
 *                                       other such derived values, dtype_* and device.* facts
 *                                       (values that read problem dimensions are left out, so
 *                                       the source, hence the compile cache, is shape-free)
 *   #line 1 "<source file name>"        the file's name without its folder
 * and then the template source follows.  Integers are written in decimal (negative ones in
 * parentheses: (-1)).
 */
#ifndef ROOFTUNE_MANIFEST_H
#define ROOFTUNE_MANIFEST_H

#include <stddef.h>

#include "compile/compile.h"
#include "template/roles.h"
#include "template/space.h"
#include "core/status.h"
#include "core/vars.h"

typedef struct manifest manifest;

#define MANIFEST_FILE_MAX    (1 << 20) /* bytes of one manifest file */
#define MANIFEST_NAMES_MAX   48        /* parameters + derived values */
#define MANIFEST_CONFIG_MAX  767       /* characters of a configuration's text */
#define MANIFEST_SPACE_MAX   1e10      /* combinations of parameter values, before constraints */
#define MANIFEST_CONFIGS_MAX (1 << 24) /* valid configurations of one space */

/* The device facts expressions may name (device.NAME), each with where its value comes from:
 * X(NAME, ARCH, field) from the architecture table, X(NAME, GPU, field) from a GPU's entry (set
 * only when a GPU is known), X(NAME, CONST, value).  gpu_spec_env() (model/gpu_spec.h)
 * sets them; the loader refuses any other device.NAME. */
#define MANIFEST_DEVICE_FACTS(X)                        \
  X(cc, ARCH, cc)                                       \
  X(smem_per_block_optin, ARCH, smem_per_block_optin)   \
  X(smem_per_sm, ARCH, smem_per_sm)                     \
  X(regs_per_sm, ARCH, regs_per_sm)                     \
  X(max_regs_per_thread, ARCH, max_regs_per_thread)     \
  X(max_threads_per_block, ARCH, max_threads_per_block) \
  X(max_threads_per_sm, ARCH, max_threads_per_sm)       \
  X(max_warps_per_sm, ARCH, max_warps_per_sm)           \
  X(max_blocks_per_sm, ARCH, max_blocks_per_sm)         \
  X(warp_size, CONST, 32)                               \
  X(sm_count, GPU, sm_count)                            \
  X(l2_bytes, GPU, l2_bytes)

/* "device.cc, device.sm_count, ...": the facts above, for messages. */
const char *manifest_device_facts(void);

/* --- loading --- */
/* Loads and checks PATH: JSON, every field, every expression's syntax and names it can check
 * without a problem (parameters, derived values, device facts). */
rt_status manifest_load(const char *path, manifest **out, rt_error *err);
void manifest_free(manifest *m);

/* --- what it says --- */
const char *manifest_path(const manifest *m); /* as given to manifest_load */
const char *manifest_name(const manifest *m);
const char *manifest_family(const manifest *m);
const char *manifest_description(const manifest *m); /* "" when absent */
const char *manifest_source(const manifest *m);      /* resolved: folder of the manifest + source */
const char *manifest_source_name(const manifest *m); /* as written: "gemm_mma.cu" */
const char *manifest_source_dir(const manifest *m);  /* the source's folder */
const char *manifest_entry(const manifest *m);
const char *manifest_instruction(const manifest *m); /* "simt", "mma" or "wgmma" */
int manifest_ndtypes(const manifest *m);
const char *manifest_dtype(const manifest *m, int i);
int manifest_has_dtype(const manifest *m, const char *dtype);
int manifest_narchs(const manifest *m);
const char *manifest_arch(const manifest *m, int i);
int manifest_has_arch(const manifest *m, const char *arch);
int manifest_noptions(const manifest *m);
const char *manifest_option(const manifest *m, int i);
int manifest_nparams(const manifest *m);
/* The "cover" pairs: how many, and pair i's parameter names. */
int manifest_ncover(const manifest *m);
void manifest_cover_pair(const manifest *m, int i, const char **a, const char **b);
/* Parameter i (name and domain), NULL out of range. */
const space_param *manifest_param(const manifest *m, int i);
int manifest_nderived(const manifest *m);
const char *manifest_derived_name(const manifest *m, int i);
const char *manifest_derived_text(const manifest *m, int i); /* its expression */
/* 1 when derived value i goes into the source prefix (it reads no problem dimension). */
int manifest_derived_emitted(const manifest *m, int i);
int manifest_nconstraints(const manifest *m);
const char *manifest_constraint(const manifest *m, int i); /* its text */
/* Roles of the parameters: those the manifest's "roles" gives, else guessed from names. */
void manifest_roles(const manifest *m, param_roles *out);

/* --- problem and device facts --- */
/* Sets dtype_bytes and dtype_is_<d> (1 for dtype, 0 for the others) for f32 tf32 f16 bf16 f64
 * e4m3 e5m2 i8; RT_ERR_INVALID naming the known dtypes otherwise. */
rt_status manifest_env_dtype(const char *dtype, rt_vars *env, rt_error *err);
/* Bytes per element of a dtype, 0 when unknown. */
int manifest_dtype_bytes(const char *dtype);

/* --- the space --- */
/* Builds the valid configurations for the problem/device facts in env by backtracking over the
 * parameters in declaration order: each derived value and constraint is evaluated as soon as
 * every name it reads is bound (those reading only env once, up front) and a false constraint
 * prunes the whole subtree.  Order: lexicographic in declaration order (see above).
 * RT_ERR_SPACE_EMPTY when nothing is valid (the message names the constraint that rejected
 * most); RT_ERR_EXPR (with field and column) when an expression cannot be evaluated (an env
 * name missing: the message lists the names that exist; division by zero: it names the
 * partial configuration). */
rt_status manifest_build_space(const manifest *m, const rt_vars *env, space **out, rt_error *err);
/* Whether env leaves m any valid configuration, as cheaply as that is known: RT_OK at the first
 * one found, else manifest_build_space's error (RT_ERR_SPACE_EMPTY with the same message). */
rt_status manifest_space_check(const manifest *m, const rt_vars *env, rt_error *err);
/* env plus the parameter values of configuration idx of sp (an identifier parameter as its
 * domain position) and every derived value, into out (cleared first). */
rt_status manifest_config_vars(const manifest *m, const space *sp, size_t idx, const rt_vars *env,
                               rt_vars *out, rt_error *err);
/* Every name the manifest's expressions read that it does not declare (problem dimensions, dtype
 * and device facts) is in env: RT_ERR_EXPR naming the first missing one (field, column) and the
 * names that exist otherwise.  What `rooftune templates` checks against a family's names. */
rt_status manifest_check_names(const manifest *m, const rt_vars *env, rt_error *err);
/* Launch geometry for a configuration's vars (from manifest_config_vars).  RT_ERR_EXPR when an
 * expression fails, RT_ERR_INVALID when a dimension is out of range (grid x 1..2^31-1, y and z
 * 1..65535, block dims >= 1 with product <= 1024, smem 0..2^32-1). */
rt_status manifest_launch(const manifest *m, const rt_vars *vars, unsigned grid[3],
                          unsigned block[3], unsigned *smem, rt_error *err);
/* The work a launch of `grid` does, in blocks (launch.work, at least the grid's blocks; without
 * it, the grid's blocks). */
rt_status manifest_work(const manifest *m, const rt_vars *vars, const unsigned grid[3],
                        long long *work, rt_error *err);
/* FLOPs of the problem, modeled DRAM bytes and FLOPs executed (cost.executed_flops, else the
 * problem's; executed_flops may be NULL) for a configuration's vars. */
rt_status manifest_cost(const manifest *m, const rt_vars *vars, double *flops, double *dram_bytes,
                        double *executed_flops, rt_error *err);
/* cost.bytes_in_flight for a configuration's vars; 0 when the manifest does not state it. */
rt_status manifest_inflight(const manifest *m, const rt_vars *vars, double *bytes, rt_error *err);
/* Everything the engine derives from one configuration before compiling it: its text, its
 * values, its launch geometry and its cost.  manifest_plan() makes it in one step; the tuner,
 * the model device, the diagnosis and the runtime's geometry all read it. */
typedef struct candidate_plan {
  size_t idx;       /* configuration number in the space */
  char config[768]; /* "BLOCK_M=128,BLOCK_N=64,..." (space_format_config) */
  rt_vars vars;     /* env + parameter values + derived values */
  unsigned grid[3]; /* launch geometry (manifest_launch) */
  unsigned block[3];
  unsigned smem;         /* dynamic shared memory bytes */
  long long work;        /* blocks' worth of work (manifest_work) */
  double flops;          /* the problem's FLOPs (cost.flops) */
  double dram_bytes;     /* DRAM bytes this configuration moves (cost.dram_bytes) */
  double executed_flops; /* FLOPs the kernel executes (cost.executed_flops, else flops) */
  double inflight_bytes; /* cost.bytes_in_flight; 0 when not stated */
  double scratch_bytes;  /* cost.scratch_bytes: bytes the candidate writes to scratch and
                              reads back itself (split-K / split-KV partials), beyond dram_bytes;
                              0 when not stated */
} candidate_plan;

/* manifest_config_vars, manifest_launch, manifest_work, manifest_cost and manifest_inflight for
 * configuration idx of sp, into *out.  The first failure is returned (with field and column). */
rt_status manifest_plan(const manifest *m, const space *sp, size_t idx, const rt_vars *env,
                        candidate_plan *out, rt_error *err);
/* A plan with only a text and a cost (library candidates: no template, no geometry). */
void candidate_plan_library(candidate_plan *out, const char *text, double flops, double dram_bytes);

/* The #define prefix described above for configuration idx; vars supplies dtype and device
 * facts (env or config vars); dtype may be NULL (no RT_DTYPE lines), else one of the
 * manifest's dtypes.  *out is malloc'ed, the caller frees it. */
rt_status manifest_source_prefix(const manifest *m, const space *sp, size_t idx,
                                 const rt_vars *vars, const char *dtype, char **out, rt_error *err);
/* NVRTC options for compiling this template for ARCH: its entry, its folder on the include path
 * (for headers shared by the template and host tests) and the shipped templates' common/ folder
 * (rt_ptx.h, the PTX wrappers of every template; both folders' files are part of the cache
 * key), its own "options", and precompiled headers on.  The strings point into the manifest,
 * which must outlive opt. */
void manifest_compile_options(const manifest *m, const char *arch, compile_options *opt);
/* The template's source text as it is on disk (malloc'ed; RT_ERR_IO names the file). */
rt_status manifest_read_source(const manifest *m, char **out, rt_error *err);
/* The full text NVRTC compiles for configuration idx: the prefix above followed by body, the
 * template source from manifest_read_source (read once, used for every configuration), or,
 * when body is NULL, the source read from disk for this call.  *out is malloc'ed, the caller
 * frees it. */
rt_status manifest_config_source(const manifest *m, const space *sp, size_t idx,
                                 const rt_vars *vars, const char *dtype, const char *body,
                                 char **out, rt_error *err);

#endif
