/* cmd_compile.c — `rooftune compile`: compile a template's space (or a spread sample of it) for
 * one architecture and show each candidate's static facts: registers, shared memory, spills,
 * occupancy and its limiter.  No GPU needed. */
#include <jansson.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "tuner/cli/cli.h"
#include "tuner/compile/compile_pool.h"
#include "tuner/compile/cubin_cache.h"
#include "tuner/model/gpu_spec.h"
#include "kernels/family.h"
#include "tuner/template/catalog.h"
#include "tuner/template/manifest.h"
#include "tuner/model/occupancy.h"

static const char usage[] =
    "usage: rooftune compile TEMPLATE --arch ARCH [--dtype D] [--shape S] [--jobs N]\n"
    "                        [--limit N] [--timeout SEC] [--no-pch] [--no-cache] [--logs]\n"
    "                        [--templates DIR]... [--json]\n\n"
    "Compiles every valid configuration of TEMPLATE (or --limit of them, spread evenly over the\n"
    "space) with NVRTC for ARCH and prints one row per candidate: its configuration, registers\n"
    "per thread, shared memory (static + dynamic), spilled bytes, occupancy and what limits it,\n"
    "then a summary.  Results are cached (see ROOFTUNE_CACHE_DIR), so a second run compiles\n"
    "nothing.  No GPU is needed.\n\n"
    "options:\n"
    "  --arch ARCH     sm_75, sm_80, sm_86, sm_89, sm_90 or sm_90a (required)\n"
    "  --dtype D       input precision, one of the template's dtypes (default: its first)\n"
    "  --shape S       problem shape in the family's syntax (default: the family's example,\n"
    "                  gemm 4096x4096x4096, attention 4x32x4096x128);\n"
    "                  constraints and launch sizes may depend on it; launch sizes that read\n"
    "                  device.sm_count use the first model GPU of ARCH (sm_90: h200)\n"
    "  --jobs N        compile processes (default: one per core)\n"
    "  --limit N       compile N configurations spread evenly over the space (0: all)\n"
    "  --timeout SEC   give up on one compile after SEC seconds (default 300)\n"
    "  --no-pch        do not precompile the template's system headers\n"
    "  --no-cache      neither read nor write the cubin cache\n"
    "  --logs          print the whole NVRTC log of every candidate that failed to stderr\n"
    "  --templates DIR a folder of templates searched first (repeatable)\n"
    "  --json          print one JSON object instead of the table\n\n"
    "environment:\n"
    "  ROOFTUNE_TEMPLATE_PATH folders of templates searched before the shipped ones\n"
    "  ROOFTUNE_CACHE_DIR     cubin cache folder; 'off' disables it (default\n"
    "                         $XDG_CACHE_HOME/rooftune, else ~/.cache/rooftune)\n"
    "  ROOFTUNE_CACHE_MAX_MB  the cache's bound in megabytes (default 2048); past it the\n"
    "                         least recently used compiles go (`rooftune info` shows its size)\n";

static const char *compile_status_word(int status) {
  switch (status) {
  case RT_OK: return "ok";
  case RT_ERR_COMPILE: return "compile_error";
  case RT_ERR_CRASH: return "crash";
  case RT_ERR_TIMEOUT: return "timeout";
  default: return "nvrtc_error";
  }
}

typedef struct compile_row {
  size_t idx;             /* configuration number in the space */
  char *config;           /* "A=1,B=2" */
  unsigned threads;       /* block size */
  unsigned smem_dynamic;  /* bytes at launch */
  occupancy occ;          /* when compiled */
} compile_row;

typedef struct compile_progress {
  size_t total, done;
  int tty;
} compile_progress;

static void compile_on_result(void *ctx, size_t index, const compile_result *r) {
  compile_progress *p = ctx;
  p->done++;
  if (p->tty) {
    fprintf(stderr, "\rcompiled %zu/%zu", p->done, p->total);
    if (p->done == p->total) fputc('\n', stderr);
    fflush(stderr);
  }
}


/* The configuration as a JSON object: integers as numbers, identifiers as strings. */
static json_t *compile_config_json(const space *sp, size_t idx) {
  json_t *o = json_object();
  const uint16_t *cfg = space_config(sp, idx);
  for (int p = 0; p < space_nparams(sp); p++) {
    const space_param *sp_p = space_param_at(sp, p);
    if (sp_p->ints) json_object_set_new(o, sp_p->name, json_integer(sp_p->ints[cfg[p]]));
    else json_object_set_new(o, sp_p->name, json_string(sp_p->idents[cfg[p]]));
  }
  return o;
}

static int cmd_compile(int argc, char **argv) {
  const char *arch = NULL, *dtype = NULL, *shape = NULL;
  long jobs = 0, limit = 0;
  double timeout_s = 300;
  int json = 0, no_pch = 0, no_cache = 0, logs = 0;
  static const struct option opts[] = {
      {"arch", required_argument, 0, 'a'},   {"dtype", required_argument, 0, 'd'},
      {"shape", required_argument, 0, 's'},  {"jobs", required_argument, 0, 'j'},
      {"limit", required_argument, 0, 'l'},  {"timeout", required_argument, 0, 't'},
      {"no-pch", no_argument, 0, 'P'},       {"no-cache", no_argument, 0, 'C'},
      {"logs", no_argument, 0, 'L'},         {"json", no_argument, 0, 'J'},
      {"templates", required_argument, 0, 'T'}, {0, 0, 0, 0}};
  int c;
  while ((c = getopt_long(argc, argv, "", opts, NULL)) != -1) {
    switch (c) {
    case 'a': arch = optarg; break;
    case 'd': dtype = optarg; break;
    case 's': shape = optarg; break;
    case 'j':
      if (cli_parse_count("compile", "--jobs", optarg, &jobs)) return CLI_EXIT_USAGE;
      break;
    case 'l':
      if (cli_parse_count("compile", "--limit", optarg, &limit)) return CLI_EXIT_USAGE;
      break;
    case 't': {
      char *end = NULL;
      timeout_s = strtod(optarg, &end);
      if (!end || *end || end == optarg || !(timeout_s > 0))
        return cli_usage_error("compile", "--timeout takes seconds > 0, not '%s'", optarg);
      break;
    }
    case 'P': no_pch = 1; break;
    case 'C': no_cache = 1; break;
    case 'J': json = 1; break;
    case 'L': logs = 1; break;
    case 'T': {
      rt_error terr = {0};
      if (catalog_add_dir(optarg, &terr)) return cli_fail("compile", &terr);
      break;
    }
    default: return cli_bad_option("compile", argc, argv);
    }
  }
  if (optind >= argc) return cli_usage_error("compile", "which template? (see 'rooftune templates')");
  const char *name = argv[optind];
  if (optind + 1 < argc)
    return cli_usage_error("compile", "unexpected argument '%s'", argv[optind + 1]);
  if (!arch) return cli_usage_error("compile", "--arch is required; valid: %s", compile_arch_list());
  if (!compile_arch_valid(arch))
    return cli_usage_error("compile", "--arch: unknown architecture '%s'; valid: %s", arch,
                           compile_arch_list());

  rt_error err = {0};
  manifest *m = NULL;
  rt_status s = catalog_find(NULL, name, &m, &err);
  if (s == RT_ERR_NOT_FOUND) return cli_usage_error("compile", "%s", err.text);
  if (s) return cli_fail("compile", &err);

  int rc = CLI_EXIT_FAIL;
  space *sp = NULL;
  char *source = NULL;
  compile_row *rows = NULL;
  compile_job *cjobs = NULL;
  compile_result *results = NULL;
  cubin_cache *cache = NULL;
  size_t n = 0;

  /* the template must support the arch (sm_90a is sm_90 plus the arch-specific features) */
  if (!manifest_has_arch(m, arch)) {
    char list[256] = "";
    for (int i = 0; i < manifest_narchs(m); i++)
      snprintf(list + strlen(list), sizeof list - strlen(list), "%s%s", i ? ", " : "",
               manifest_arch(m, i));
    rc = cli_usage_error("compile", "--arch: template %s does not support %s; it supports: %s",
                         manifest_name(m), arch, list);
    goto done;
  }
  if (!dtype) dtype = manifest_dtype(m, 0);
  if (!manifest_has_dtype(m, dtype)) {
    char list[256] = "";
    for (int i = 0; i < manifest_ndtypes(m); i++)
      snprintf(list + strlen(list), sizeof list - strlen(list), "%s%s", i ? ", " : "",
               manifest_dtype(m, i));
    rc = cli_usage_error("compile", "--dtype: template %s has no dtype '%s'; it has: %s",
                         manifest_name(m), dtype, list);
    goto done;
  }
  const family_ops *fam = family_find(manifest_family(m));
  if (!fam) {
    rt_error_set(&err, RT_ERR_NOT_FOUND, "template %s names family '%s', which is not known (known: %s)",
                 manifest_name(m), manifest_family(m), family_names());
    rc = cli_fail("compile", &err);
    goto done;
  }
  if (!shape) shape = fam->example_shape; /* the family's example problem */
  if (!shape) {
    rc = cli_usage_error("compile", "--shape is required for family %s (%s)", fam->name,
                         fam->shape_help);
    goto done;
  }
  problem prob;
  if (fam->parse_shape(fam, shape, dtype, NULL, &prob, &err)) {
    rc = cli_usage_error("compile", "--shape '%s': %s (%s)", shape, err.text, fam->shape_help);
    goto done;
  }

  /* the names the manifest's expressions see */
  rt_vars env;
  const arch_spec *as = arch_spec_find(arch);
  if ((s = problem_env(fam, &prob, as, gpu_spec_for_arch(arch), &env, &err))) {
    if (!err.text[0]) rt_error_set(&err, s, "cannot set the problem's names for %s", shape);
    rc = cli_fail("compile", &err);
    goto done;
  }
  if (manifest_build_space(m, &env, &sp, &err)) {
    rc = cli_fail("compile", &err);
    goto done;
  }
  size_t size = space_size(sp);
  n = (limit > 0 && (size_t)limit < size) ? (size_t)limit : size;

  if (manifest_read_source(m, &source, &err)) {
    rc = cli_fail("compile", &err);
    goto done;
  }
  rows = calloc(n ? n : 1, sizeof *rows);
  cjobs = calloc(n ? n : 1, sizeof *cjobs);
  results = calloc(n ? n : 1, sizeof *results);
  if (!rows || !cjobs || !results) {
    rt_error_set(&err, RT_ERR_NOMEM, "out of memory for %zu candidates", n);
    rc = cli_fail("compile", &err);
    goto done;
  }
  for (size_t i = 0; i < n; i++) {
    /* an even, deterministic spread: i * size / n */
    size_t idx = (size_t)((unsigned long long)i * size / n);
    rows[i].idx = idx;
    size_t need = space_format_config(sp, idx, NULL, 0);
    rows[i].config = malloc(need + 1);
    char *text = NULL;
    candidate_plan pl;
    if (!rows[i].config || manifest_config_source(m, sp, idx, &env, dtype, source, &text, &err) ||
        manifest_plan(m, sp, idx, &env, &pl, &err)) {
      free(text);
      if (!err.text[0]) rt_error_set(&err, RT_ERR_NOMEM, "out of memory");
      rc = cli_fail("compile", &err);
      goto done;
    }
    space_format_config(sp, idx, rows[i].config, need + 1);
    rows[i].threads = pl.block[0] * pl.block[1] * pl.block[2];
    rows[i].smem_dynamic = pl.smem;
    cjobs[i].source = text;
    cjobs[i].name = manifest_source_name(m);
  }

  compile_options copt;
  manifest_compile_options(m, arch, &copt);
  copt.pch = !no_pch;

  if (!no_cache) {
    rt_error cerr = {0};
    if (cubin_cache_open_default(&cache, &cerr) != RT_OK) {
      fprintf(stderr, "rooftune compile: warning: %s; compiling without the cache\n", cerr.text);
      cache = NULL;
    } else if (cache && cubin_cache_warning(cache)[0]) {
      fprintf(stderr, "rooftune compile: warning: %s\n", cubin_cache_warning(cache));
    }
  }
  compile_progress prog = {n, 0, !json && cli_stderr_is_tty()};
  compile_pool_options popt = {0};
  popt.workers = (int)jobs;
  popt.timeout_s = timeout_s;
  popt.cache = cache;
  popt.progress = compile_on_result;
  popt.progress_ctx = &prog;
  compile_pool_stats st;
  if (compile_pool_run(cjobs, n, &copt, &popt, results, &st, &err)) {
    rc = cli_fail("compile", &err);
    goto done;
  }
  if (cache && cubin_cache_warning(cache)[0] && !cubin_cache_usable(cache))
    fprintf(stderr, "rooftune compile: warning: %s\n", cubin_cache_warning(cache));

  for (size_t i = 0; logs && i < n; i++)
    if (results[i].status != RT_OK)
      fprintf(stderr, "== %s: %s\n%s\n", rows[i].config, compile_status_word(results[i].status),
              results[i].log ? results[i].log : "");
  for (size_t i = 0; i < n; i++) {
    if (results[i].status != RT_OK) continue;
    occupancy_input in = {(int)rows[i].threads, results[i].report.registers,
                          results[i].report.smem_static, (int)rows[i].smem_dynamic};
    occupancy_compute(as, &in, &rows[i].occ, NULL);
  }

  if (json) {
    json_t *root = json_object();
    json_object_set_new(root, "template", json_string(manifest_name(m)));
    json_object_set_new(root, "arch", json_string(arch));
    json_object_set_new(root, "dtype", json_string(dtype));
    json_object_set_new(root, "shape", json_string(prob.shape));
    json_object_set_new(root, "space_size", json_integer((json_int_t)size));
    json_object_set_new(root, "candidates", json_integer((json_int_t)n));
    json_object_set_new(root, "compiled", json_integer((json_int_t)st.compiled));
    json_object_set_new(root, "failed",
                        json_integer((json_int_t)(st.compile_errors + st.failed)));
    json_object_set_new(root, "cache_hits", json_integer((json_int_t)st.cache_hits));
    json_object_set_new(root, "workers", json_integer(st.workers));
    json_object_set_new(root, "seconds", json_real(st.seconds));
    json_t *arr = json_array();
    for (size_t i = 0; i < n; i++) {
      const compile_result *r = &results[i];
      json_t *o = json_object();
      json_object_set_new(o, "config", compile_config_json(sp, rows[i].idx));
      json_object_set_new(o, "status", json_string(compile_status_word(r->status)));
      if (r->status == RT_OK) {
        json_object_set_new(o, "registers", json_integer(r->report.registers));
        json_object_set_new(o, "smem_bytes",
                            json_integer((json_int_t)r->report.smem_static + rows[i].smem_dynamic));
        json_object_set_new(o, "smem_static", json_integer(r->report.smem_static));
        json_object_set_new(o, "smem_dynamic", json_integer(rows[i].smem_dynamic));
        json_object_set_new(o, "spill_bytes",
                            json_integer((json_int_t)r->report.spill_stores + r->report.spill_loads));
        json_object_set_new(o, "stack_bytes", json_integer(r->report.stack_bytes));
        json_object_set_new(o, "threads", json_integer(rows[i].threads));
        json_object_set_new(o, "blocks_per_sm", json_integer(rows[i].occ.blocks_per_sm));
        json_object_set_new(o, "occupancy", json_real(rows[i].occ.fraction));
        json_object_set_new(o, "limiter", json_string(rows[i].occ.limiter));
      } else {
        json_object_set_new(o, "message", json_string(r->message));
      }
      json_object_set_new(o, "cache_hit", json_boolean(r->cache_hit));
      json_array_append_new(arr, o);
    }
    json_object_set_new(root, "results", arr);
    json_dumpf(root, stdout, JSON_INDENT(2) | JSON_PRESERVE_ORDER);
    fputc('\n', stdout);
    json_decref(root);
  } else {
    int w = 6;
    for (size_t i = 0; i < n; i++)
      if ((int)strlen(rows[i].config) > w) w = (int)strlen(rows[i].config);
    printf("%-*s  %4s  %7s  %6s  %5s  %s\n", w, "config", "regs", "smem", "spills", "occ",
           "limiter");
    for (size_t i = 0; i < n; i++) {
      const compile_result *r = &results[i];
      if (r->status == RT_OK)
        printf("%-*s  %4d  %7u  %6d  %4.0f%%  %s\n", w, rows[i].config, r->report.registers,
               (unsigned)r->report.smem_static + rows[i].smem_dynamic,
               r->report.spill_stores + r->report.spill_loads, 100 * rows[i].occ.fraction,
               rows[i].occ.limiter);
      else
        printf("%-*s  %s: %s\n", w, rows[i].config, compile_status_word(r->status), r->message);
    }
    printf("%s %s %s %s: %zu candidate%s of %zu, %zu compiled, %zu failed, %zu cache hit%s, "
           "%.2f s with %d worker%s\n",
           manifest_name(m), arch, dtype, prob.shape, n, n == 1 ? "" : "s", size, st.compiled,
           st.compile_errors + st.failed, st.cache_hits, st.cache_hits == 1 ? "" : "s",
           st.seconds, st.workers, st.workers == 1 ? "" : "s");
  }
  rc = (n > 0 && st.compiled == 0) ? CLI_EXIT_FAIL : CLI_EXIT_OK;
  if (rc) fprintf(stderr, "rooftune compile: no candidate compiled\n");

done:
  for (size_t i = 0; rows && i < n; i++) free(rows[i].config);
  for (size_t i = 0; cjobs && i < n; i++) free((char *)cjobs[i].source);
  for (size_t i = 0; results && i < n; i++) compile_result_free(&results[i]);
  free(rows);
  free(cjobs);
  free(results);
  free(source);
  cubin_cache_close(cache);
  space_free(sp);
  manifest_free(m);
  return rc;
}

const cli_command cli_cmd_compile = {"compile",
                                     "compile a template's configurations and show registers, "
                                     "smem, spills and occupancy",
                                     usage, cmd_compile, 0};
