/* attention_sdpa.h — cuDNN's fused attention (scaled dot-product attention through cuDNN 9's
 * graph API) for a problem of the attention family: its graph, cuDNN's configurations for it,
 * their plans and their runs.  Two users share it: the tuner, whose cuDNN candidates compete
 * with the templates as cuBLASLt's algorithms do with gemm's (attention_cudnn.h), and
 * librooftune, whose rooftune_attention falls back to cuDNN when no tuned kernel serves a call
 * (runtime/attention_library.c).  It needs the CUDA driver and cuDNN, both loaded at run time
 * (driver/), the problem (core) and the family's per-sequence lengths
 * (attention_kv_len), nothing of NVRTC, Jansson or manifests.
 *
 * The graph.  For a problem of the attention family (kernels/attention.h) the module builds,
 * with the backend API, the operation graph cuDNN's fused flash-attention engines recognise —
 * the pattern cudnn-frontend's SDPA node lowers to for cuDNN 9.19 (its "composite" SDPA node;
 * the single SDPA_FWD operation of cuDNN >= 9.13 takes no causal mask before 9.21):
 *
 *   [paged: K^T = paged_cache_load(K pool, block table, seq_kv)]
 *   S = Q K^T (matmul, fp32)            Q [B, HQ, SQ, D] and K^T [B, HKV, D, SKV] over the
 *   S = S * scale (1/sqrt(D))           family's [B, S, H, D] memory (strides), HQ % HKV == 0
 *   [ragged or paged: S = select(S, -inf, row < seq_q and col < seq_kv)]   (padding mask)
 *   [causal: S = select(S, -inf, row + seq_kv - seq_q >= col)]   (bottom right; row >= col
 *            when SQ == SKV and nothing is padded)
 *   M = max_j S; E = exp(S - M); Z = sum_j E
 *   LSE = M + log(Z)                    the "stats" output, fp32 [B, HQ, SQ]
 *   P = E / Z (in the input dtype)
 *   [paged: V = paged_cache_load(V pool, block table, seq_kv)]
 *   O = P V (matmul)                    O [B, HQ, SQ, D] over [B, SQ, HQ, D]
 *
 * with bf16 or f16 tensors in memory and fp32 everywhere inside.  Paged K/V (a pool of pages of
 * PAGE tokens, [num_pages, PAGE, HKV, D], read through the [B, max_pages] int32 block table)
 * needs cuDNN >= 9.5 and the padding mask with per-sequence lengths, which ragged batches
 * (--kv-lens) use too.  Building and finalizing the graph needs no GPU (cuDNN >= 9.8 finalizes
 * an operation graph without a handle); engine heuristics, plans and execution need one.
 *
 * Candidates.  cuDNN's heuristics (mode A, then the fallback list) name engine configurations;
 * each is a candidate (one whose execution plan does not finalize fails as that candidate's
 * result, with cuDNN's message), identified by the text
 *     cudnn sdpa engine=N knobs=TYPE:VALUE,... version=V
 * (engine: CUDNN_ATTR_ENGINE_GLOBAL_INDEX; knobs: the configuration's knob choices sorted by
 * type, named as in cudnnBackendKnobType_t without CUDNN_KNOB_TYPE_, "-" for none; version: the
 * cuDNN that listed it, 91900 for 9.19.0).  The text is parsed back to rebuild exactly that
 * plan — the listed candidates are themselves built from their texts — so a stored winner can
 * be replayed; a text from another cuDNN version is refused, since engine numbers may change.
 * A problem, engine or cuDNN that cannot run is RT_ERR_UNSUPPORTED with cuDNN's own message.
 */
#ifndef ROOFTUNE_ATTENTION_SDPA_H
#define ROOFTUNE_ATTENTION_SDPA_H

#include <cuda.h>
#include <stddef.h>

#include "core/problem.h"
#include "core/status.h"

/* ---- the identity of a candidate ---- */

#define ATTN_CUDNN_MAX_KNOBS      12 /* so that the text stays within the tuner's 256 bytes */
#define ATTN_CUDNN_MAX_CANDIDATES 32 /* configurations one attn_cudnn holds */

typedef struct attn_cudnn_knob {
  int type;        /* cudnnBackendKnobType_t */
  long long value; /* its choice (may be negative: -1 is "let the engine decide") */
} attn_cudnn_knob;

typedef struct attn_cudnn_id {
  long long engine; /* the engine's global index for the graph */
  int nknobs;       /* knobs[0..nknobs), sorted by type, distinct */
  attn_cudnn_knob knobs[ATTN_CUDNN_MAX_KNOBS];
  int version; /* cudnnGetVersion() of the cuDNN that listed it */
} attn_cudnn_id;

/* Writes the identity text; returns its length (as snprintf: >= size means it was cut). */
int attn_cudnn_id_format(const attn_cudnn_id *id, char *buf, size_t size);
/* Parses an identity text (knobs by name or by number); RT_ERR_PARSE naming what is wrong. */
rt_status attn_cudnn_id_parse(const char *text, attn_cudnn_id *out, rt_error *err);
/* "KERNEL_CFG" for CUDNN_KNOB_TYPE_KERNEL_CFG; NULL for a number cuDNN 9.19 does not name. */
const char *attn_cudnn_knob_name(int type);

/* ---- the graph (host side: no GPU needed) ---- */

/* RT_OK when cuDNN `version` can run the problem's SDPA by the rules cudnn-frontend checks
 * before it builds the graph, else RT_ERR_UNSUPPORTED saying which rule (and what would
 * lift it). */
rt_status attn_cudnn_supports(const problem *p, int version, rt_error *err);

/* What one call brings beyond its problem's shape (librooftune's rooftune_attention_problem);
 * all zero (or a NULL pointer to it): what the problem itself says, the tuner's case. */
typedef struct attn_cudnn_call {
  float scale;         /* the softmax scale; 0: 1/sqrt(D) */
  long long num_pages; /* paged: pages in each of the K and V pools; 0: what the problem's
                          sequences need (B * ceil(SKV / PAGE), or per sequence when ragged) */
  int device_lens;     /* 1: each sequence's KV length is in a device buffer (attn_cudnn_io's
                          seq_kv, int32 [B]) that the graph reads, so it is padded (masked per
                          sequence) even for a problem without --kv-lens */
} attn_cudnn_call;

/* The support rules for problem p as call runs it (call may be NULL). */
rt_status attn_cudnn_supports_call(const problem *p, const attn_cudnn_call *call, int version,
                                   rt_error *err);

typedef struct attn_cudnn_graph attn_cudnn_graph;
/* Builds and finalizes the operation graph of problem p (handle: a cuDNN handle, or NULL to
 * build it without a GPU).  Loads cuDNN when needed. */
rt_status attn_cudnn_graph_build(const problem *p, void *handle, attn_cudnn_graph **out,
                                 rt_error *err);
/* The same for problem p as call runs it (call may be NULL). */
rt_status attn_cudnn_graph_build_call(const problem *p, const attn_cudnn_call *call, void *handle,
                                      attn_cudnn_graph **out, rt_error *err);
/* 1 when the graph masks per sequence (ragged, paged, or the call's device lengths). */
int attn_cudnn_graph_padded(const attn_cudnn_graph *g);
/* The softmax scale and the pages per pool the graph was built with (0 pages: not paged). */
float attn_cudnn_graph_scale(const attn_cudnn_graph *g);
long long attn_cudnn_graph_pages(const attn_cudnn_graph *g);
void attn_cudnn_graph_free(attn_cudnn_graph *g);
/* The operations in graph order, e.g. "matmul mul gen_index ... div matmul". */
const char *attn_cudnn_graph_ops(const attn_cudnn_graph *g);
/* The engines cuDNN has for the graph (CUDNN_ATTR_OPERATIONGRAPH_ENGINE_GLOBAL_COUNT). */
long long attn_cudnn_graph_engines(const attn_cudnn_graph *g);
/* The finalized CUDNN_BACKEND_OPERATIONGRAPH_DESCRIPTOR. */
void *attn_cudnn_graph_desc(const attn_cudnn_graph *g);
/* Makes and finalizes the engine, knob choices and engine configuration an identity text names
 * for graph g — the part of a plan that needs no GPU — and destroys them again (devprop: a
 * CUDNN_BACKEND_DEVICEPROP_DESCRIPTOR describing the GPU, or NULL for the current one).
 * RT_ERR_UNSUPPORTED with cuDNN's message when the graph has no such engine or the engine
 * refuses the knobs. */
rt_status attn_cudnn_graph_config(const attn_cudnn_graph *g, const char *text, void *devprop,
                                  rt_error *err);

/* ---- candidates on a GPU (a current CUDA context) ---- */

/* The family's device buffers the graph reads and writes (attn_abi.h layouts). */
typedef struct attn_cudnn_io {
  CUdeviceptr q, k, v, o, lse; /* lse: fp32 [B, HQ, SQ], always written */
  CUdeviceptr block_table;     /* int32 [B, max_pages] when paged, else 0 */
  CUdeviceptr seq_kv;          /* int32 [B] keys of each sequence, read when the call says
                                  device_lens; else 0 (the problem's lengths are uploaded) */
} attn_cudnn_io;

typedef struct attn_cudnn attn_cudnn; /* handle, graph, plans, workspace, lengths */

/* Loads cuDNN, checks the problem (attn_cudnn_supports), creates a handle and the graph, and
 * uploads the per-sequence lengths a padded graph reads. */
rt_status attn_cudnn_open(const problem *p, const attn_cudnn_io *io, attn_cudnn **out,
                          rt_error *err);
/* The same for problem p as call runs it (call may be NULL): its scale, its pools' pages, and
 * with device_lens the KV lengths read from io->seq_kv (only the query lengths are uploaded). */
rt_status attn_cudnn_open_call(const problem *p, const attn_cudnn_call *call,
                               const attn_cudnn_io *io, attn_cudnn **out, rt_error *err);
void attn_cudnn_close(attn_cudnn *c);
/* Points the next runs at other buffers of the same problem (a call's new Q, K, V, O, LSE,
 * block table or lengths); the variant pack is remade only when one of them changed. */
void attn_cudnn_bind(attn_cudnn *c, const attn_cudnn_io *io);
/* Lists up to max candidates: the configurations of cuDNN's heuristics, mode A then the
 * fallback list, each once, each taken from its text parsed back; *count of them.  None is
 * RT_ERR_UNSUPPORTED with what cuDNN said.  Plans are built when a candidate first runs (or
 * by attn_cudnn_build): some engines compile kernels at run time, so that cost falls on each
 * candidate's own evaluation rather than on one listing. */
rt_status attn_cudnn_list(attn_cudnn *c, int max, int *count, rt_error *err);
/* Builds candidate i's execution plan now (and the workspace it needs): RT_ERR_UNSUPPORTED with
 * cuDNN's message when the configuration does not finalize; the answer is kept. */
rt_status attn_cudnn_build(attn_cudnn *c, int i, rt_error *err);
/* 1 when candidate i's plan is built. */
int attn_cudnn_built(const attn_cudnn *c, int i);
/* Candidate i's identity text. */
rt_status attn_cudnn_describe(const attn_cudnn *c, int i, char *buf, size_t size, rt_error *err);
/* Rebuilds the plan an identity text names (the runtime's replay) and appends it as a
 * candidate; *index is its number for attn_cudnn_run. */
rt_status attn_cudnn_add(attn_cudnn *c, const char *text, int *index, rt_error *err);
/* Runs candidate i on stream (asynchronously, like a kernel launch), building it first when
 * needed. */
rt_status attn_cudnn_run(attn_cudnn *c, int i, CUstream stream, rt_error *err);
/* Candidates now held. */
int attn_cudnn_count(const attn_cudnn *c);
/* Workspace candidate i uses, in bytes (0 until built). */
size_t attn_cudnn_workspace(const attn_cudnn *c, int i);

#endif
