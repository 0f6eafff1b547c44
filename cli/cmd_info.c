/* cmd_info.c — `rooftune info`: the toolkit, NVRTC, the driver and every GPU. */
#include <jansson.h>
#include <stdio.h>
#include <string.h>

#include "cli/cli.h"
#include "compile/cubin_cache.h"
#include "driver/cuda_driver.h"
#include "driver/cudnn.h"
#include "compile/toolkit.h"
#include "core/version.h"

static const char usage[] =
    "usage: rooftune info [--json]\n\n"
    "Shows the CUDA toolkit and NVRTC versions, the architectures NVRTC can target, whether a\n"
    "CUDA driver and GPU are present and, for each GPU, its name, compute capability, SM\n"
    "count, memory, L2 size and clocks, which cuDNN the attention family's library candidates\n"
    "use (found as driver/cudnn.h says: ROOFTUNE_LIBCUDNN, the loader's paths, the\n"
    "toolkit, Python wheels), and the cubin cache: where it is, what it holds and its bound\n"
    "(ROOFTUNE_CACHE_MAX_MB).  Without a driver or cuDNN it says so and still exits 0.\n";

typedef struct info_cli {
  int json; /* --json */
} info_cli;

static const cli_option info_table[] = {
    CLI_FLAG(info_cli, "json", json, "print one JSON object instead of text"),
    CLI_END,
};

static int cmd_info(int argc, char **argv) {
  info_cli cli = {0};
  int arg, bad = cli_options_parse("info", NULL, info_table, argc, argv, &cli, &arg);
  if (bad) return bad;
  int json = cli.json;
  if (arg < argc) return cli_usage_error("info", "unexpected argument '%s'", argv[arg]);

  rt_error err = {0};
  toolkit_info tk;
  if (toolkit_query(&tk, &err)) return cli_fail("info", &err);

  rt_error derr = {0};
  int driver_version = 0, ngpu = 0;
  rt_status ds = cuda_driver_version(&driver_version, &derr);
  if (ds == RT_OK) ds = cuda_gpu_count(&ngpu, &derr);

  json_t *root = json_object();
  json_object_set_new(root, "rooftune", json_string(ROOFTUNE_VERSION));
  char v[32];
  snprintf(v, sizeof v, "%d.%d", tk.cuda_major, tk.cuda_minor);
  json_object_set_new(root, "cuda_toolkit", json_string(v));
  snprintf(v, sizeof v, "%d.%d", tk.nvrtc_major, tk.nvrtc_minor);
  json_object_set_new(root, "nvrtc", json_string(v));
  json_object_set_new(root, "cublaslt", json_integer((json_int_t)tk.cublaslt_version));
  json_t *archs = json_array();
  for (int i = 0; i < tk.arch_count; i++) {
    snprintf(v, sizeof v, "sm_%d", tk.archs[i]);
    json_array_append_new(archs, json_string(v));
  }
  json_object_set_new(root, "nvrtc_archs", archs);
  json_t *drv = json_object();
  json_object_set_new(drv, "present", json_boolean(ds == RT_OK || ds == RT_ERR_NO_GPU));
  if (ds == RT_OK) {
    snprintf(v, sizeof v, "%d.%d", driver_version / 1000, (driver_version % 1000) / 10);
    json_object_set_new(drv, "version", json_string(v));
  } else {
    json_object_set_new(drv, "message", json_string(derr.text));
  }
  json_object_set_new(root, "driver", drv);
  json_t *gpus = json_array();
  for (int i = 0; ds == RT_OK && i < ngpu; i++) {
    cuda_gpu_info g;
    rt_error gerr = {0};
    if (cuda_gpu_query(i, &g, &gerr)) {
      json_decref(root);
      return cli_fail("info", &gerr);
    }
    json_t *o = json_object();
    json_object_set_new(o, "index", json_integer(i));
    json_object_set_new(o, "name", json_string(g.name));
    snprintf(v, sizeof v, "%d.%d", g.cc_major, g.cc_minor);
    json_object_set_new(o, "compute_capability", json_string(v));
    json_object_set_new(o, "sm_count", json_integer(g.sm_count));
    json_object_set_new(o, "memory_bytes", json_integer((json_int_t)g.memory_bytes));
    json_object_set_new(o, "l2_bytes", json_integer(g.l2_bytes));
    json_object_set_new(o, "sm_clock_mhz", json_integer(g.clock_khz / 1000));
    json_object_set_new(o, "memory_clock_mhz", json_integer(g.mem_clock_khz / 1000));
    json_object_set_new(o, "memory_bus_bits", json_integer(g.bus_width_bits));
    json_object_set_new(o, "smem_per_block_optin", json_integer(g.smem_per_block_optin));
    json_array_append_new(gpus, o);
  }
  json_object_set_new(root, "gpus", gpus);

  json_t *dnnj = json_object();
  rt_error nerr = {0};
  if (cudnn_load(&nerr) == RT_OK) {
    cudnn_version_text(dnn.version, v, sizeof v);
    json_object_set_new(dnnj, "version", json_string(v));
    json_object_set_new(dnnj, "path", json_string(dnn.path));
  } else {
    json_object_set_new(dnnj, "message", json_string(nerr.text));
  }
  json_object_set_new(root, "cudnn", dnnj);

  /* the cubin cache: opening it creates the folder and an empty file, as any compile would */
  json_t *cache = json_object();
  cubin_cache *cc = NULL;
  rt_error cerr = {0};
  if (cubin_cache_open_default(&cc, &cerr) != RT_OK) {
    json_object_set_new(cache, "message", json_string(cerr.text));
  } else if (!cc) {
    json_object_set_new(cache, "message", json_string("off (ROOFTUNE_CACHE_DIR=off)"));
  } else {
    json_object_set_new(cache, "path", json_string(cubin_cache_path(cc)));
    json_object_set_new(cache, "entries", json_integer(cubin_cache_count(cc)));
    json_object_set_new(cache, "bytes", json_integer(cubin_cache_bytes(cc)));
    json_object_set_new(cache, "limit_bytes", json_integer(cubin_cache_limit(cc)));
    if (cubin_cache_warning(cc)[0])
      json_object_set_new(cache, "message", json_string(cubin_cache_warning(cc)));
    cubin_cache_close(cc);
  }
  json_object_set_new(root, "cubin_cache", cache);

  if (json) {
    json_dumpf(root, stdout, JSON_INDENT(2) | JSON_PRESERVE_ORDER);
    fputc('\n', stdout);
  } else {
    printf("rooftune      %s\n", ROOFTUNE_VERSION);
    printf("CUDA toolkit  %d.%d (built against)\n", tk.cuda_major, tk.cuda_minor);
    printf("NVRTC         %d.%d, targets:", tk.nvrtc_major, tk.nvrtc_minor);
    for (int i = 0; i < tk.arch_count; i++) printf(" sm_%d", tk.archs[i]);
    printf("\ncuBLASLt      %zu\n", tk.cublaslt_version);
    if (ds == RT_OK)
      printf("CUDA driver   %d.%d, %d GPU%s\n", driver_version / 1000, (driver_version % 1000) / 10,
             ngpu, ngpu == 1 ? "" : "s");
    else
      printf("CUDA driver   none: %s\n", derr.text);
    size_t n = json_array_size(gpus);
    for (size_t i = 0; i < n; i++) {
      json_t *o = json_array_get(gpus, i);
      printf(
          "GPU %zu         %s, compute capability %s, %lld SMs, %.1f GiB, L2 %.1f MiB, "
          "SM clock %lld MHz, memory clock %lld MHz\n",
          i, json_string_value(json_object_get(o, "name")),
          json_string_value(json_object_get(o, "compute_capability")),
          json_integer_value(json_object_get(o, "sm_count")),
          json_integer_value(json_object_get(o, "memory_bytes")) / 1073741824.0,
          json_integer_value(json_object_get(o, "l2_bytes")) / 1048576.0,
          json_integer_value(json_object_get(o, "sm_clock_mhz")),
          json_integer_value(json_object_get(o, "memory_clock_mhz")));
    }
    if (ds != RT_OK)
      printf("GPU           none: kernels cannot run here; compile, model and replay work\n");
    if (dnn.handle)
      printf("cuDNN         %s at %s\n", json_string_value(json_object_get(dnnj, "version")),
             dnn.path);
    else
      printf("cuDNN         none: %s\n", nerr.text);
    json_t *path = json_object_get(cache, "path"), *msg = json_object_get(cache, "message");
    if (path)
      printf("cubin cache   %s: %lld compiles, %.1f MB of at most %.0f MB\n",
             json_string_value(path), json_integer_value(json_object_get(cache, "entries")),
             json_integer_value(json_object_get(cache, "bytes")) / 1048576.0,
             json_integer_value(json_object_get(cache, "limit_bytes")) / 1048576.0);
    if (msg) printf("%s%s\n", path ? "              " : "cubin cache   ", json_string_value(msg));
  }
  json_decref(root);
  return CLI_EXIT_OK;
}

const cli_command cli_cmd_info = {.name = "info",
                                  .summary = "show the CUDA toolkit, NVRTC, driver and GPUs",
                                  .usage = usage,
                                  .options = info_table,
                                  .run = cmd_info};
