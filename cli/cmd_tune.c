/* cmd_tune.c — `rooftune tune`: flags → tune_run(), progress on stderr, a result table or
 * JSON on stdout. */
#include <jansson.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cli/cli.h"
#include "db/export.h"
#include "search/budget.h"
#include "search/strategy.h"
#include "tuner/device/device.h"
#include "template/catalog.h"
#include "tuner/tune.h"
#include "core/util.h"

static const char usage[] =
    "usage: rooftune tune FAMILY|TEMPLATE --shape S --dtype D [--device DEV] [--strategy NAME]\n"
    "                     [--budget N] [--seconds S] [--seed N] [--timeout S] [--db FILE]\n"
    "                     [--config C | --cover] [--prior FILE | --no-prior] [--templates DIR]...\n"
    "                     [--kv-lens L]\n"
    "                     [--allow-tf32] [--no-db] [--json]\n\n"
    "Tunes a kernel family (gemm: every template that supports the dtype and the GPU, plus\n"
    "cuBLASLt on a real GPU) or one template for one problem: builds the space, compiles\n"
    "candidates with NVRTC (in parallel, through the cubin cache), measures, predicts or\n"
    "replays them, diagnoses each (dominant limit and lever), lets the search strategy pick the\n"
    "next ones, and stores every candidate and each template's winner (with its cubin) in the\n"
    "database.  Configurations the database already holds for the same problem, device,\n"
    "template version and toolkit are not evaluated again.  Unless --prior or --no-prior\n"
    "says otherwise, each template's search starts from the database's results of the same\n"
    "template and dtype on other devices and at nearby shapes (one line says which).\n";

typedef struct progress_state {
  int tty;          /* draw a bar instead of lines */
  int drawn;        /* a bar is on the line */
  const char *note; /* "times are predictions ...": printed once, before the first candidate */
  FILE *note_out;   /* where it goes: stdout, or stderr when stdout carries JSON */
} progress_state;

/* The note comes after the flags, template and shape were accepted, so bad input gets only its
 * one error line; it still comes before anything else the run prints. */
static void print_note(progress_state *ps) {
  if (!ps->note || !ps->note[0]) return;
  fprintf(ps->note_out, "note: %s\n", ps->note);
  fflush(NULL);
  ps->note = NULL;
}

static void on_progress(void *ctx, const tune_progress *p) {
  progress_state *ps = ctx;
  print_note(ps);
  const candidate_result *r = p->last;
  double eta =
      p->done > 0 && p->total > p->done ? p->elapsed_s / p->done * (p->total - p->done) : 0;
  if (ps->tty) {
    int width = 24, fill = p->total ? (int)(width * (double)p->done / p->total) : 0;
    if (fill > width) fill = width;
    char bar[32];
    for (int i = 0; i < width; i++) bar[i] = i < fill ? '#' : '.';
    bar[width] = 0;
    fprintf(stderr, "\r[%s] %zu/%zu", bar, p->done, p->total);
    if (p->have_best) fprintf(stderr, "  best %.4f ms (%s)", p->best_ms, p->best_template);
    if (p->done) fprintf(stderr, "  ETA %.0f s", eta);
    fprintf(stderr, "%s   ", r ? "" : "  (compiling)");
    ps->drawn = 1;
  } else if (r) {
    if (p->last_resumed)
      fprintf(stderr, "[db] %s %s: ", r->template_name, r->config);
    else
      fprintf(stderr, "[%zu/%zu] %s %s: ", p->done, p->total, r->template_name, r->config);
    if (r->status == RT_OK)
      fprintf(stderr, "%.4f ms%s%s\n", r->time_ms, r->diag.limit[0] ? " " : "", r->diag.limit);
    else
      fprintf(stderr, "%s (%s)\n", rt_status_name(r->status), r->detail);
  }
  fflush(stderr);
}

static double tflops(const candidate_result *r) {
  return r->time_ms > 0 && r->flops > 0 ? r->flops / (r->time_ms * 1e-3) / 1e12 : 0;
}

static int by_time(const void *a, const void *b) {
  const candidate_result *x = *(candidate_result *const *)a, *y = *(candidate_result *const *)b;
  int fx = x->status != RT_OK, fy = y->status != RT_OK;
  if (fx != fy) return fx - fy;
  return (x->time_ms > y->time_ms) - (x->time_ms < y->time_ms);
}

/* "1.21 GB" */
static void fmt_bytes(char *buf, size_t size, double b) {
  if (b >= 1e9)
    snprintf(buf, size, "%.2f GB", b / 1e9);
  else if (b >= 1e6)
    snprintf(buf, size, "%.1f MB", b / 1e6);
  else
    snprintf(buf, size, "%.0f kB", b / 1e3);
}

/* The width a template column needs for the names of order[0..n) and its heading. */
static int name_width(const candidate_result *const *order, size_t n) {
  size_t w = strlen("template");
  for (size_t i = 0; i < n; i++)
    if (strlen(order[i]->template_name) > w) w = strlen(order[i]->template_name);
  return (int)w;
}

/* The width the lever column needs for order[0..n)'s levers and its heading. */
static int lever_width(const candidate_result *const *order, size_t n) {
  size_t w = strlen("lever");
  for (size_t i = 0; i < n; i++)
    if (order[i]->status == RT_OK && strlen(order[i]->diag.lever) > w)
      w = strlen(order[i]->diag.lever);
  return (int)w;
}

/* The facts of the best candidates, each said measured (GPU counters) or modelled. */
static void print_facts(const tune_report *rep, const candidate_result *const *order, size_t n) {
  int any = 0;
  for (size_t i = 0; i < n; i++) any |= order[i]->counters.measured;
  int w = name_width(order, n < 6 ? n : 6); /* names never cut: the column fits them */
  printf("\n%-*s %-12s %-22s %-10s %-16s %-20s %s\n", w, "template", "time ms", "DRAM bytes",
         "L2 bytes", "occupancy", "pipes tensor/fma/SM", "top stalls (measured)");
  size_t shown = 0;
  for (size_t i = 0; i < n && shown < 6; i++) {
    const candidate_result *r = order[i];
    if (r->status != RT_OK) break;
    if (any && !r->counters.measured) continue;
    shown++;
    char dram[40], model[16], l2[16] = "-", occ[24], pipes[24] = "-";
    fmt_bytes(model, sizeof model, r->dram_bytes);
    if (r->counters.measured) {
      char m[16];
      fmt_bytes(m, sizeof m, r->counters.dram_read_bytes + r->counters.dram_write_bytes);
      snprintf(dram, sizeof dram, "%s (model %s)", m, model);
      fmt_bytes(l2, sizeof l2, r->counters.l2_bytes);
      snprintf(occ, sizeof occ, "%.0f %% (calc %.0f)", 100 * r->counters.occupancy,
               100 * r->facts.occupancy);
      snprintf(pipes, sizeof pipes, "%.0f/%.0f/%.0f %%", 100 * r->counters.tensor_pipe,
               100 * r->counters.fma_pipe, 100 * r->counters.sm_throughput);
    } else {
      snprintf(dram, sizeof dram, "%s modelled", model);
      snprintf(occ, sizeof occ, "%.0f %% calculated", 100 * r->facts.occupancy);
    }
    printf("%-*s %-12.4f %-22s %-10s %-16s %-20s %s\n", w, r->template_name, r->time_ms, dram, l2,
           occ, pipes, r->counters.measured && r->counters.stalls[0] ? r->counters.stalls : "-");
  }
  if (!any)
    printf("(no hardware counters on %s: bytes from the cost formulas, occupancy calculated)\n",
           rep->device);
}

static void print_table(const tune_report *rep, int stored) {
  size_t n = rep->nresults;
  const candidate_result **order = malloc((n ? n : 1) * sizeof *order);
  if (!order) return;
  for (size_t i = 0; i < n; i++) order[i] = &rep->results[i];
  qsort(order, n, sizeof *order, by_time);
  size_t show = n < 12 ? n : 12;
  int w = name_width(order, show), lw = lever_width(order, show);
  printf("\n%9s %8s %-9s %-5s %-9s %-*s %-*s %s\n", "time ms", "TFLOP/s", "timing", "math", "limit",
         w, "template", lw, "lever", "config");
  for (size_t i = 0; i < show; i++) {
    const candidate_result *r = order[i];
    char tf[16] = "-";
    if (tflops(r) > 0) snprintf(tf, sizeof tf, "%.1f", tflops(r));
    const char *prec = r->precision[0] ? r->precision : "-";
    if (r->status == RT_OK)
      printf("%9.4f %8s %-9s %-5s %-9s %-*s %-*s %s\n", r->time_ms, tf, timing_kind_name(r->timing),
             prec, r->diag.limit[0] ? r->diag.limit : "-", w, r->template_name, lw,
             r->diag.lever[0] ? r->diag.lever : "-", r->config);
    else /* a failure's detail is cut to the lever column: the database has it whole */
      printf("%9s %8s %-9s %-5s %-9s %-*s %-*.*s %s\n", "-", "-", timing_kind_name(r->timing), prec,
             rt_status_name(r->status), w, r->template_name, lw, lw < 28 ? 28 : lw, r->detail,
             r->config);
  }
  if (n > show)
    printf("(%zu more; %s)\n", n - show,
           stored ? "every candidate is in the database" : "--no-db: none was stored");
  print_facts(rep, order, n);
  free(order);
}

/* What the budget across templates did with each (tune_report.tmpl), when there was a choice:
 * more than one template, or one stopped at its roof. */
static void print_templates(const tune_report *rep) {
  int show = rep->ntmpl > 1;
  for (size_t i = 0; i < rep->ntmpl; i++) show |= !strcmp(rep->tmpl[i].outcome, "at its roof");
  if (!show) return;
  printf("\ntemplates, by roof bound (");
  if (rep->roof_rules)
    printf(
        "ruled out when the bound is over %.0f %% above the best; stopped at %.0f %% of the "
        "roof):\n",
        100 * BUDGET_SLACK, 100 * rep->roof_stop);
  else
    printf("the rules are off for brute_force, --config and --cover):\n");
  size_t w = strlen("template");
  for (size_t i = 0; i < rep->ntmpl; i++)
    if (strlen(rep->tmpl[i].name) > w) w = strlen(rep->tmpl[i].name);
  printf("%-*s %-20s %-11s %-11s %-11s %s\n", (int)w, "template", "roof bound", "roof", "best",
         "evaluations", "budget");
  for (size_t i = 0; i < rep->ntmpl; i++) {
    const tune_template_report *t = &rep->tmpl[i];
    char bound[32] = "-", roof[16] = "-", best[16] = "-", what[64];
    if (t->bound_ms > 0)
      snprintf(bound, sizeof bound, "%.4g ms (%s)", t->bound_ms,
               t->bound_by_bytes ? "bytes" : "FLOPs");
    if (t->roof_ms > 0) snprintf(roof, sizeof roof, "%.4g ms", t->roof_ms);
    if (t->best_ms > 0) snprintf(best, sizeof best, "%.4g ms", t->best_ms);
    if (t->against_ms > 0)
      snprintf(what, sizeof what, "%s against %.4g ms", t->outcome, t->against_ms);
    else
      snprintf(what, sizeof what, "%s", t->outcome);
    printf("%-*s %-20s %-11s %-11s %-11ld %s\n", (int)w, t->name, bound, roof, best, t->evaluated,
           what);
  }
}

/* The same as JSON. */
static json_t *templates_json(const tune_report *rep) {
  json_t *a = json_array();
  for (size_t i = 0; i < rep->ntmpl; i++) {
    const tune_template_report *t = &rep->tmpl[i];
    json_t *o = json_pack("{ss si ss}", "template", t->name, "evaluated", (int)t->evaluated,
                          "outcome", t->outcome);
    json_object_set_new(o, "bound_ms", t->bound_ms > 0 ? json_real(t->bound_ms) : json_null());
    json_object_set_new(o, "bound_by",
                        json_string(t->bound_ms > 0 ? t->bound_by_bytes ? "bytes" : "flops" : ""));
    json_object_set_new(o, "roof_ms", t->roof_ms > 0 ? json_real(t->roof_ms) : json_null());
    json_object_set_new(o, "best_ms", t->best_ms > 0 ? json_real(t->best_ms) : json_null());
    if (t->against_ms > 0) json_object_set_new(o, "ruled_out_against_ms", json_real(t->against_ms));
    if (t->eval_s > 0) json_object_set_new(o, "mean_evaluation_s", json_real(t->eval_s));
    json_array_append_new(a, o);
  }
  return a;
}

/* CONFIG with the assignments of MOVE ("BLOCK_N=256") put in: the configuration a lever proposes. */
static void apply_move(const char *config, const char *move, char *out, size_t size) {
  snprintf(out, size, "%s", config);
  char mv[160];
  snprintf(mv, sizeof mv, "%s", move);
  for (char *save = NULL, *a = strtok_r(mv, ",", &save); a; a = strtok_r(NULL, ",", &save)) {
    char *eq = strchr(a, '=');
    if (!eq) continue;
    size_t nl = (size_t)(eq - a);
    char next[1024];
    size_t k = 0;
    for (const char *p = out; *p;) {
      const char *end = strchr(p, ',');
      size_t len = end ? (size_t)(end - p) : strlen(p);
      int hit = len > nl && p[nl] == '=' && !strncmp(p, a, nl);
      k += (size_t)snprintf(next + k, sizeof next - k, "%s%.*s", k ? "," : "",
                            hit ? (int)strlen(a) : (int)len, hit ? a : p);
      if (k >= sizeof next) break;
      p = end ? end + 1 : p + len;
    }
    snprintf(out, size, "%s", next);
  }
}

/* The command's options; cmd_tune hands them to tune_options. */
typedef struct tune_cli {
  const char *shape, *dtype, *device, *strategy, *db, *config; /* the flags of the same names */
  const char *prior[TUNE_MAX_PRIORS];                          /* --prior, in the order given */
  int nprior;
  long budget, seconds, seed, timeout; /* --budget, --seconds, --seed, --timeout; 0: the default */
  char kv_lens[8192];                  /* --kv-lens, "" when not given */
  int allow_tf32, cover, no_db, json;  /* --allow-tf32, --cover, --no-db, --json */
  int blind;                           /* --blind */
  int no_prior;                        /* --no-prior */
} tune_cli;

/* --prior FILE, repeatable. */
static int tune_add_prior(const char *cmd, const char *value, void *base) {
  tune_cli *cli = base;
  if (cli->nprior >= TUNE_MAX_PRIORS)
    return cli_usage_error(cmd, "--prior is given at most %d times", TUNE_MAX_PRIORS);
  cli->prior[cli->nprior++] = value;
  return 0;
}

static const cli_option tune_table[] = {
    CLI_STRING(tune_cli, "shape", "S", shape,
               "problem shape, e.g. 4096x4096x4096 (MxNxK) for gemm"),
    CLI_STRING(tune_cli, "dtype", "D", dtype,
               "input precision: f32 (fp32 math), tf32 (fp32 inputs, tf32 tensor-core\n"
               "products), f16, bf16"),
    CLI_FLAG(tune_cli, "allow-tf32", allow_tf32,
             "with --dtype f32: admit tf32 candidates too (the mma templates,\n"
             "cuBLASLt's FAST_TF32); every result says what it computed in"),
    CLI_STRING(tune_cli, "device", "DEV", device,
               "{DEVICES}\n"
               "default: cuda when a GPU is present, else model:h200 (times are then\n"
               "predictions, and the first line says so)"),
    CLI_STRING(tune_cli, "strategy", "NAME", strategy,
               "search strategy: {STRATEGIES}\n"
               "(default {STRATEGY_DEFAULT}; see 'rooftune replay --help')"),
    CLI_FLAG(tune_cli, "blind", blind,
             "tell the strategy only times, no diagnosis and no pre-run facts: the same\n"
             "tune without --blind shows what the diagnosis adds"),
    CLI_COUNT(tune_cli, "budget", "N", budget, 1,
              "new candidates to evaluate (default 32; each costs a compile);\n"
              "configurations the database already holds do not count"),
    CLI_COUNT(tune_cli, "seconds", "S", seconds, 0,
              "stop after S seconds of wall time (default: no limit)"),
    CLI_COUNT(tune_cli, "seed", "N", seed, 0, "strategy and input seed (default 0)"),
    CLI_COUNT(tune_cli, "timeout", "S", timeout, 1,
              "per-candidate limit on the GPU, in seconds (default 20)"),
    CLI_STRING(tune_cli, "db", "FILE", db, "database (default: " CLI_DEFAULT_DB_TEXT ")"),
    CLI_STRING(tune_cli, "config", "C", config,
               "evaluate only this configuration of TEMPLATE (\"BLOCK_M=128,...\", every\n"
               "parameter), afresh even when the database holds it"),
    CLI_FLAG(tune_cli, "cover", cover,
             "evaluate only a covering set of each template's space: every value of\n"
             "every parameter and every value pair of the manifest's \"cover\" pairs\n"
             "at least once (template/cover.h; give a --budget that holds it)"),
    CLI_CALL("prior", "FILE", tune_add_prior, CLI_OPT_REPEAT,
             "results of the same kernel elsewhere, typically another GPU's: a\n"
             "rooftune export ('rooftune db export' of that machine's database; the\n"
             "rows of each template for this shape and dtype), a Kernel Tuner cache\n"
             "or KTT results file.  Each template's search evaluates the fastest of\n"
             "its configurations there first (parameters matched by name).\n"
             "A rooftune database (an SQLite file, whatever its name) gives its\n"
             "results of each template and dtype on every device and shape, nearest\n"
             "shapes first.  Repeatable: the configurations by their mean rank over\n"
             "the files.  --prior model: the model device's ranking for this GPU\n"
             "instead.  Without --prior: the --db database's own results of each\n"
             "template on other devices and shapes"),
    CLI_FLAG(tune_cli, "no-prior", no_prior,
             "no prior at all, not even the database's own results elsewhere"),
    CLI_TEMPLATES_OPTION("a folder of templates and family declarations (family.json) searched\n"
                         "before $ROOFTUNE_TEMPLATE_PATH and the shipped templates; repeatable"),
    CLI_LIST(tune_cli, "kv-lens", "L", kv_lens,
             "attention: each sequence's own KV length, as L1,L2,... (B numbers, each\n"
             "at most SKV) or a file of them (one per line or comma-separated)"),
    CLI_FLAG(tune_cli, "no-db", no_db, "store nothing"),
    CLI_FLAG(tune_cli, "json", json, "print one JSON object instead of the table"),
    CLI_END,
};

/* Where a result's output was checked: "gpu", "sim", or null. */
static json_t *checked_on_json(const candidate_result *r) {
  return r->checked_on[0] ? json_string(r->checked_on) : json_null();
}

/* --json's "best": the winner, its diagnosis, verdict and counters. */
static json_t *best_json(const tune_report *rep) {
  const candidate_result *b = &rep->best;
  json_t *best = json_object();
  json_object_set_new(best, "template", json_string(b->template_name));
  json_object_set_new(best, "config", db_export_config_json(b->config));
  json_object_set_new(best, "time_ms", json_real(b->time_ms));
  json_object_set_new(best, "verified", json_boolean(b->verified));
  json_object_set_new(best, "checked_on", checked_on_json(b));
  json_object_set_new(best, "tflops", json_real(tflops(b)));
  json_object_set_new(best, "limit", json_string(b->diag.limit));
  json_object_set_new(best, "lever", json_string(b->diag.lever));
  json_object_set_new(best, "sentence", json_string(b->diag.sentence));
  json_object_set_new(best, "move", json_string(b->diag.move));
  json_object_set_new(best, "precision", json_string(b->precision));
  json_object_set_new(best, "measured", json_string(b->diag.basis));
  json_object_set_new(best, "verdict", json_string(b->verdict));
  json_object_set_new(best, "tied", json_integer((json_int_t)rep->tied));
  json_object_set_new(best, "dram_bytes_modelled", json_real(b->dram_bytes));
  if (b->counters.measured)
    json_object_set_new(
        best, "counters",
        json_pack("{sf sf sf sf sf sf sf sf ss}", "dram_read_bytes", b->counters.dram_read_bytes,
                  "dram_write_bytes", b->counters.dram_write_bytes, "l2_bytes",
                  b->counters.l2_bytes, "occupancy", b->counters.occupancy, "tensor_pipe",
                  b->counters.tensor_pipe, "fma_pipe", b->counters.fma_pipe, "sm_throughput",
                  b->counters.sm_throughput, "duration_ms", b->counters.duration_ms, "stalls",
                  b->counters.stalls));
  return best;
}

/* --json's object for a finished run. */
static void print_json(const tune_options *o, const tune_report *rep, const char *note) {
  json_t *root = json_object();
  json_object_set_new(root, "device", json_string(rep->device));
  json_object_set_new(root, "timing", json_string(timing_kind_name(rep->timing)));
  json_object_set_new(root, "evaluated", json_integer((json_int_t)rep->evaluated));
  json_object_set_new(root, "resumed", json_integer((json_int_t)rep->resumed));
  json_object_set_new(root, "failed", json_integer((json_int_t)rep->failed));
  json_object_set_new(root, "budget", json_integer(rep->budget));
  json_t *statuses = json_object();
  for (size_t i = 0; i < rep->nresults; i++) {
    const char *name = rt_status_name(rep->results[i].status);
    json_t *cnt = json_object_get(statuses, name);
    json_object_set_new(statuses, name, json_integer(cnt ? json_integer_value(cnt) + 1 : 1));
  }
  json_object_set_new(root, "statuses", statuses);
  json_t *per = json_object(); /* the fastest of each template (cuBLASLt included on a GPU) */
  for (size_t i = 0; i < rep->nresults; i++) {
    const candidate_result *r = &rep->results[i];
    if (r->status != RT_OK) continue;
    json_t *cur = json_object_get(per, r->template_name);
    if (cur && json_number_value(json_object_get(cur, "time_ms")) <= r->time_ms) continue;
    json_object_set_new(per, r->template_name,
                        json_pack("{sf sf ss ss ss so}", "time_ms", r->time_ms, "tflops", tflops(r),
                                  "limit", r->diag.limit, "config", r->config, "precision",
                                  r->precision, "checked_on", checked_on_json(r)));
  }
  json_object_set_new(root, "best_per_template", per);
  json_t *all = json_array(); /* every result of the run, with where its output was checked */
  for (size_t i = 0; i < rep->nresults; i++) {
    const candidate_result *r = &rep->results[i];
    json_array_append_new(
        all, json_pack("{ss ss ss sf sf sb so ss}", "template", r->template_name, "config",
                       r->config, "status", rt_status_name(r->status), "time_ms", r->time_ms,
                       "verify_error", r->verify_error, "verified", r->verified, "checked_on",
                       checked_on_json(r), "detail", r->detail));
  }
  json_object_set_new(root, "results", all);
  json_object_set_new(root, "strategy", json_string(rep->strategy));
  json_object_set_new(root, "blind", json_boolean(o->blind));
  json_object_set_new(
      root, "saved",
      json_pack("{si sf si sf}", "same_cubin", (int)rep->deduplicated, "same_cubin_gpu_s",
                rep->dedup_saved_s, "stopped_early", (int)rep->stopped_early, "stopped_early_gpu_s",
                rep->early_saved_s));
  json_object_set_new(root, "templates", templates_json(rep));
  json_object_set_new(
      root, "roof_rules",
      json_pack("{sb sf sf si sf}", "on", rep->roof_rules, "slack",
                rep->roof_rules ? BUDGET_SLACK : 0.0, "stop", rep->roof_stop, "unspent",
                (int)rep->roof_unspent, "unspent_gpu_s", rep->roof_unspent_gpu_s));
  json_object_set_new(root, "profiled", json_integer((json_int_t)rep->profiled));
  json_object_set_new(
      root, "compile",
      json_pack("{sf si}", "seconds", rep->compile_seconds, "cache_hits", (int)rep->cache_hits));
  if (rep->calibration[0]) json_object_set_new(root, "calibration", json_string(rep->calibration));
  json_object_set_new(root, "seconds", json_real(rep->seconds));
  if (rep->interrupted) json_object_set_new(root, "interrupted", json_true());
  if (note[0] || rep->note[0])
    json_object_set_new(root, "note", json_string(rep->note[0] ? rep->note : note));
  if (rep->ceilings[0]) json_object_set_new(root, "ceilings", json_string(rep->ceilings));
  /* the shape outputs were checked on (the sim's smaller one), null when none was checked */
  json_object_set_new(root, "checked_shape",
                      rep->checked_shape[0] ? json_string(rep->checked_shape) : json_null());
  if (o->prior) {
    json_t *pj =
               json_pack("{ss ss ss}", "source", "files", "file", o->prior, "summary", rep->prior),
           *files = json_array();
    for (int i = 0; i < o->npriors; i++) json_array_append_new(files, json_string(o->priors[i]));
    json_object_set_new(pj, "files", files);
    json_object_set_new(root, "prior", pj);
  } else if (rep->prior_default) {
    json_object_set_new(root, "prior",
                        json_pack("{ss ss sI}", "source", "database", "summary", rep->prior,
                                  "results", (json_int_t)rep->prior_results));
  } else {
    json_object_set_new(root, "prior", json_null());
  }
  if (o->db_path) {
    json_object_set_new(root, "db", json_string(o->db_path));
    json_object_set_new(root, "run_id", json_integer(rep->run_id));
  }
  json_object_set_new(root, "best", rep->have_best ? best_json(rep) : json_null());
  char *text = json_dumps(root, JSON_INDENT(2));
  if (text) puts(text);
  free(text);
  json_decref(root);
}

/* The result of template tmpl at configuration config this run holds (evaluated or told from
 * the database); NULL: none. */
static const candidate_result *measured_at(const tune_report *rep, const char *tmpl,
                                           const char *config) {
  for (size_t i = 0; i < rep->nresults; i++)
    if (!strcmp(rep->results[i].config, config) && !strcmp(rep->results[i].template_name, tmpl))
      return &rep->results[i];
  return NULL;
}

/* The lever's moves: the first one nothing measured ("try"), or, when the winner's diagnosis
 * came from the database and every move it names was measured since, that it is exhausted. */
static void print_moves(const tune_report *rep, const candidate_result *b) {
  char mv[160], skipped[512] = "";
  snprintf(mv, sizeof mv, "%s", b->diag.move);
  int single = !strchr(mv, ',');
  for (char *save = NULL, *a = strtok_r(mv, ",", &save); a; a = strtok_r(NULL, ",", &save)) {
    char moved[1024];
    apply_move(b->config, a, moved, sizeof moved);
    const candidate_result *m = measured_at(rep, b->template_name, moved);
    size_t l = strlen(skipped);
    if (m) {
      snprintf(skipped + l, sizeof skipped - l, "%s is measured (%.4f ms), ", a, m->time_ms);
      continue;
    }
    if (single)
      printf(" (%s): try %s", b->diag.move, moved);
    else
      printf(" (%s): %stry %s first: %s", b->diag.move, skipped, a, moved);
    return;
  }
  printf(" (%s): %severy move it names is measured: this neighbourhood is exhausted", b->diag.move,
         skipped);
}

/* The winner in words: time, verified or not, precision, diagnosis, lever and its move, verdict. */
static void print_best(const tune_report *rep) {
  const candidate_result *b = &rep->best;
  printf("\nbest: %s %s\n      %.4f ms", b->template_name, b->config, b->time_ms);
  if (tflops(b) > 0) printf(", %.1f TFLOP/s", tflops(b));
  printf(" (%s on %s)\n", timing_kind_name(b->timing), rep->device);
  if (b->verified)
    printf("      verified: its output matches the reference on this GPU\n");
  else if (!strcmp(b->checked_on, "sim"))
    printf(
        "      not verified, checked on the sim: its output, computed on the CPU, matches the "
        "reference (no GPU ran it; the time is the model's); librooftune launches it only when a "
        "caller allows unverified winners\n");
  else
    printf(
        "      not verified: its output was never checked against the reference (%s); librooftune "
        "launches it only when a caller allows unverified winners\n",
        b->timing == TIMING_MEASURED ? "no check ran" : "nothing ran on a GPU");
  if (b->precision[0]) printf("      computes in %s\n", b->precision);
  if (b->diag.sentence[0]) printf("      %s\n", b->diag.sentence);
  if (b->diag.basis[0])
    printf("      facts: %s measured by the GPU's counters, the rest modelled\n", b->diag.basis);
  else
    printf(
        "      facts: DRAM bytes from the cost formula, occupancy calculated (no counters read)\n");
  if (b->diag.lever[0]) {
    printf("      lever: %s", b->diag.lever);
    if (b->diag.move[0]) print_moves(rep, b);
    printf("\n");
  }
  if (b->verdict[0]) printf("      why it wins: %s\n", b->verdict);
  if (rep->ceilings[0]) printf("      roofs: %s\n", rep->ceilings);
}

/* The run in words: counts, the table, each template's line, the winner, what was saved. */
static void print_text(const tune_options *o, const tune_report *rep, const char *note,
                       int stored) {
  if (rep->note[0] && strcmp(rep->note, note) != 0) printf("note: %s\n", rep->note);
  printf("tuned %s on %s (%s), strategy %s%s, budget %ld: %zu evaluated", o->target, rep->device,
         timing_kind_name(rep->timing), rep->strategy, o->blind ? " (blind: told only times)" : "",
         rep->budget, rep->evaluated);
  if (rep->resumed) printf(", %zu from the database", rep->resumed);
  if (rep->failed) printf(", %zu failed", rep->failed);
  printf(" in %.1f s", rep->seconds);
  if (rep->compile_seconds > 0 || rep->cache_hits)
    printf(" (compiling %.1f s, %zu compiles from the cache)", rep->compile_seconds,
           rep->cache_hits);
  printf("\n");
  for (int i = 0; i < o->npriors && o->npriors > 1; i++)
    printf("prior %d of %d: %s\n", i + 1, o->npriors, o->priors[i]);
  if (o->prior)
    printf("prior: %s (each ranking's first %d open the search, more while they lead): %s\n",
           o->npriors > 1 ? "their mean rank" : o->prior, STRATEGY_PRIOR_FIRST, rep->prior);
  else if (rep->prior_default)
    printf("prior: %s\n", rep->prior);
  print_table(rep, stored);
  print_templates(rep);
  if (rep->have_best) print_best(rep);
  if (rep->roof_unspent) {
    printf("saved by the roof rules: %ld of %ld evaluations not spent", rep->roof_unspent,
           rep->budget);
    if (rep->roof_unspent_gpu_s > 0) printf(" (about %.1f s of GPU time)", rep->roof_unspent_gpu_s);
    printf("\n");
  }
  if (rep->deduplicated || rep->stopped_early)
    printf(
        "saved: %zu candidates with a cubin measured before (%.2f s of GPU time), %zu stopped "
        "early at "
        "3x the best (%.2f s at least)\n",
        rep->deduplicated, rep->dedup_saved_s, rep->stopped_early, rep->early_saved_s);
  if (rep->calibration[0])
    printf("calibration (measured / modelled DRAM bytes): %s\n", rep->calibration);
  if (o->db_path) printf("stored in %s (run %lld)\n", o->db_path, rep->run_id);
}

/* tune_options from the parsed flags and operands, with the checks that span flags; 0 or the
 * usage error's exit code.  COMMAND receives the command line for the run's record. */
static int options_of(tune_cli *cli, int argc, char **argv, int arg, tune_options *out, char *dbbuf,
                      size_t dbsize, char *command, size_t csize) {
  tune_options o;
  memset(&o, 0, sizeof o);
  o.worker_argv = cli_worker_argv;
  o.shape = cli->shape;
  o.dtype = cli->dtype;
  o.device = cli->device;
  o.strategy = cli->strategy;
  o.blind = cli->blind;
  o.config = cli->config;
  o.prior = cli->nprior ? cli->prior[0] : NULL;
  o.priors = cli->prior;
  o.npriors = cli->nprior;
  o.no_prior = cli->no_prior;
  if (cli->no_prior && cli->nprior)
    return cli_usage_error("tune",
                           "--no-prior turns every prior off: give it or --prior, not both");
  for (int i = 0; i < cli->nprior && cli->nprior > 1; i++)
    if (!strcmp(cli->prior[i], "model"))
      return cli_usage_error("tune", "--prior model ranks by the model alone: give it once");
  o.problem_args = cli->kv_lens[0] ? cli->kv_lens : NULL;
  o.budget = cli->budget;
  o.max_seconds = (double)cli->seconds;
  o.seed = (uint64_t)cli->seed;
  o.timeout_s = (double)cli->timeout;
  o.allow_tf32 = cli->allow_tf32;
  o.cover = cli->cover;
  int no_db = cli->no_db;
  const char *db_path = cli->db;
  if (arg >= argc) return cli_usage_error("tune", "missing FAMILY or TEMPLATE (e.g. gemm)");
  o.target = argv[arg++];
  if (arg < argc) return cli_usage_error("tune", "unexpected argument '%s'", argv[arg]);
  const device_kind *kind = o.device ? device_kind_lookup(o.device) : NULL;
  int replay = kind && (kind->caps & DEVICE_CAP_RECORDED); /* the file holds the problem */
  if (!replay && !o.shape)
    return cli_usage_error("tune", "missing --shape (e.g. --shape 4096x4096x4096)");
  if (!replay && !o.dtype)
    return cli_usage_error("tune", "missing --dtype (f32, tf32, f16 or bf16)");
  if (no_db && db_path) return cli_usage_error("tune", "--db and --no-db exclude each other");
  if (o.strategy && *o.strategy) { /* a name no strategy has is bad usage, said before any work */
    const char *const *names = strategy_names();
    int known = 0;
    char list[256] = "";
    for (int i = 0; names[i]; i++) {
      known |= !strcmp(names[i], o.strategy);
      size_t l = strlen(list);
      snprintf(list + l, sizeof list - l, "%s%s", i ? ", " : "", names[i]);
    }
    if (!known)
      return cli_usage_error("tune", "--strategy: unknown strategy '%s'; the strategies are %s",
                             o.strategy, list);
  }
  if (o.allow_tf32 && o.dtype && strcmp(o.dtype, "f32"))
    return cli_usage_error(
        "tune", "--allow-tf32 admits tf32 candidates to an f32 run; --dtype is %s", o.dtype);
  if (o.config && o.cover)
    return cli_usage_error("tune", "--config evaluates one configuration; --cover a set of them");
  if (o.config && o.prior)
    return cli_usage_error("tune",
                           "--config evaluates one configuration; --prior orders a "
                           "search: give one of them");
  if (!no_db && !db_path) { /* the default database, its folder made (a folder that cannot be
                             * made: db_open says so, naming the path) */
    db_path = rt_default_db_path(dbbuf, dbsize);
    rt_mkdir_parents(db_path, NULL);
  }
  if (!no_db) o.db_path = db_path;
  size_t n = 0;
  command[0] = 0;
  for (int i = 0; i < argc && n < csize; i++)
    n += (size_t)snprintf(command + n, csize - n, "%s%s", i ? " " : "rooftune ", argv[i]);
  o.command = command;

  *out = o;
  return 0;
}

static int cmd_tune(int argc, char **argv) {
  static tune_cli cli; /* static: kv_lens outlives the parse in tune_options */
  memset(&cli, 0, sizeof cli);
  int arg, bad = cli_options_parse("tune", NULL, tune_table, argc, argv, &cli, &arg);
  if (bad) return bad;
  tune_options o;
  char dbbuf[1024], command[512];
  bad = options_of(&cli, argc, argv, arg, &o, dbbuf, sizeof dbbuf, command, sizeof command);
  if (bad) return bad;
  int json = cli.json;
  progress_state ps = {cli_stderr_is_tty(), 0, NULL, json ? stderr : stdout};
  o.progress = on_progress;
  o.progress_ctx = &ps;
  char note[256] = "";
  if (!o.device) {
    /* the first line says when times will be predictions */
    o.device = tune_default_device(note, sizeof note);
    ps.note = note;
  }
  cli_stop sig; /* tune_run finishes what it has and marks the run interrupted */
  cli_stop_begin(&sig);
  o.stop = &cli_stop_requested;
  tune_report rep;
  rt_error err = {0};
  rt_status st = tune_run(&o, &rep, &err);
  cli_stop_end(&sig);
  if (ps.drawn) fprintf(stderr, "\n");
  if (st) return cli_fail("tune", &err);
  print_note(&ps); /* when no candidate was reported (all resumed from the database) */

  if (json)
    print_json(&o, &rep, note);
  else
    print_text(&o, &rep, note, o.db_path != NULL);
  int rc = rep.have_best && !rep.interrupted ? CLI_EXIT_OK : CLI_EXIT_FAIL;
  if (rep.interrupted)
    fprintf(stderr, "rooftune tune: interrupted; the %zu candidates finished are kept%s\n",
            rep.evaluated + rep.resumed, o.db_path ? " in the database" : "");
  if (!rep.have_best && !rep.interrupted && rep.templates == 0 && rep.evaluated + rep.resumed == 0)
    fprintf(
        stderr,
        "rooftune tune: no template admits %s %s: the note says which constraint of each refused "
        "it\n",
        o.shape ? o.shape : "", o.dtype ? o.dtype : "");
  else if (!rep.have_best && !rep.interrupted)
    fprintf(stderr, "rooftune tune: no candidate succeeded (%zu evaluated, %zu failed)\n",
            rep.evaluated + rep.resumed, rep.failed);
  tune_report_free(&rep);
  return rc;
}

const cli_command cli_cmd_tune = {.name = "tune",
                                  .summary = "tune a kernel family or template for one problem",
                                  .usage = usage,
                                  .options = tune_table,
                                  .run = cmd_tune};
