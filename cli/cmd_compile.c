/* cmd_compile.c — `rooftune compile`: compile a template's space (a spread sample of it, its
 * covering set, or the model's fastest) for one architecture and show each candidate's static
 * facts: registers, shared memory, spills, occupancy and its limiter; or, with --dry-run, only
 * which of them the cubin cache holds.  No GPU needed. */
#include <jansson.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cli/cli.h"
#include "compile/compile_pool.h"
#include "compile/cubin_cache.h"
#include "model/gpu_spec.h"
#include "kernels/family.h"
#include "template/catalog.h"
#include "template/manifest.h"
#include "model/occupancy.h"
#include "template/cover.h"
#include "tuner/tune.h"

static const char usage[] =
    "usage: rooftune compile TEMPLATE --arch ARCH [--dtype D] [--shape S] [--kv-lens L]\n"
    "                        [--limit N | --cover | --best N] [--dry-run] [--jobs N]\n"
    "                        [--timeout SEC] [--no-pch] [--no-cache] [--logs]\n"
    "                        [--templates DIR]... [--json]\n\n"
    "Compiles every valid configuration of TEMPLATE (or a selection of them) with NVRTC for ARCH\n"
    "and prints one row per candidate: its configuration, registers per thread, shared memory\n"
    "(static + dynamic), spilled bytes, occupancy and what limits it, then a summary.  Results\n"
    "are cached (see ROOFTUNE_CACHE_DIR), so a second run compiles nothing.  No GPU is needed.\n";

static const char epilog[] =
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
  size_t idx;            /* configuration number in the space */
  char *config;          /* "A=1,B=2" */
  unsigned threads;      /* block size */
  unsigned smem_dynamic; /* bytes at launch */
  occupancy occ;         /* when compiled */
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
    if (sp_p->ints)
      json_object_set_new(o, sp_p->name, json_integer(sp_p->ints[cfg[p]]));
    else
      json_object_set_new(o, sp_p->name, json_string(sp_p->idents[cfg[p]]));
  }
  return o;
}

/* The command's options. */
typedef struct compile_cli {
  const char *name, *arch, *dtype, *shape;
  char kv_lens[8192]; /* --kv-lens, "" when not given */
  long jobs, limit, best;
  double timeout_s;
  int json, no_pch, no_cache, logs, cover, dry_run;
} compile_cli;

static const cli_option compile_table[] = {
    CLI_STRING(compile_cli, "arch", "ARCH", arch,
               "sm_75, sm_80, sm_86, sm_89, sm_90 or sm_90a (required)"),
    CLI_STRING(compile_cli, "dtype", "D", dtype,
               "input precision, one of the template's dtypes (default: its first)"),
    CLI_STRING(compile_cli, "shape", "S", shape,
               "problem shape in the family's syntax (default: the family's example,\n"
               "gemm 4096x4096x4096, attention 4x32x4096x128);\n"
               "constraints and launch sizes may depend on it; launch sizes that read\n"
               "device.sm_count use the first model GPU of ARCH (sm_90 and sm_90a: h200)"),
    CLI_LIST(compile_cli, "kv-lens", "L", kv_lens,
             "attention: each sequence's own KV length (as `rooftune tune` takes it)"),
    CLI_COUNT(compile_cli, "limit", "N", limit, 0,
              "compile N configurations spread evenly over the space (0: all)"),
    CLI_FLAG(compile_cli, "cover", cover,
             "compile the covering set `rooftune tune --cover` evaluates\n"
             "(template/cover.h)"),
    CLI_COUNT(compile_cli, "best", "N", best, 1,
              "compile the N configurations the model predicts fastest on the first\n"
              "model GPU of ARCH, the ones `rooftune tune --prior model --budget N`\n"
              "evaluates first"),
    CLI_FLAG(compile_cli, "dry-run", dry_run,
             "compile nothing: say which candidates the cubin cache holds"),
    CLI_COUNT(compile_cli, "jobs", "N", jobs, 0, "compile processes (default: one per core)"),
    CLI_NUMBER(compile_cli, "timeout", "SEC", timeout_s, CLI_OPT_ABOVE_ZERO,
               "give up on one compile after SEC seconds (default 300)"),
    CLI_FLAG(compile_cli, "no-pch", no_pch, "do not precompile the template's system headers"),
    CLI_FLAG(compile_cli, "no-cache", no_cache, "neither read nor write the cubin cache"),
    CLI_FLAG(compile_cli, "logs", logs,
             "print the whole NVRTC log of every candidate that failed to stderr"),
    CLI_TEMPLATES_OPTION("a folder of templates searched first (repeatable)"),
    CLI_FLAG(compile_cli, "json", json, "print one JSON object instead of the table"),
    CLI_END,
};

/* Parses argv into o; a CLI exit code when it fails, -1 when it succeeds. */
static int compile_parse(int argc, char **argv, compile_cli *o) {
  memset(o, 0, sizeof *o);
  o->timeout_s = 300;
  int arg, bad = cli_options_parse("compile", NULL, compile_table, argc, argv, o, &arg);
  if (bad) return bad;
  if (arg >= argc) return cli_usage_error("compile", "which template? (see 'rooftune templates')");
  o->name = argv[arg];
  if (arg + 1 < argc) return cli_usage_error("compile", "unexpected argument '%s'", argv[arg + 1]);
  if (!o->arch)
    return cli_usage_error("compile", "--arch is required; valid: %s", compile_arch_list());
  if (!compile_arch_valid(o->arch))
    return cli_usage_error("compile", "--arch: unknown architecture '%s'; valid: %s", o->arch,
                           compile_arch_list());
  if ((o->limit > 0) + o->cover + (o->best > 0) > 1)
    return cli_usage_error(
        "compile", "--limit, --cover and --best each choose the candidates: give one of them");
  if (o->dry_run && o->no_cache)
    return cli_usage_error("compile", "--dry-run reads the cache; --no-cache ignores it");
  return -1;
}

/* The model GPU of an architecture, as the tuner meets it: sm_90a templates run on an sm_90
 * GPU (h200). */
static const gpu_spec *compile_gpu(const char *arch) {
  const gpu_spec *g = gpu_spec_for_arch(arch);
  char base[16];
  size_t n = strlen(arch);
  if (!g && n > 1 && n < sizeof base && arch[n - 1] == 'a') {
    snprintf(base, sizeof base, "%.*s", (int)(n - 1), arch);
    g = gpu_spec_for_arch(base);
  }
  return g;
}

/* The template's problem for the options: its arch and dtype checked, the names its
 * expressions see (env) and its space.  A CLI exit code when it fails, -1 when it succeeds. */
static int compile_setup(compile_cli *o, const manifest *m, problem *prob, rt_vars *env,
                         space **sp) {
  rt_error err = {0};
  char list[256] = "";
  if (!manifest_has_arch(m, o->arch)) { /* sm_90a is sm_90 plus the arch-specific features */
    for (int i = 0; i < manifest_narchs(m); i++)
      snprintf(list + strlen(list), sizeof list - strlen(list), "%s%s", i ? ", " : "",
               manifest_arch(m, i));
    return cli_usage_error("compile", "--arch: template %s does not support %s; it supports: %s",
                           manifest_name(m), o->arch, list);
  }
  if (!o->dtype) o->dtype = manifest_dtype(m, 0);
  if (!manifest_has_dtype(m, o->dtype)) {
    for (int i = 0; i < manifest_ndtypes(m); i++)
      snprintf(list + strlen(list), sizeof list - strlen(list), "%s%s", i ? ", " : "",
               manifest_dtype(m, i));
    return cli_usage_error("compile", "--dtype: template %s has no dtype '%s'; it has: %s",
                           manifest_name(m), o->dtype, list);
  }
  const family_ops *fam = family_find(manifest_family(m));
  if (!fam) {
    rt_error_set(&err, RT_ERR_NOT_FOUND,
                 "template %s names family '%s', which is not known (known: %s)", manifest_name(m),
                 manifest_family(m), family_names());
    return cli_fail("compile", &err);
  }
  if (!o->shape) o->shape = fam->example_shape; /* the family's example problem */
  if (!o->shape)
    return cli_usage_error("compile", "--shape is required for family %s (%s)", fam->name,
                           fam->shape_help);
  if (fam->parse_shape(fam, o->shape, o->dtype, o->kv_lens[0] ? o->kv_lens : NULL, prob, &err))
    return cli_usage_error("compile", "--shape '%s': %s (%s)", o->shape, err.text, fam->shape_help);
  rt_status s = problem_env(fam, prob, arch_spec_find(o->arch), compile_gpu(o->arch), env, &err);
  if (s) {
    if (!err.text[0]) rt_error_set(&err, s, "cannot set the problem's names for %s", o->shape);
    return cli_fail("compile", &err);
  }
  if (manifest_build_space(m, env, sp, &err)) return cli_fail("compile", &err);
  return -1;
}

typedef struct predicted {
  size_t idx;
  double ms;
} predicted;
static int cmp_predicted(const void *a, const void *b) {
  const predicted *x = a, *y = b;
  return x->ms < y->ms ? -1 : x->ms > y->ms ? 1 : x->idx < y->idx ? -1 : x->idx > y->idx;
}

/* The candidates' configuration numbers into *idx (*n of them): all, an even spread of --limit,
 * the covering set, or the model's --best fastest.  RT_OK or an error in err. */
static rt_status compile_choose(const compile_cli *o, const manifest *m, const space *sp,
                                const rt_vars *env, const problem *prob, size_t **idx, size_t *n,
                                rt_error *err) {
  const size_t size = space_size(sp);
  *idx = NULL;
  *n = 0;
  if (o->cover) {
    const int np = manifest_ncover(m);
    const char *pairs[64][2];
    for (int i = 0; i < np && i < 64; i++) manifest_cover_pair(m, i, &pairs[i][0], &pairs[i][1]);
    return space_cover(sp, (const char *const(*)[2])pairs, np < 64 ? np : 64, idx, n, NULL, err);
  }
  size_t want = o->best > 0 ? (size_t)o->best : o->limit > 0 ? (size_t)o->limit : size;
  if (want > size) want = size;
  *idx = malloc((want ? want : 1) * sizeof **idx);
  if (!*idx) return rt_error_set(err, RT_ERR_NOMEM, "out of memory for %zu candidates", want);
  if (o->best > 0) { /* as tune --prior model ranks them: tune_predict_config, ties by number */
    const family_ops *fam = family_find(manifest_family(m));
    predicted *p = malloc((size ? size : 1) * sizeof *p);
    if (!p) return rt_error_set(err, RT_ERR_NOMEM, "out of memory for %zu predictions", size);
    for (size_t i = 0; i < size; i++)
      p[i] = (predicted){i, tune_predict_config(m, sp, i, env, compile_gpu(o->arch), o->dtype,
                                                fam->min_bytes(fam, prob))};
    qsort(p, size, sizeof *p, cmp_predicted);
    for (size_t i = 0; i < want; i++) (*idx)[i] = p[i].idx;
    free(p);
  } else {
    for (size_t i = 0; i < want; i++)
      (*idx)[i] = (size_t)((unsigned long long)i * size / want); /* an even spread */
  }
  *n = want;
  return RT_OK;
}

/* --dry-run: which candidates the cache holds (results[i].cache_hit, status from the cache);
 * nothing is compiled.  Fills st as the pool would. */
static rt_status compile_dry_run(const compile_job *jobs, size_t n, const compile_options *copt,
                                 cubin_cache *cache, compile_result *results,
                                 compile_pool_stats *st, rt_error *err) {
  memset(st, 0, sizeof *st);
  st->jobs = n;
  unsigned char digest[32], key[32];
  rt_status s = compile_options_digest(copt, digest, err);
  for (size_t i = 0; !s && i < n; i++) {
    rt_error kerr = {0};
    if (compile_key(digest, copt, jobs[i].name, jobs[i].source, key, NULL, &kerr)) {
      memset(&results[i], 0, sizeof results[i]);
      results[i].status = kerr.code;
      snprintf(results[i].message, sizeof results[i].message, "%.255s", kerr.text);
      st->failed++;
    } else if (cache && cubin_cache_get(cache, key, &results[i])) {
      st->cache_hits++;
      if (results[i].status == RT_OK)
        st->compiled++;
      else
        st->compile_errors++;
    } else {
      memset(&results[i], 0, sizeof results[i]);
      results[i].status = RT_ERR_NOT_FOUND;
      snprintf(results[i].message, sizeof results[i].message,
               "not in the cache: would be compiled");
    }
  }
  return s;
}

/* The table (or JSON) of the candidates and the summary line; the exit code. */
static int compile_print(const compile_cli *o, const manifest *m, const space *sp,
                         const problem *prob, size_t size, compile_row *rows,
                         const compile_result *results, size_t n, const compile_pool_stats *st,
                         const arch_spec *as) {
  const char *arch = o->arch, *dtype = o->dtype;
  for (size_t i = 0; o->logs && i < n; i++)
    if (results[i].status != RT_OK && !o->dry_run)
      fprintf(stderr, "== %s: %s\n%s\n", rows[i].config, compile_status_word(results[i].status),
              results[i].log ? results[i].log : "");
  for (size_t i = 0; i < n; i++) {
    if (results[i].status != RT_OK) continue;
    occupancy_input in = {(int)rows[i].threads, results[i].report.registers,
                          results[i].report.smem_static, (int)rows[i].smem_dynamic};
    occupancy_compute(as, &in, &rows[i].occ, NULL);
  }
  const size_t to_compile = o->dry_run ? n - st->cache_hits : 0;
  if (o->json) {
    json_t *root = json_object();
    json_object_set_new(root, "template", json_string(manifest_name(m)));
    json_object_set_new(root, "arch", json_string(arch));
    json_object_set_new(root, "dtype", json_string(dtype));
    json_object_set_new(root, "shape", json_string(prob->shape));
    json_object_set_new(root, "space_size", json_integer((json_int_t)size));
    json_object_set_new(root, "candidates", json_integer((json_int_t)n));
    json_object_set_new(root, "compiled", json_integer((json_int_t)st->compiled));
    json_object_set_new(root, "failed",
                        json_integer((json_int_t)(st->compile_errors + st->failed)));
    json_object_set_new(root, "cache_hits", json_integer((json_int_t)st->cache_hits));
    if (o->dry_run) json_object_set_new(root, "to_compile", json_integer((json_int_t)to_compile));
    json_object_set_new(root, "workers", json_integer(st->workers));
    json_object_set_new(root, "seconds", json_real(st->seconds));
    json_t *arr = json_array();
    for (size_t i = 0; i < n; i++) {
      const compile_result *r = &results[i];
      json_t *obj = json_object();
      json_object_set_new(obj, "config", compile_config_json(sp, rows[i].idx));
      json_object_set_new(
          obj, "status",
          json_string(o->dry_run && !r->cache_hit ? "not_cached" : compile_status_word(r->status)));
      if (r->status == RT_OK) {
        json_object_set_new(obj, "registers", json_integer(r->report.registers));
        json_object_set_new(obj, "smem_bytes",
                            json_integer((json_int_t)r->report.smem_static + rows[i].smem_dynamic));
        json_object_set_new(obj, "smem_static", json_integer(r->report.smem_static));
        json_object_set_new(obj, "smem_dynamic", json_integer(rows[i].smem_dynamic));
        json_object_set_new(
            obj, "spill_bytes",
            json_integer((json_int_t)r->report.spill_stores + r->report.spill_loads));
        json_object_set_new(obj, "stack_bytes", json_integer(r->report.stack_bytes));
        json_object_set_new(obj, "threads", json_integer(rows[i].threads));
        json_object_set_new(obj, "blocks_per_sm", json_integer(rows[i].occ.blocks_per_sm));
        json_object_set_new(obj, "occupancy", json_real(rows[i].occ.fraction));
        json_object_set_new(obj, "limiter", json_string(rows[i].occ.limiter));
      } else {
        json_object_set_new(obj, "message", json_string(r->message));
      }
      json_object_set_new(obj, "cache_hit", json_boolean(r->cache_hit));
      json_array_append_new(arr, obj);
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
      else if (o->dry_run && !r->cache_hit)
        printf("%-*s  not in the cache\n", w, rows[i].config);
      else
        printf("%-*s  %s: %s\n", w, rows[i].config, compile_status_word(r->status), r->message);
    }
    if (o->dry_run)
      printf(
          "%s %s %s %s: %zu candidate%s of %zu, %zu in the cache, %zu to compile (dry run: nothing "
          "compiled)\n",
          manifest_name(m), arch, dtype, prob->shape, n, n == 1 ? "" : "s", size, st->cache_hits,
          to_compile);
    else
      printf(
          "%s %s %s %s: %zu candidate%s of %zu, %zu compiled, %zu failed, %zu cache hit%s, %.2f s "
          "with %d worker%s\n",
          manifest_name(m), arch, dtype, prob->shape, n, n == 1 ? "" : "s", size, st->compiled,
          st->compile_errors + st->failed, st->cache_hits, st->cache_hits == 1 ? "" : "s",
          st->seconds, st->workers, st->workers == 1 ? "" : "s");
  }
  if (o->dry_run) return CLI_EXIT_OK;
  if (n > 0 && st->compiled == 0) {
    fprintf(stderr, "rooftune compile: no candidate compiled\n");
    return CLI_EXIT_FAIL;
  }
  return CLI_EXIT_OK;
}

static int cmd_compile(int argc, char **argv) {
  compile_cli o;
  int rc = compile_parse(argc, argv, &o);
  if (rc >= 0) return rc;
  rt_error err = {0};
  manifest *m = NULL;
  rt_status s = catalog_find(NULL, o.name, &m, &err);
  if (s == RT_ERR_NOT_FOUND) return cli_usage_error("compile", "%s", err.text);
  if (s) return cli_fail("compile", &err);

  rc = CLI_EXIT_FAIL;
  space *sp = NULL;
  char *source = NULL;
  compile_row *rows = NULL;
  compile_job *cjobs = NULL;
  compile_result *results = NULL;
  cubin_cache *cache = NULL;
  size_t n = 0, *chosen = NULL;
  const char *arch = o.arch, *dtype;
  problem prob;
  rt_vars env;
  if ((rc = compile_setup(&o, m, &prob, &env, &sp)) >= 0) goto done;
  rc = CLI_EXIT_FAIL;
  dtype = o.dtype;
  const arch_spec *as = arch_spec_find(arch);
  size_t size = space_size(sp);
  if (compile_choose(&o, m, sp, &env, &prob, &chosen, &n, &err) ||
      manifest_read_source(m, &source, &err)) {
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
    size_t idx = chosen[i];
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
  copt.pch = !o.no_pch;

  if (!o.no_cache) {
    rt_error cerr = {0};
    if (cubin_cache_open_default(&cache, &cerr) != RT_OK) {
      fprintf(stderr, "rooftune compile: warning: %s; compiling without the cache\n", cerr.text);
      cache = NULL;
    } else if (cache && cubin_cache_warning(cache)[0]) {
      fprintf(stderr, "rooftune compile: warning: %s\n", cubin_cache_warning(cache));
    }
  }
  compile_progress prog = {n, 0, !o.json && cli_stderr_is_tty()};
  compile_pool_options popt = {0};
  popt.workers = (int)o.jobs;
  popt.timeout_s = o.timeout_s;
  popt.cache = cache;
  popt.progress = compile_on_result;
  popt.progress_ctx = &prog;
  compile_pool_stats st;
  if (o.dry_run ? compile_dry_run(cjobs, n, &copt, cache, results, &st, &err)
                : compile_pool_run(cjobs, n, &copt, &popt, results, &st, &err)) {
    rc = cli_fail("compile", &err);
    goto done;
  }
  if (cache && cubin_cache_warning(cache)[0] && !cubin_cache_usable(cache))
    fprintf(stderr, "rooftune compile: warning: %s\n", cubin_cache_warning(cache));
  rc = compile_print(&o, m, sp, &prob, size, rows, results, n, &st, as);

done:
  for (size_t i = 0; rows && i < n; i++) free(rows[i].config);
  for (size_t i = 0; cjobs && i < n; i++) free((char *)cjobs[i].source);
  for (size_t i = 0; results && i < n; i++) compile_result_free(&results[i]);
  free(rows);
  free(chosen);
  free(cjobs);
  free(results);
  free(source);
  cubin_cache_close(cache);
  space_free(sp);
  manifest_free(m);
  return rc;
}

const cli_command cli_cmd_compile = {.name = "compile",
                                     .summary =
                                         "compile a template's configurations and show registers, "
                                         "smem, spills and occupancy",
                                     .usage = usage,
                                     .options = compile_table,
                                     .epilog = epilog,
                                     .run = cmd_compile};
