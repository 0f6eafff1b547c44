/* attention_library.c — rooftune_attention's vendor library (rule 4 of rooftune.h): cuDNN's
 * fused attention through kernels/attention_sdpa.h, for a call no tuned kernel serves, and for a
 * tuned cuDNN plan (a library winner, "cudnn sdpa engine=N knobs=... version=V").  cuDNN is
 * loaded at run time (driver/cudnn.h), as the tuner loads it; a machine without it serves
 * the tuned kernels and says why a call has nothing else.
 *
 * Plans are kept.  Opening the graph and building its plan takes milliseconds to seconds (some
 * engines compile kernels at run time), so they are made once per (CUDA context, stream,
 * problem, what the call adds, plan) and kept in a table of RT_SDPA_SLOTS; later calls point the
 * plan at their own buffers (attn_cudnn_bind: the variant pack is remade only when a pointer
 * changed) and run it.  Each stream has its own, so two streams never share cuDNN's workspace;
 * when the table is full the least recently used one goes, after its stream has finished.  The
 * table's mutex is held while a plan is made and while a call is queued on it.
 *
 * What the call adds to its shape goes into the graph: its softmax scale, its pools' pages
 * (num_pages), and its kv_lens, which the graph reads on the device (a padded graph, masked per
 * sequence: no copy to the host).  cuDNN always writes the log-sum-exp: into the caller's lse,
 * else into a scratch kept with the plan.
 */
#include <pthread.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include "kernels/attention_sdpa.h"
#include "runtime/runtime.h"
#include "driver/cuda_driver.h"
#include "driver/cudnn.h"

#define RT_SDPA_SLOTS 16 /* plans kept */
#define RT_SDPA_TRY   8  /* cuDNN's first configurations tried for its own choice */

typedef struct sdpa_slot {
  CUcontext ctx;   /* where the plan lives (NULL: a free slot) */
  void *stream;    /* the stream it runs on */
  char key[1280];  /* the problem, what the call adds, the plan asked for (whole: a key cut
                      short would run another plan) */
  attn_cudnn *c;   /* graph, plans, workspace */
  int index;       /* the candidate that runs */
  char plan[256];  /* its identity text */
  CUdeviceptr lse; /* the LSE scratch for calls without one (0 until needed) */
  size_t lse_bytes;
  unsigned long long used; /* the clock at its last call */
} sdpa_slot;

static pthread_mutex_t sdpa_mu = PTHREAD_MUTEX_INITIALIZER;
static sdpa_slot slots[RT_SDPA_SLOTS];
static unsigned long long sdpa_clock;

int rt_attention_library_available(void) {
  rt_error err = {0};
  pthread_mutex_lock(&sdpa_mu);
  int ok = cudnn_load(&err) == RT_OK; /* loaded once; later calls return the first answer */
  pthread_mutex_unlock(&sdpa_mu);
  return ok;
}

/* Empties slot s, in its own context, once the runs queued on it have finished. */
static void slot_free(sdpa_slot *s) {
  CUcontext cur = NULL;
  cu.cuCtxGetCurrent(&cur);
  int moved = s->ctx != cur && cu.cuCtxSetCurrent(s->ctx) == CUDA_SUCCESS;
  cu.cuStreamSynchronize((CUstream)s->stream);
  attn_cudnn_close(s->c);
  if (s->lse) cu.cuMemFree_v2(s->lse);
  if (moved) cu.cuCtxSetCurrent(cur);
  memset(s, 0, sizeof *s);
}

/* The slot of (ctx, stream, key), or NULL. */
static sdpa_slot *slot_find(CUcontext ctx, void *stream, const char *key) {
  for (int i = 0; i < RT_SDPA_SLOTS; i++)
    if (slots[i].ctx == ctx && slots[i].stream == stream && !strcmp(slots[i].key, key))
      return &slots[i];
  return NULL;
}

/* A free slot: an empty one, else the least recently used, emptied. */
static sdpa_slot *slot_take(void) {
  sdpa_slot *old = &slots[0];
  for (int i = 0; i < RT_SDPA_SLOTS; i++) {
    if (!slots[i].ctx) return &slots[i];
    if (slots[i].used < old->used) old = &slots[i];
  }
  slot_free(old);
  return old;
}

/* cuDNN's own choice for c: the first of its heuristics' configurations whose plan builds. */
static rt_status own_choice(attn_cudnn *c, int *index, rt_error *err) {
  int n = 0;
  rt_status st = attn_cudnn_list(c, RT_SDPA_TRY, &n, err);
  rt_error first = {0};
  for (int i = 0; !st && i < n; i++) {
    rt_error e = {0};
    if (attn_cudnn_build(c, i, &e) == RT_OK) {
      *index = i;
      return RT_OK;
    }
    if (!first.text[0]) first = e;
  }
  if (st) return st;
  return rt_error_set(err, RT_ERR_UNSUPPORTED,
                      "none of cuDNN's first %d configurations builds a plan (%.300s)", n,
                      first.text);
}

/* Opens the graph of p as call runs it into s and builds the plan: the identity's, or cuDNN's
 * own choice (identity NULL). */
static rt_status slot_open(sdpa_slot *s, const problem *p, const attn_cudnn_call *call,
                           const attn_cudnn_io *io, const char *identity, rt_error *err) {
  rt_status st = attn_cudnn_open_call(p, call, io, &s->c, err);
  if (!st)
    st = identity ? attn_cudnn_add(s->c, identity, &s->index, err)
                  : own_choice(s->c, &s->index, err);
  if (!st) st = attn_cudnn_describe(s->c, s->index, s->plan, sizeof s->plan, err);
  if (st) {
    attn_cudnn_close(s->c);
    s->c = NULL;
  }
  return st;
}

/* Queues p on stream with the plan of (identity or cuDNN's own choice); *plan gets its text.
 * Holds the table's mutex. */
static rt_status sdpa_run(const problem *p, const rooftune_attention_problem *a, void *stream,
                          const char *identity, char *plan, size_t size, rt_error *err) {
  CUcontext ctx = NULL;
  rt_status st = cuda_check(cu.cuCtxGetCurrent(&ctx), "find the current CUDA context", err);
  if (st) return st;
  const attn_cudnn_call call = {a->scale, a->page_size ? a->num_pages : 0, a->kv_lens != NULL};
  attn_cudnn_io io = {(uintptr_t)a->q,      (uintptr_t)a->k,   (uintptr_t)a->v,
                      (uintptr_t)a->o,      (uintptr_t)a->lse, (uintptr_t)a->block_table,
                      (uintptr_t)a->kv_lens};
  char key[sizeof slots[0].key];
  int kn = snprintf(key, sizeof key, "%s %s lens=%d pages=%lld scale=%a plan=%s", p->shape,
                    p->dtype, call.device_lens, call.num_pages, (double)call.scale,
                    identity ? identity : "cudnn's own");
  if (kn < 0 || (size_t)kn >= sizeof key)
    return rt_error_set(err, RT_ERR_INVALID, "the cuDNN plan's identity is over %zu characters",
                        sizeof key - 200);
  pthread_mutex_lock(&sdpa_mu);
  sdpa_slot *s = slot_find(ctx, stream, key);
  if (!s) { /* a new plan; an older one makes room only once this one is made */
    sdpa_slot fresh;
    memset(&fresh, 0, sizeof fresh);
    if (!(st = slot_open(&fresh, p, &call, &io, identity, err))) {
      fresh.ctx = ctx;
      fresh.stream = stream;
      snprintf(fresh.key, sizeof fresh.key, "%s", key);
      s = slot_take();
      *s = fresh;
    }
  }
  if (!st && !a->lse) { /* cuDNN writes the LSE whatever the caller wants */
    const size_t need =
        (size_t)(problem_dim(p, "B") * problem_dim(p, "HQ") * problem_dim(p, "SQ")) * sizeof(float);
    if (s->lse_bytes < need) {
      if (s->lse) {
        cu.cuStreamSynchronize((CUstream)stream); /* an earlier run may still write it */
        cu.cuMemFree_v2(s->lse);
      }
      s->lse = 0;
      s->lse_bytes = 0;
      if (!(st = cuda_check(cu.cuMemAlloc_v2(&s->lse, need), "allocate the LSE cuDNN writes", err)))
        s->lse_bytes = need;
    }
    io.lse = s->lse;
  }
  if (!st) {
    attn_cudnn_bind(s->c, &io);
    st = attn_cudnn_run(s->c, s->index, (CUstream)stream, err);
    s->used = ++sdpa_clock;
    snprintf(plan, size, "%s", s->plan);
  }
  pthread_mutex_unlock(&sdpa_mu);
  return st;
}

int rt_attention_library(const problem *p, const rooftune_attention_problem *a, void *stream,
                         const char *identity, char *why, size_t why_size, rooftune_info *info) {
  rt_error err = {0};
  char plan[256] = "";
  rt_status st = cudnn_load(&err);
  if (!st) st = sdpa_run(p, a, stream, identity, plan, sizeof plan, &err);
  if (identity) { /* a tuned plan that cannot run here: cuDNN's own choice may */
    if (st == RT_OK) return ROOFTUNE_OK;
    if (st == RT_ERR_LAUNCH || st == RT_ERR_CUDA) return rt_fail_err(&err);
    snprintf(why, why_size, "the tuned cuDNN plan cannot run here: %.300s", err.text);
    return -1;
  }
  rt_copy(info->reason, sizeof info->reason, why);
  if (st == RT_OK) {
    info->path = ROOFTUNE_PATH_LIBRARY;
    rt_copy(info->template_name, sizeof info->template_name, "cudnn");
    return ROOFTUNE_OK;
  }
  int code = st == RT_ERR_UNSUPPORTED && !dnn.handle ? ROOFTUNE_ERR_NOT_FOUND : rt_public_code(st);
  return rt_fail(code,
                 "rooftune_attention: no tuned kernel serves attention %s %s (%s), and cuDNN, the "
                 "fallback, %s: %s",
                 p->shape, p->dtype, why, dnn.handle ? "cannot run it" : "is not available",
                 err.text);
}
