/* cmd_lookup.c — `rooftune lookup`: what librooftune would serve for a problem, through the
 * public API (rooftune.h) of the library itself, which the command links as an application
 * does: the serving rule, the winner, what would run, and every better-ranked winner passed
 * over with the reason. */
#include <jansson.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cli/cli.h"
#include "db/export.h"
#include "db/db.h"
#include "kernels/family.h"
#include "runtime/include/rooftune.h"
#include "core/util.h"

static const char usage[] =
    "usage: rooftune lookup FAMILY --shape S --dtype D [--db FILE] [--device NAME] [--layout L]\n"
    "                       [--exact] [--allow-mismatch] [--runnable] [--allow-unverified]\n"
    "                       [--nearest-max D] [--json]\n\n"
    "Serves a problem the way librooftune does (rooftune.h, \"Serving rules\"): the winner tuned\n"
    "for the shape; else the nearest tuned shape's best winner when its kernel admits the shape\n"
    "(every constraint that reads the shape holds for it) within the distance cap; else the next\n"
    "winner in the ranking that admits it; else the family's vendor library (cuBLASLt for gemm).\n"
    "The distance is sqrt(sum (ln a_i - ln b_i)^2) over the family's serving coordinates (gemm:\n"
    "batch, M, N, K; attention decode, SQ <= 8: B*HKV, SKV; prefill: B*HQ, SQ, SKV).  Winners "
    "rank\n"
    "by distance, then agreeing provenance, then a measured time over a replayed one over a\n"
    "predicted one, then the fastest.  A winner made on another GPU (with --device), another\n"
    "toolkit, or by an older template version is refused unless --allow-mismatch.  A winner is\n"
    "verified when its output passed the reference check on the GPU that measured it; one\n"
    "predicted by the model, replayed or imported never was, and librooftune does not launch it\n"
    "unless asked (--allow-unverified, ROOFTUNE_ALLOW_UNVERIFIED).  It prints what would run: a\n"
    "winner with no cubin or not verified is shown, and beside it what rooftune_gemm or\n"
    "rooftune_attention, which launch only what they can and may, would run instead.\n";

static const char *rule_name(int rule) {
  switch (rule) {
    case ROOFTUNE_RULE_EXACT: return "exact";
    case ROOFTUNE_RULE_NEAREST: return "nearest";
    case ROOFTUNE_RULE_NEXT: return "next";
    case ROOFTUNE_RULE_LIBRARY: return "library";
    default: return "none";
  }
}

static const char *rule_text(int rule) {
  switch (rule) {
    case ROOFTUNE_RULE_EXACT: return "tuned for this shape";
    case ROOFTUNE_RULE_NEAREST: return "the nearest tuned shape's winner admits it";
    case ROOFTUNE_RULE_NEXT: return "better-ranked winners do not admit it; the next one does";
    case ROOFTUNE_RULE_LIBRARY: return "no tuned winner admits it: the vendor library serves it";
    default: return "nothing serves it";
  }
}

static void mismatch_names(unsigned bits, char *buf, size_t size) {
  snprintf(buf, size, "%s%s%s", bits & ROOFTUNE_MISMATCH_DEVICE ? "device " : "",
           bits & ROOFTUNE_MISMATCH_TOOLKIT ? "toolkit " : "",
           bits & ROOFTUNE_MISMATCH_TEMPLATE ? "template " : "");
  size_t n = strlen(buf);
  if (n) buf[n - 1] = '\0';
}

/* What a one-call function would run for answer m (served with ROOFTUNE_RUNNABLE). */
static void would_run_text(const rooftune_match *m, char *buf, size_t size) {
  if (m->match != ROOFTUNE_MATCH_NONE && m->library_algo[0])
    snprintf(buf, size, "%s with the tuned choice (%.300s, %s)",
             family_library_label(m->template_name), m->library_algo, m->shape);
  else if (m->match != ROOFTUNE_MATCH_NONE)
    snprintf(buf, size, "%s %s (tuned for %s, %s rule)", m->template_name, m->config, m->shape,
             rule_name(m->rule));
  else if (m->rule == ROOFTUNE_RULE_LIBRARY)
    snprintf(buf, size, "%s (its own choice)", family_library_label(m->library));
  else
    snprintf(buf, size, "nothing (%s)", m->reason);
}

static json_t *lines_json(const char *text) {
  json_t *a = json_array();
  for (const char *s = text; *s;) {
    size_t n = strcspn(s, "\n");
    if (n) json_array_append_new(a, json_stringn(s, n));
    s += n;
    if (*s) s++;
  }
  return a;
}

static json_t *match_json(const rooftune_match *m, const char *query) {
  json_t *o = json_object();
  char mis[64];
  mismatch_names(m->mismatch, mis, sizeof mis);
  json_object_set_new(o, "rule", json_string(rule_name(m->rule)));
  json_object_set_new(o, "match",
                      json_string(m->match == ROOFTUNE_MATCH_EXACT     ? "exact"
                                  : m->match == ROOFTUNE_MATCH_NEAREST ? "nearest"
                                                                       : "none"));
  json_object_set_new(o, "query", json_string(query));
  if (m->match) {
    json_object_set_new(o, "shape", json_string(m->shape));
    json_object_set_new(o, "distance", json_real(m->distance));
    json_object_set_new(o, "template", json_string(m->template_name));
    json_object_set_new(o, "config", db_export_config_json(m->config));
    json_object_set_new(o, "time_ms", isnan(m->time_ms) ? json_null() : json_real(m->time_ms));
    json_object_set_new(o, "timing", json_string(m->timing));
    json_object_set_new(o, "device", json_string(m->device));
    json_object_set_new(o, "toolkit", json_string(m->toolkit));
    json_t *ma = json_array();
    for (char *save = NULL, *t = strtok_r(mis, " ", &save); t; t = strtok_r(NULL, " ", &save))
      json_array_append_new(ma, json_string(t));
    json_object_set_new(o, "mismatch", ma);
    json_object_set_new(o, "cubin_bytes", json_integer((json_int_t)m->cubin_size));
    json_object_set_new(o, "verified", json_boolean(m->verified));
    json_object_set_new(o, "checked_on",
                        m->checked_on[0] ? json_string(m->checked_on) : json_null());
    json_object_set_new(o, "runnable", json_boolean(m->runnable));
    if (m->library_algo[0]) json_object_set_new(o, "library_algo", json_string(m->library_algo));
    if (m->geometry_ok) {
      json_t *l = json_object(), *g = json_array(), *b = json_array();
      for (int k = 0; k < 3; k++) {
        json_array_append_new(g, json_integer(m->grid[k]));
        json_array_append_new(b, json_integer(m->block[k]));
      }
      json_object_set_new(l, "grid", g);
      json_object_set_new(l, "block", b);
      json_object_set_new(l, "smem", json_integer(m->smem));
      json_object_set_new(o, "launch", l);
    }
  } else {
    json_object_set_new(o, "shape", json_null());
    json_object_set_new(o, "template", json_null());
    json_object_set_new(o, "config", json_null());
    json_object_set_new(o, "time_ms", json_null());
    json_object_set_new(o, "library", m->library[0] ? json_string(m->library) : json_null());
    json_object_set_new(o, "reason", json_string(m->reason));
  }
  json_object_set_new(o, "nearest_max", json_real(m->nearest_max));
  json_object_set_new(o, "passed_over", lines_json(m->passed_over));
  return o;
}

/* 1 when the database at PATH holds a winner of FAMILY (0 when it does not or cannot be read:
 * the lookup then says so itself). */
static int db_holds_family(const char *path, const char *family) {
  db *d = NULL;
  db_entry *e = NULL;
  size_t n = 0;
  int found = 0;
  if (db_open(path, DB_READONLY, &d, NULL) == RT_OK && db_entries(d, 0, &e, &n, NULL) == RT_OK)
    for (size_t i = 0; i < n && !found; i++) found = strcmp(e[i].family, family) == 0;
  free(e);
  db_close(d);
  return found;
}

static void print_match(const rooftune_match *m, const char *family, const char *shape,
                        const char *dtype) {
  printf("rule      %s: %s\n", rule_name(m->rule), rule_text(m->rule));
  if (m->match) {
    char mis[64];
    mismatch_names(m->mismatch, mis, sizeof mis);
    printf("%s match: %s %s %s (distance %.3g)\n",
           m->match == ROOFTUNE_MATCH_EXACT ? "exact" : "nearest", family, m->shape, m->dtype,
           m->distance);
    printf("template  %s  %s\n", m->template_name, m->config);
    printf("time      %.5g ms, %s on %s (toolkit %s)\n", m->time_ms, m->timing, m->device,
           m->toolkit);
    printf("verified  %s\n", m->verified
                                 ? "yes: its output passed the reference check on that GPU"
                                 : "no: its output was never checked against the reference");
    if (m->mismatch) printf("warning   provenance mismatch: %s\n", mis);
    if (m->geometry_ok)
      printf("launch    grid %u,%u,%u block %u,%u,%u smem %u (for %s)\n", m->grid[0], m->grid[1],
             m->grid[2], m->block[0], m->block[1], m->block[2], m->smem, shape);
  } else {
    printf("none: no tuned winner serves %s %s %s\n", family, shape, dtype);
    printf("reason    %s\n", m->reason);
  }
  int first = 1;
  for (const char *s = m->passed_over; *s;) {
    size_t n = strcspn(s, "\n");
    if (n) printf("%s%.*s\n", first ? "passed    " : "          ", (int)n, s);
    first = 0;
    s += n;
    if (*s) s++;
  }
}

typedef struct lookup_cli {
  const char *shape, *dtype, *db, *device, *layout; /* --shape, --dtype, --db, --device, --layout */
  double nearest_max;                               /* --nearest-max; 0: the default */
  int json, flags; /* --json; --exact, --allow-mismatch, --runnable */
} lookup_cli;

static const cli_option lookup_table[] = {
    CLI_STRING(lookup_cli, "shape", "S", shape,
               "the problem's shape: gemm 4096x4096x4096 or 8@512x512x64:nt; attention\n"
               "BxHQ[:HKV]xSQ[:SKV]xD[:causal][:pagedN], e.g. 64x32:8x1:8192x128:paged16"),
    CLI_STRING(lookup_cli, "dtype", "D", dtype, "f32, f16 or bf16"),
    CLI_STRING(lookup_cli, "db", "FILE", db, "the database (default: " CLI_DEFAULT_DB_TEXT ")"),
    CLI_STRING(lookup_cli, "device", "NAME", device,
               "only winners from this GPU (any part of its name: H200, model:h200)"),
    CLI_STRING(lookup_cli, "layout", "L", layout, "nn or nt (gemm; default nn)"),
    CLI_BITS(lookup_cli, "exact", flags, ROOFTUNE_EXACT_ONLY, "no winner tuned for another shape"),
    CLI_BITS(lookup_cli, "allow-mismatch", flags, ROOFTUNE_ALLOW_MISMATCH,
             "serve another device's, toolkit's or template version's winner"),
    CLI_BITS(lookup_cli, "runnable", flags, ROOFTUNE_RUNNABLE,
             "only winners the library can launch and may: a cubin or a library\n"
             "algorithm, verified (what the one-call functions ask)"),
    CLI_BITS(lookup_cli, "allow-unverified", flags, ROOFTUNE_ALLOW_UNVERIFIED,
             "serve and launch winners never checked against the reference"),
    CLI_NUMBER(lookup_cli, "nearest-max", "D", nearest_max, CLI_OPT_ABOVE_ZERO,
               "the distance cap (default $ROOFTUNE_NEAREST_MAX, else 1.25)"),
    CLI_FLAG(lookup_cli, "json", json,
             "{\"rule\":\"exact|nearest|next|library|none\",\"match\":\"exact|nearest|none\",\n"
             "\"shape\":..,\"template\":..,\"config\":{..},\"time_ms\":..,\"timing\":..,\n"
             "\"verified\":..,\"runnable\":..,\"passed_over\":[..],\"reason\":..,\n"
             "\"would_run\":{..},..}"),
    CLI_END,
};

static int cmd_lookup(int argc, char **argv) {
  lookup_cli cli = {0};
  int arg, bad = cli_options_parse("lookup", NULL, lookup_table, argc, argv, &cli, &arg);
  if (bad) return bad;
  const char *shape = cli.shape, *dtype = cli.dtype, *dbp = cli.db, *device = cli.device,
             *layout = cli.layout;
  double nearest_max = cli.nearest_max;
  int json = cli.json, flags = cli.flags;
  if (arg >= argc) return cli_usage_error("lookup", "which family? e.g. rooftune lookup gemm");
  if (arg + 1 < argc) return cli_usage_error("lookup", "unexpected argument '%s'", argv[arg + 1]);
  if (!shape) return cli_usage_error("lookup", "--shape is required");
  if (!dtype) return cli_usage_error("lookup", "--dtype is required");
  const char *family = argv[arg];
  char path[1024];
  if (dbp)
    snprintf(path, sizeof path, "%s", dbp);
  else
    rt_default_db_path(path, sizeof path);
  /* the problem as `tune` reads it: a shape or dtype tune refuses is not looked up.  A declared
   * family off this search path is served from the database alone, as the runtime serves it */
  const family_ops *fam = family_find(family);
  if (!fam && !db_holds_family(path, family))
    return cli_usage_error("lookup",
                           "'%s' is not a kernel family (%s) and %s holds no winner of it "
                           "(a declared family's folder goes on ROOFTUNE_TEMPLATE_PATH)",
                           family, family_names(), path);
  if (fam) {
    char full[512];
    if ((size_t)snprintf(full, sizeof full, "%s%s%s", shape,
                         layout && *layout && !strchr(shape, ':') ? ":" : "",
                         layout && *layout && !strchr(shape, ':') ? layout : "") >= sizeof full)
      return cli_usage_error("lookup", "--shape is longer than %zu characters", sizeof full - 1);
    problem p;
    rt_error perr = {0};
    if (fam->parse_shape(fam, full, dtype, NULL, &p, &perr)) {
      cli_fail("lookup", &perr);
      return CLI_EXIT_USAGE;
    }
  }

  rooftune_db *rdb = NULL;
  int rc = rooftune_open(path, &rdb);
  if (rc) {
    fprintf(stderr, "rooftune lookup: %s\n", rooftune_last_error());
    return CLI_EXIT_FAIL;
  }
  rooftune_query q = {.family = family,
                      .shape = shape,
                      .dtype = dtype,
                      .layout = layout,
                      .device = device,
                      .flags = flags,
                      .nearest_max = nearest_max};
  rooftune_match m, runs, refused;
  rc = rooftune_lookup(rdb, &q, &m);
  if (rc) {
    fprintf(stderr, "rooftune lookup: %s\n", rooftune_last_error());
    rooftune_close(rdb);
    return rc == ROOFTUNE_ERR_INVALID ? CLI_EXIT_USAGE : CLI_EXIT_FAIL;
  }
  /* what the one-call functions would run: the same query, launchable winners only */
  q.flags = flags | ROOFTUNE_RUNNABLE;
  if (rooftune_lookup(rdb, &q, &runs)) memset(&runs, 0, sizeof runs);
  /* when provenance refused everything, what a mismatch would have served */
  memset(&refused, 0, sizeof refused);
  if (m.match == ROOFTUNE_MATCH_NONE && !(flags & ROOFTUNE_ALLOW_MISMATCH)) {
    q.flags = flags | ROOFTUNE_ALLOW_MISMATCH;
    if (rooftune_lookup(rdb, &q, &refused)) memset(&refused, 0, sizeof refused);
  }
  rooftune_close(rdb);
  char mis[64];
  mismatch_names(refused.mismatch, mis, sizeof mis);
  char would[1024];
  would_run_text(&runs, would, sizeof would);
  if (json) {
    json_t *o = match_json(&m, shape);
    json_t *w = json_object();
    json_object_set_new(w, "rule", json_string(rule_name(runs.rule)));
    json_object_set_new(w, "template",
                        runs.match                           ? json_string(runs.template_name)
                        : runs.rule == ROOFTUNE_RULE_LIBRARY ? json_string(runs.library)
                                                             : json_null());
    json_object_set_new(w, "shape", runs.match ? json_string(runs.shape) : json_null());
    json_object_set_new(w, "text", json_string(would));
    json_object_set_new(o, "would_run", w);
    if (refused.match) json_object_set_new(o, "refused_mismatch", json_string(mis));
    json_dumpf(o, stdout, JSON_INDENT(2) | JSON_PRESERVE_ORDER);
    fputc('\n', stdout);
    json_decref(o);
    return CLI_EXIT_OK;
  }
  print_match(&m, family, shape, dtype);
  const char *caller = !strcmp(family, "attention") ? "rooftune_attention"
                       : !strcmp(family, "gemm")    ? "rooftune_gemm"
                                                    : "a runnable lookup";
  if (m.match && !m.runnable && (m.cubin_size || m.library_algo[0]) && !m.verified)
    printf(
        "runs      nothing from this winner: it is not verified (%s on %s; --allow-unverified runs "
        "it); "
        "%s would run %s\n",
        m.timing, m.device, caller, would);
  else if (m.match && !m.runnable)
    printf("runs      nothing from this winner: it has no cubin (%s on %s); %s would run %s\n",
           m.timing, m.device, caller, would);
  else
    printf("runs      %s\n", would);
  if (refused.match)
    printf("(a winner for %s exists but its %s does not match; --allow-mismatch shows it)\n",
           refused.shape, mis);
  return CLI_EXIT_OK;
}

const cli_command cli_cmd_lookup = {.name = "lookup",
                                    .summary = "what librooftune would serve and run for a problem",
                                    .usage = usage,
                                    .options = lookup_table,
                                    .run = cmd_lookup};
