/* test_attention_cudnn.c — the host side of the attention family's cuDNN candidates
 * (kernels/attention_cudnn.h):
 *  - the identity text: format -> parse -> format gives the same text, knobs by name or number,
 *    and every malformed text refused with its own message;
 *  - the support rules cudnn-frontend checks before building (cuDNN versions, masks, pages);
 *  - with this machine's cuDNN: the SDPA operation graph of prefill, grouped heads, causal
 *    (top-left and bottom-right), ragged and paged problems is built and finalized without a GPU,
 *    with the operations in the order cudnn-frontend lowers them to, and cuDNN has engines for
 *    it;
 *  - cuDNN's heuristics, given an H200 described from rooftune's spec table (a device property
 *    descriptor, no GPU), offer engine configurations for every graph, and refuse them only for
 *    want of a CUDA driver on this machine, never for the graph's pattern, data types or shapes;
 *    each configuration offered, rebuilt from its identity text (engine, knob choices, engine
 *    configuration), gets as far as the same driver check, while knob values the engine lacks
 *    and engine numbers the graph lacks are refused before it.
 *  - the graphs librooftune's fallback builds for a call (attn_cudnn_call): the caller's KV
 *    lengths read on the device, its pool's pages, its softmax scale.
 * The graph parts skip with a printed reason where cuDNN is absent; the rest runs everywhere. */
/* stages: kernels */
#include <dlfcn.h>

#include "kernels/attention.h"
#include "kernels/attention_cudnn.h"
#include "driver/cuda_driver.h"
#include "driver/cudnn.h"
#include "model/gpu_spec.h"
#include "test.h"

static void roundtrip(const char *text) {
  attn_cudnn_id id, again;
  rt_error err;
  rt_error_clear(&err);
  CHECK_INT(attn_cudnn_id_parse(text, &id, &err), RT_OK);
  if (err.text[0]) fprintf(stderr, "  %s\n", err.text);
  char out[600], out2[600];
  attn_cudnn_id_format(&id, out, sizeof out);
  CHECK_STR(out, text);
  CHECK_INT(attn_cudnn_id_parse(out, &again, &err), RT_OK);
  attn_cudnn_id_format(&again, out2, sizeof out2);
  CHECK_STR(out2, out);
  CHECK(memcmp(&id, &again, sizeof id) == 0);
}

static void bad(const char *text, const char *needle) {
  attn_cudnn_id id;
  rt_error err;
  rt_error_clear(&err);
  CHECK_INT(attn_cudnn_id_parse(text, &id, &err), RT_ERR_PARSE);
  CHECK_CONTAINS(err.text, needle);
  CHECK_CONTAINS(err.text, "bad cuDNN SDPA candidate");
}

static void identity(void) {
  attn_cudnn_id id;
  memset(&id, 0, sizeof id);
  id.engine = 2;
  id.nknobs = 2;
  id.knobs[0].type = 14; /* STAGES */
  id.knobs[0].value = -1;
  id.knobs[1].type = 24; /* KERNEL_CFG */
  id.knobs[1].value = 7;
  id.version = 91900;
  char text[256];
  int n = attn_cudnn_id_format(&id, text, sizeof text);
  CHECK_STR(text, "cudnn sdpa engine=2 knobs=STAGES:-1,KERNEL_CFG:7 version=91900");
  CHECK_INT(n, (long long)strlen(text));
  roundtrip(text);
  roundtrip("cudnn sdpa engine=0 knobs=- version=90500");
  roundtrip("cudnn sdpa engine=11 knobs=KERNEL_CFG:35 version=91900");
  /* knobs by number come back by name */
  attn_cudnn_id parsed;
  rt_error err;
  rt_error_clear(&err);
  CHECK_INT(attn_cudnn_id_parse("cudnn sdpa engine=1 knobs=14:2,24:3 version=91900", &parsed, &err),
            RT_OK);
  attn_cudnn_id_format(&parsed, text, sizeof text);
  CHECK_STR(text, "cudnn sdpa engine=1 knobs=STAGES:2,KERNEL_CFG:3 version=91900");
  CHECK_STR(attn_cudnn_knob_name(24), "KERNEL_CFG");
  CHECK_STR(attn_cudnn_knob_name(43), "SWAP_AB");
  CHECK(attn_cudnn_knob_name(44) == NULL);
  /* six knobs with the longest names and wide values still fit the tuner's 256 bytes (cuDNN's
   * SDPA engines have one or two); a text that would not is reported by its length, and
   * attn_cudnn_list leaves such a configuration out, saying so */
  memset(&id, 0, sizeof id);
  id.engine = 2147483647;
  id.version = 99999;
  id.nknobs = 6;
  for (int i = 0; i < 6; i++) {
    id.knobs[i].type = 31 + i; /* ARRAY_SIZE_PER_THREAD, NUM_C_PER_BLOCK, ... */
    id.knobs[i].value = -9999999;
  }
  n = attn_cudnn_id_format(&id, text, sizeof text);
  CHECK(n < 256);
  roundtrip(text);
  id.nknobs = ATTN_CUDNN_MAX_KNOBS;
  for (int i = 6; i < ATTN_CUDNN_MAX_KNOBS; i++) {
    id.knobs[i].type = 31 + i;
    id.knobs[i].value = -9999999;
  }
  char wide[600];
  CHECK(attn_cudnn_id_format(&id, text, sizeof text) >= 256);
  CHECK(attn_cudnn_id_format(&id, wide, sizeof wide) < (int)sizeof wide);
  roundtrip(wide);

  bad(NULL, "it must start with \"cudnn sdpa \"");
  bad("cublaslt compute=32F id=1", "it must start with \"cudnn sdpa \"");
  bad("cudnn sdpa knobs=- engine=1 version=91900", "engine= must come first");
  bad("cudnn sdpa engine=-1 knobs=- version=91900", "engine must be a non-negative integer");
  bad("cudnn sdpa engine=x knobs=- version=91900", "engine must be a non-negative integer");
  bad("cudnn sdpa engine=1 version=91900", "knobs= must follow the engine");
  bad("cudnn sdpa engine=1 knobs=WARP:1 version=91900", "not one of cuDNN's");
  bad("cudnn sdpa engine=1 knobs=44:1 version=91900", "knob number is out of range");
  bad("cudnn sdpa engine=1 knobs=KERNEL_CFG version=91900", "a knob is TYPE:VALUE");
  bad("cudnn sdpa engine=1 knobs=KERNEL_CFG:x version=91900", "a knob's value must be an integer");
  bad("cudnn sdpa engine=1 knobs=KERNEL_CFG:1,STAGES:2 version=91900",
      "in the order of their types");
  bad("cudnn sdpa engine=1 knobs=STAGES:1,STAGES:2 version=91900", "distinct");
  bad("cudnn sdpa engine=1 knobs=-", "version= must follow the knobs");
  bad("cudnn sdpa engine=1 knobs=- version=8907", "cuDNN 9 version");
  bad("cudnn sdpa engine=1 knobs=- version=91900 extra", "unexpected text after the version");
  bad("cudnn sdpa engine=1 knobs=0:0,1:0,2:0,4:0,5:0,6:0,7:0,8:0,9:0,10:0,11:0,12:0,13:0 "
      "version=91900",
      "more knobs than rooftune keeps");
}

static void parse(const char *shape, const char *args, problem *p) {
  rt_error err;
  rt_error_clear(&err);
  CHECK_INT(attention_family.parse_shape(&attention_family, shape, "bf16", args, p, &err), RT_OK);
  if (err.text[0]) fprintf(stderr, "  %s: %s\n", shape, err.text);
}

static void refused(const char *shape, const char *args, int version, const char *needle) {
  problem p;
  parse(shape, args, &p);
  rt_error err;
  rt_error_clear(&err);
  CHECK_INT(attn_cudnn_supports(&p, version, &err), RT_ERR_UNSUPPORTED);
  CHECK_CONTAINS(err.text, needle);
}

static void rules(void) {
  problem p;
  rt_error err;
  parse("4x32x4096x128:causal", NULL, &p);
  CHECK_INT(attn_cudnn_supports(&p, 91900, &err), RT_OK);
  CHECK_INT(attn_cudnn_supports(&p, 90000, &err), RT_OK); /* SQ == SKV: top-left is bottom-right */
  refused("4x32x4096x128", NULL, 91000, "known bugs");
  refused("4x32x4096x128", NULL, 91001, "use 9.10.2 or newer");
  refused("64x32:8x1:8192x128:paged16", NULL, 90400, "paged K/V caches need cuDNN 9.5");
  refused("8x8x1:4096x256:paged16", NULL, 90900, "head dims up to 128");
  parse("8x8x1:4096x256:paged16", NULL, &p);
  CHECK_INT(attn_cudnn_supports(&p, 91900, &err), RT_OK);
  refused("1x1x2:1x64:causal", NULL, 91900, "needs SQ <= SKV without per-sequence lengths");
  parse("2x1x2:8x64:causal", "1,8", &p); /* padded: cuDNN masks by the lengths */
  CHECK_INT(attn_cudnn_supports(&p, 91900, &err), RT_OK);
  refused("1x8x100:1000x64:causal", NULL, 90500, "multiples of 64");
  parse("1x8x128:1024x64:causal", NULL, &p);
  CHECK_INT(attn_cudnn_supports(&p, 90500, &err), RT_OK);
  parse("1x8x128x64", NULL, &p);
  snprintf(p.dtype, sizeof p.dtype, "f32");
  CHECK_INT(attn_cudnn_supports(&p, 91900, &err), RT_ERR_UNSUPPORTED);
  CHECK_CONTAINS(err.text, "bf16 or f16");
}

/* A device property descriptor of an H200 from the spec tables (the names are those of cuDNN
 * 9.19's serialized device properties); NULL when this cuDNN does not take it. */
static cudnnBackendDescriptor_t described_h200(void) {
  const gpu_spec *g = gpu_spec_find("h200");
  const arch_spec *a = g ? arch_spec_find(g->arch) : NULL;
  if (!g || !a) return NULL;
  char js[2048];
  snprintf(
      js, sizeof js,
      "{\"maxGridSize\":[2147483647,65535,65535],\"maxBlockSize\":[1024,1024,64],\"regsPerBlock\":%"
      "d,"
      "\"multiProcessorCount\":%d,\"warpSize\":32,\"maxSharedMemoryPerBlock\":49152,"
      "\"maxSharedMemoryPerBlockOptin\":%d,\"reservedSharedMemoryPerBlock\":%d,"
      "\"maxRegistersPerSM\":%d,"
      "\"maxCtasPerSM\":%d,\"maxThreadsPerBlock\":%d,\"maxThreadsPerSM\":%d,\"pciDeviceId\":0,"
      "\"isTccDriver\":0,\"supportCoopLaunch\":1,\"smClockRateKHz\":%d,\"memClockRateKHz\":3201000,"
      "\"l2CacheSize\":%zu,\"deviceName\":\"%s\",\"deviceVer\":%d,\"driverVer\":13000,"
      "\"totalGlobalMem\":%zu,\"cudaDeviceId\":0}",
      a->regs_per_sm, g->sm_count, a->smem_per_block_optin, a->smem_reserved_per_block,
      a->regs_per_sm, a->max_blocks_per_sm, a->max_threads_per_block, a->max_threads_per_sm,
      g->boost_clock_mhz * 1000, g->l2_bytes, g->name, a->cc * 10, g->memory_bytes);
  cudnnBackendDescriptor_t dp = NULL;
  if (dnn.cudnnBackendCreateDescriptor(CUDNN_BACKEND_DEVICEPROP_DESCRIPTOR, &dp)) return NULL;
  int st = dnn.cudnnBackendSetAttribute(dp, CUDNN_ATTR_DEVICEPROP_JSON_REPRESENTATION,
                                        CUDNN_TYPE_CHAR, (int64_t)strlen(js), js);
  if (!st) st = dnn.cudnnBackendFinalize(dp);
  if (st) {
    char why[400];
    cudnn_last_error(why, sizeof why);
    printf("this cuDNN does not take the described H200 (%s): heuristics not checked\n", why);
    dnn.cudnnBackendDestroyDescriptor(dp);
    return NULL;
  }
  return dp;
}

static int driver_here; /* libcuda.so.1 loads in this process */

/* cuDNN's heuristics (mode A) for the graph on the described GPU: some configurations are
 * offered, and what refuses them is the missing driver alone. */
static void heuristics(const attn_cudnn_graph *g, cudnnBackendDescriptor_t dp, const char *shape) {
  void *graph = attn_cudnn_graph_desc(g);
  int mode = CUDNN_HEUR_MODE_A;
  cudnnBackendDescriptor_t h = NULL, cfg[16] = {NULL};
  CHECK_INT(dnn.cudnnBackendCreateDescriptor(CUDNN_BACKEND_ENGINEHEUR_DESCRIPTOR, &h), 0);
  CHECK_INT(dnn.cudnnBackendSetAttribute(h, CUDNN_ATTR_ENGINEHEUR_OPERATION_GRAPH,
                                         CUDNN_TYPE_BACKEND_DESCRIPTOR, 1, &graph),
            0);
  CHECK_INT(
      dnn.cudnnBackendSetAttribute(h, CUDNN_ATTR_ENGINEHEUR_MODE, CUDNN_TYPE_HEUR_MODE, 1, &mode),
      0);
  CHECK_INT(dnn.cudnnBackendSetAttribute(h, CUDNN_ATTR_ENGINEHEUR_DEVICEPROP,
                                         CUDNN_TYPE_BACKEND_DESCRIPTOR, 1, &dp),
            0);
  CHECK_INT(dnn.cudnnBackendFinalize(h), 0);
  int64_t offered = 0, got = 0;
  CHECK_INT(dnn.cudnnBackendGetAttribute(h, CUDNN_ATTR_ENGINEHEUR_RESULTS,
                                         CUDNN_TYPE_BACKEND_DESCRIPTOR, 0, &offered, NULL),
            0);
  if (offered > 16) offered = 16;
  for (int i = 0; i < offered; i++)
    dnn.cudnnBackendCreateDescriptor(CUDNN_BACKEND_ENGINECFG_DESCRIPTOR, &cfg[i]);
  CHECK_INT(dnn.cudnnBackendGetAttribute(h, CUDNN_ATTR_ENGINEHEUR_RESULTS,
                                         CUDNN_TYPE_BACKEND_DESCRIPTOR, offered, &got, cfg),
            0);
  char log[4096];
  dnn.cudnnGetLastErrorString(log, sizeof log);
  CHECK(offered >= 1);
  /* without a driver library the support check of each offered configuration stops at libcuda
   * (cuDNN loads it itself); with one, a real GPU answers, which tests/gpu checks */
  if (!driver_here) {
    CHECK_INT(got, 0);
    CHECK_CONTAINS(log, "RUNTIME_PREREQUISITE_MISSING");
    const char *wrong[] = {"GRAPH_PATTERN", "NOT_SUPPORTED_DATA_TYPE", "NOT_SUPPORTED_SHAPE",
                           "NOT_SUPPORTED_LAYOUT", "BAD_PARAM"};
    for (size_t i = 0; i < sizeof wrong / sizeof wrong[0]; i++) {
      CHECK(strstr(log, wrong[i]) == NULL);
      if (strstr(log, wrong[i])) fprintf(stderr, "  %s: cuDNN said:\n%s\n", shape, log);
    }
  }
  for (int i = 0; i < offered; i++) dnn.cudnnBackendDestroyDescriptor(cfg[i]);
  dnn.cudnnBackendDestroyDescriptor(h);
  /* The configurations it offered, as cuDNN logs them ({"engineId":2,...,"knobChoices":
   * {"CUDNN_KNOB_TYPE_KERNEL_CFG":7}}), rebuilt from their identity texts: the engine, knobs
   * and configuration finalize as far as the driver check, like the configuration itself. */
  int rebuilt = 0;
  for (const char *at = strstr(log, "{\"engineId\":"); at; at = strstr(at + 1, "{\"engineId\":")) {
    attn_cudnn_id id;
    memset(&id, 0, sizeof id);
    id.version = dnn.version;
    id.engine = strtol(at + 12, NULL, 10);
    const char *k = strstr(at, "\"knobChoices\":{"), *end = k ? strchr(k, '}') : NULL;
    for (const char *q = k ? strstr(k, "CUDNN_KNOB_TYPE_") : NULL;
         q && q < end && id.nknobs < ATTN_CUDNN_MAX_KNOBS; q = strstr(q + 1, "CUDNN_KNOB_TYPE_")) {
      size_t len = strcspn(q + 16, "\"");
      for (int t = 0; t < CUDNN_KNOB_TYPE_COUNTS; t++) {
        const char *name = attn_cudnn_knob_name(t);
        if (name && strlen(name) == len && !strncmp(q + 16, name, len)) {
          id.knobs[id.nknobs].type = t;
          id.knobs[id.nknobs++].value = strtoll(q + 16 + len + 2, NULL, 10);
        }
      }
    }
    for (int a = 0; a < id.nknobs; a++) /* by type, as identities have them */
      for (int b = a + 1; b < id.nknobs; b++)
        if (id.knobs[b].type < id.knobs[a].type) {
          attn_cudnn_knob t = id.knobs[a];
          id.knobs[a] = id.knobs[b];
          id.knobs[b] = t;
        }
    char text[256];
    attn_cudnn_id_format(&id, text, sizeof text);
    rt_error err;
    rt_error_clear(&err);
    rt_status st = attn_cudnn_graph_config(g, text, dp, &err);
    if (!driver_here) {
      CHECK_INT(st, RT_ERR_UNSUPPORTED);
      CHECK_CONTAINS(err.text, "RUNTIME_PREREQUISITE_MISSING");
    }
    if (!rebuilt++)
      printf("%-40s heuristics offer %lld configurations on a described H200; \"%s\": %s\n", shape,
             (long long)offered, text, st ? err.text : "built");
  }
  if (!driver_here) CHECK(rebuilt >= 1);
  /* knobs the engine does not have are refused by the engine configuration itself */
  rt_error err;
  rt_error_clear(&err);
  CHECK_INT(attn_cudnn_graph_config(g, "cudnn sdpa engine=1 knobs=KERNEL_CFG:99999 version=91900",
                                    dp, &err),
            RT_ERR_UNSUPPORTED);
  CHECK(strstr(err.text, "RUNTIME_PREREQUISITE_MISSING") == NULL);
  char text[128];
  snprintf(text, sizeof text, "cudnn sdpa engine=%lld knobs=- version=%d",
           attn_cudnn_graph_engines(g), dnn.version);
  CHECK_INT(attn_cudnn_graph_config(g, text, dp, &err), RT_ERR_UNSUPPORTED);
  CHECK_CONTAINS(err.text, "for this graph, not");
}

typedef struct graph_case {
  const char *shape, *lens;
  const char *ops;
} graph_case;

static const char *const SOFTMAX = "max sub exp sum log add div";

static void graphs(void) {
  rt_error err;
  rt_error_clear(&err);
  if (cudnn_load(&err) != RT_OK) {
    printf("graph checks skipped: %s\n", err.text);
    return;
  }
  char v[32];
  cudnn_version_text(dnn.version, v, sizeof v);
  printf("cuDNN %s at %s\n", v, dnn.path);
  if (dnn.version < 90800) { /* before 9.8 an operation graph needs a handle, so a GPU */
    printf(
        "graph checks skipped: cuDNN %s finalizes a graph only with a handle (9.8 does without)\n",
        v);
    return;
  }
  char plain[160], causal[200], shifted[200], padded[240], paged[260], paged_causal[320];
  snprintf(plain, sizeof plain, "matmul mul %s matmul", SOFTMAX);
  snprintf(causal, sizeof causal, "matmul mul gen_index gen_index cmp_ge select %s matmul",
           SOFTMAX);
  snprintf(shifted, sizeof shifted,
           "matmul mul gen_index gen_index add sub cmp_ge select %s matmul", SOFTMAX);
  snprintf(padded, sizeof padded,
           "matmul mul gen_index gen_index cmp_lt cmp_lt and select %s matmul", SOFTMAX);
  snprintf(
      paged, sizeof paged,
      "paged_load matmul mul gen_index gen_index cmp_lt cmp_lt and select %s paged_load matmul",
      SOFTMAX);
  snprintf(paged_causal, sizeof paged_causal,
           "paged_load matmul mul gen_index gen_index cmp_lt cmp_lt and select gen_index gen_index "
           "add sub cmp_ge "
           "select %s paged_load matmul",
           SOFTMAX);
  const graph_case cases[] = {
      {"2x8x129x128", NULL, plain},
      {"1x32:8x512x128:causal", NULL, causal}, /* grouped heads, SQ == SKV: top-left */
      {"4x32x4096x128:causal", NULL, causal},
      {"8x16x512:2048x64:causal", NULL, shifted}, /* bottom-right by SKV - SQ */
      {"2x4x77x256", NULL, plain},
      {"3x8:1x1:1000x128", "5,1000,777", padded}, /* ragged decode */
      {"3x8:2x4:1000x64:causal", "5,1000,777",
       "matmul mul gen_index gen_index cmp_lt cmp_lt and select gen_index "
       "gen_index add sub cmp_ge select max sub exp sum log add div matmul"},
      {"64x32:8x1:8192x128:paged16", NULL, paged}, /* paged decode */
      {"8x32:8x4:4096x128:causal:paged32", NULL, paged_causal},
      {"3x8:1x1:1000x128:paged64", "5,1000,777", paged},
  };
  cudnnBackendDescriptor_t dp = described_h200();
  for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
    problem p;
    parse(cases[i].shape, cases[i].lens, &p);
    if (problem_dim(&p, "PAGE") && dnn.version < 90500) {
      printf("%-40s skipped: paged caches need cuDNN 9.5\n", p.shape);
      continue;
    }
    attn_cudnn_graph *g = NULL;
    rt_error_clear(&err);
    rt_status st = attn_cudnn_graph_build(&p, NULL, &g, &err);
    CHECK_INT(st, RT_OK);
    if (st) {
      fprintf(stderr, "  %s: %s\n", cases[i].shape, err.text);
      continue;
    }
    CHECK_STR(attn_cudnn_graph_ops(g), cases[i].ops);
    CHECK(attn_cudnn_graph_engines(g) >= 1);
    printf("%-40s %lld engines: %s\n", p.shape, attn_cudnn_graph_engines(g),
           attn_cudnn_graph_ops(g));
    if (dp) heuristics(g, dp, p.shape);
    attn_cudnn_graph_free(g);
  }
  if (dp) dnn.cudnnBackendDestroyDescriptor(dp);
  /* what cuDNN cannot do is refused before any descriptor is made */
  problem p;
  parse("1x1x2:1x64:causal", NULL, &p);
  attn_cudnn_graph *g = NULL;
  CHECK_INT(attn_cudnn_graph_build(&p, NULL, &g, &err), RT_ERR_UNSUPPORTED);
  CHECK(g == NULL);
  CHECK_CONTAINS(err.text, "bottom-right causal mask");
  /* without a loaded driver there is no handle, and no candidate */
  if (!cu.handle) {
    attn_cudnn *c = NULL;
    attn_cudnn_io io;
    memset(&io, 0, sizeof io);
    parse("2x8x129x128", NULL, &p);
    CHECK_INT(attn_cudnn_open(&p, &io, &c, &err), RT_ERR_NO_DRIVER);
    CHECK(c == NULL);
    CHECK_CONTAINS(err.text, "needs a loaded CUDA driver");
  }
}

/* The graphs librooftune's fallback builds for rooftune_attention calls (attn_cudnn_call: what a
 * call adds to its shape), up to the point that needs a GPU: the caller's kv_lens read on the
 * device make the graph padded (masked per sequence) without --kv-lens; a paged call's pools
 * have the caller's num_pages; a scale of the caller's replaces 1/sqrt(D); each is a graph
 * cuDNN has engines for and whose configurations its heuristics offer. */
static void calls(void) {
  rt_error err;
  rt_error_clear(&err);
  if (cudnn_load(&err) != RT_OK || dnn.version < 90800) {
    printf("call graph checks skipped: %s\n",
           err.text[0] ? err.text : "cuDNN before 9.8 needs a handle");
    return;
  }
  char padded[240], padded_causal[320], paged[260];
  snprintf(padded, sizeof padded,
           "matmul mul gen_index gen_index cmp_lt cmp_lt and select %s matmul", SOFTMAX);
  snprintf(padded_causal, sizeof padded_causal,
           "matmul mul gen_index gen_index cmp_lt cmp_lt and select gen_index gen_index add sub "
           "cmp_ge select %s matmul",
           SOFTMAX);
  snprintf(
      paged, sizeof paged,
      "paged_load matmul mul gen_index gen_index cmp_lt cmp_lt and select %s paged_load matmul",
      SOFTMAX);
  const struct {
    const char *shape;
    attn_cudnn_call call;
    const char *ops;
    long long pages;
  } cases[] = {
      {"3x8:2x64:1000x64:causal",
       {0, 0, 1},
       padded_causal,
       0},                                        /* ragged prefill, lengths on the device */
      {"4x8:1x1:1000x128", {0, 0, 1}, padded, 0}, /* ragged decode */
      {"64x32:8x1:8192x128:paged16", {0, 777, 1}, paged, 777}, /* the caller's pool, its lengths */
      {"64x32:8x1:8192x128:paged16", {0.05f, 40000, 0}, paged, 40000},
  };
  cudnnBackendDescriptor_t dp = described_h200();
  for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
    problem p;
    parse(cases[i].shape, NULL, &p);
    if (cases[i].pages && dnn.version < 90500) continue;
    attn_cudnn_graph *g = NULL;
    rt_error_clear(&err);
    CHECK_INT(attn_cudnn_graph_build_call(&p, &cases[i].call, NULL, &g, &err), RT_OK);
    if (!g) {
      fprintf(stderr, "  %s: %s\n", cases[i].shape, err.text);
      continue;
    }
    CHECK_STR(attn_cudnn_graph_ops(g), cases[i].ops);
    CHECK_INT(attn_cudnn_graph_padded(g), 1);
    CHECK_INT(attn_cudnn_graph_pages(g), cases[i].pages);
    CHECK_NEAR(attn_cudnn_graph_scale(g),
               cases[i].call.scale ? cases[i].call.scale : 1 / sqrt((double)problem_dim(&p, "D")),
               1e-7);
    CHECK(attn_cudnn_graph_engines(g) >= 1);
    printf("call %-35s lens on the device %d, %lld pages, scale %.4g: %lld engines\n", p.shape,
           cases[i].call.device_lens, attn_cudnn_graph_pages(g), attn_cudnn_graph_scale(g),
           attn_cudnn_graph_engines(g));
    if (dp) heuristics(g, dp, p.shape);
    attn_cudnn_graph_free(g);
  }
  if (dp) dnn.cudnnBackendDestroyDescriptor(dp);
  /* the same problem without the call: not padded, the problem's pages, 1/sqrt(D) */
  problem p;
  parse("64x32:8x1:8192x128:paged16", NULL, &p);
  attn_cudnn_graph *g = NULL;
  if (attn_cudnn_graph_build_call(&p, NULL, NULL, &g, &err) == RT_OK) {
    CHECK_INT(attn_cudnn_graph_pages(g), 64 * 512);
    CHECK_NEAR(attn_cudnn_graph_scale(g), 1 / sqrt(128.0), 1e-7);
    attn_cudnn_graph_free(g);
  }
  /* a bottom-right mask with more queries than keys needs per-sequence lengths: the device's do */
  parse("2x4x64:32x64:causal", NULL, &p);
  const attn_cudnn_call lens = {0, 0, 1};
  CHECK_INT(attn_cudnn_supports_call(&p, NULL, dnn.version, &err), RT_ERR_UNSUPPORTED);
  CHECK_CONTAINS(err.text, "bottom-right causal mask needs SQ <= SKV");
  CHECK_INT(attn_cudnn_supports_call(&p, &lens, dnn.version, &err), RT_OK);
  /* opening a plan needs the driver's context (the GPU step of tests/gpu runs it) */
  if (!cu.handle) {
    attn_cudnn *c = NULL;
    attn_cudnn_io io;
    memset(&io, 0, sizeof io);
    CHECK_INT(attn_cudnn_open_call(&p, &lens, &io, &c, &err), RT_ERR_NO_DRIVER);
    CHECK(c == NULL);
  }
}

TEST_CASE(sdpa_plans) {
  void *libcuda = dlopen("libcuda.so.1", RTLD_LAZY | RTLD_LOCAL);
  driver_here = libcuda != NULL;
  if (libcuda) dlclose(libcuda);
  identity();
  rules();
  graphs();
  calls();
  CHECK(attention_family.library_list != NULL);
  CHECK(attention_family.library_describe != NULL);
  CHECK(attention_family.library_launch != NULL);
}

TEST_LIST(TEST_ENTRY(sdpa_plans))
