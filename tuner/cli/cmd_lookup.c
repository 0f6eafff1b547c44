/* cmd_lookup.c — `rooftune lookup`: what the runtime library would serve for a problem, through
 * the same public API (rooftune.h) an application calls. */
#include <jansson.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "tuner/cli/cli.h"
#include "db/export.h"
#include "db/db.h"
#include "kernels/family.h"
#include "runtime/include/rooftune.h"

static const char usage[] =
    "usage: rooftune lookup FAMILY --shape S --dtype D [--db FILE] [--device NAME] [--layout L]\n"
    "                       [--exact] [--allow-mismatch] [--json]\n\n"
    "Finds the tuned winner for a problem the way librooftune does: the exact shape, else the\n"
    "nearest tuned shape by log-distance sqrt(sum (ln a_i - ln b_i)^2) over the dimensions.\n"
    "Among winners of one shape, one with matching provenance comes first, then a measured time\n"
    "over a replayed one over a predicted one, then the fastest.  A winner made on another GPU\n"
    "(with --device), another toolkit, or by an older template version is refused unless\n"
    "--allow-mismatch, and then it is reported as a mismatch.\n\n"
    "options:\n"
    "  --shape S          the problem's shape, e.g. 4096x4096x4096 or 8@512x512x64:nt\n"
    "  --dtype D          f32, f16 or bf16\n"
    "  --db FILE          the database (default: $ROOFTUNE_DB, else\n"
    "                     $XDG_DATA_HOME/rooftune/tuning.db, else ~/.local/share/rooftune/tuning.db)\n"
    "  --device NAME      only winners from this GPU (any part of its name: H200, model:h200)\n"
    "  --layout L         nn or nt (GEMM; default nn)\n"
    "  --exact            no nearest-shape answer\n"
    "  --allow-mismatch   serve another device's, toolkit's or template version's winner\n"
    "  --json             {\"match\":\"exact|nearest|none\",\"shape\":..,\"template\":..,\n"
    "                     \"config\":{..},\"time_ms\":..,\"timing\":\"measured|predicted|replayed\",..}\n";

static void mismatch_names(unsigned bits, char *buf, size_t size) {
  snprintf(buf, size, "%s%s%s", bits & ROOFTUNE_MISMATCH_DEVICE ? "device " : "",
           bits & ROOFTUNE_MISMATCH_TOOLKIT ? "toolkit " : "",
           bits & ROOFTUNE_MISMATCH_TEMPLATE ? "template " : "");
  size_t n = strlen(buf);
  if (n) buf[n - 1] = '\0';
}

static int cmd_lookup(int argc, char **argv) {
  const char *shape = NULL, *dtype = NULL, *dbp = NULL, *device = NULL, *layout = NULL;
  int json = 0, flags = 0;
  static const struct option opts[] = {
      {"shape", required_argument, 0, 's'}, {"dtype", required_argument, 0, 't'},
      {"db", required_argument, 0, 'd'},    {"device", required_argument, 0, 'D'},
      {"layout", required_argument, 0, 'l'}, {"exact", no_argument, 0, 'e'},
      {"allow-mismatch", no_argument, 0, 'a'}, {"json", no_argument, 0, 'j'},
      {0, 0, 0, 0}};
  int c;
  while ((c = getopt_long(argc, argv, "", opts, NULL)) != -1) {
    switch (c) {
    case 's': shape = optarg; break;
    case 't': dtype = optarg; break;
    case 'd': dbp = optarg; break;
    case 'D': device = optarg; break;
    case 'l': layout = optarg; break;
    case 'e': flags |= ROOFTUNE_EXACT_ONLY; break;
    case 'a': flags |= ROOFTUNE_ALLOW_MISMATCH; break;
    case 'j': json = 1; break;
    default: return cli_bad_option("lookup", argc, argv);
    }
  }
  if (optind >= argc) return cli_usage_error("lookup", "which family? e.g. rooftune lookup gemm");
  if (optind + 1 < argc) return cli_usage_error("lookup", "unexpected argument '%s'", argv[optind + 1]);
  if (!shape) return cli_usage_error("lookup", "--shape is required");
  if (!dtype) return cli_usage_error("lookup", "--dtype is required");
  const char *family = argv[optind];
  /* the problem as `tune` reads it: a shape or dtype tune refuses is not looked up */
  const family_ops *fam = family_find(family);
  if (!fam)
    return cli_usage_error("lookup", "'%s' is not a kernel family (%s)", family, family_names());
  {
    char full[512];
    if ((size_t)snprintf(full, sizeof full, "%s%s%s", shape, layout && *layout && !strchr(shape, ':') ? ":" : "",
                         layout && *layout && !strchr(shape, ':') ? layout : "") >= sizeof full)
      return cli_usage_error("lookup", "--shape is longer than %zu characters", sizeof full - 1);
    problem p;
    rt_error perr = {0};
    if (fam->parse_shape(fam, full, dtype, NULL, &p, &perr)) {
      cli_fail("lookup", &perr);
      return CLI_EXIT_USAGE;
    }
  }
  char path[1024];
  if (dbp) snprintf(path, sizeof path, "%s", dbp);
  else db_default_path(path, sizeof path);

  rooftune_db *rdb = NULL;
  int rc = rooftune_open(path, &rdb);
  if (rc) {
    fprintf(stderr, "rooftune lookup: %s\n", rooftune_last_error());
    return CLI_EXIT_FAIL;
  }
  rooftune_query q = {family, shape, dtype, layout, device, flags};
  rooftune_match m;
  rc = rooftune_lookup(rdb, &q, &m);
  if (rc) {
    fprintf(stderr, "rooftune lookup: --shape: %s\n", rooftune_last_error());
    rooftune_close(rdb);
    return rc == ROOFTUNE_ERR_INVALID ? CLI_EXIT_USAGE : CLI_EXIT_FAIL;
  }
  /* When provenance refused everything, say what a mismatch would have served. */
  rooftune_match refused;
  memset(&refused, 0, sizeof refused);
  if (m.match == ROOFTUNE_MATCH_NONE && !(flags & ROOFTUNE_ALLOW_MISMATCH)) {
    q.flags = flags | ROOFTUNE_ALLOW_MISMATCH;
    if (rooftune_lookup(rdb, &q, &refused)) memset(&refused, 0, sizeof refused);
  }
  rooftune_close(rdb);

  const char *kind = m.match == ROOFTUNE_MATCH_EXACT     ? "exact"
                     : m.match == ROOFTUNE_MATCH_NEAREST ? "nearest"
                                                         : "none";
  char mis[64];
  mismatch_names(m.match ? m.mismatch : refused.mismatch, mis, sizeof mis);
  if (json) {
    json_t *o = json_object();
    json_object_set_new(o, "match", json_string(kind));
    json_object_set_new(o, "query", json_string(shape));
    if (m.match) {
      json_object_set_new(o, "shape", json_string(m.shape));
      json_object_set_new(o, "distance", json_real(m.distance));
      json_object_set_new(o, "template", json_string(m.template_name));
      json_object_set_new(o, "config", db_export_config_json(m.config));
      json_object_set_new(o, "time_ms", isnan(m.time_ms) ? json_null() : json_real(m.time_ms));
      json_object_set_new(o, "timing", json_string(m.timing));
      json_object_set_new(o, "device", json_string(m.device));
      json_object_set_new(o, "toolkit", json_string(m.toolkit));
      json_t *ma = json_array();
      for (char *save = NULL, *t = strtok_r(mis, " ", &save); t; t = strtok_r(NULL, " ", &save))
        json_array_append_new(ma, json_string(t));
      json_object_set_new(o, "mismatch", ma);
      json_object_set_new(o, "cubin_bytes", json_integer((json_int_t)m.cubin_size));
      if (m.library_algo[0]) json_object_set_new(o, "library_algo", json_string(m.library_algo));
      if (m.geometry_ok) {
        json_t *l = json_object(), *g = json_array(), *b = json_array();
        for (int k = 0; k < 3; k++) {
          json_array_append_new(g, json_integer(m.grid[k]));
          json_array_append_new(b, json_integer(m.block[k]));
        }
        json_object_set_new(l, "grid", g);
        json_object_set_new(l, "block", b);
        json_object_set_new(l, "smem", json_integer(m.smem));
        json_object_set_new(o, "launch", l);
      }
    } else {
      json_object_set_new(o, "shape", json_null());
      json_object_set_new(o, "template", json_null());
      json_object_set_new(o, "config", json_null());
      json_object_set_new(o, "time_ms", json_null());
      if (refused.match) json_object_set_new(o, "refused_mismatch", json_string(mis));
    }
    json_dumpf(o, stdout, JSON_INDENT(2) | JSON_PRESERVE_ORDER);
    fputc('\n', stdout);
    json_decref(o);
  } else if (m.match) {
    printf("%s match: %s %s %s (distance %.3g)\n", kind, family, m.shape, m.dtype, m.distance);
    printf("template  %s  %s\n", m.template_name, m.config);
    printf("time      %.5g ms, %s on %s (toolkit %s)\n", m.time_ms, m.timing, m.device, m.toolkit);
    if (m.mismatch) printf("warning   provenance mismatch: %s\n", mis);
    if (m.geometry_ok)
      printf("launch    grid %u,%u,%u block %u,%u,%u smem %u%s\n", m.grid[0], m.grid[1], m.grid[2],
             m.block[0], m.block[1], m.block[2], m.smem, m.cubin_size ? "" : " (no cubin stored)");
  } else {
    printf("none: nothing tuned for %s %s %s%s%s\n", family, shape, dtype,
           device ? " on " : "", device ? device : "");
    if (refused.match)
      printf("(a winner for %s exists but its %s does not match; --allow-mismatch shows it)\n",
             refused.shape, mis);
  }
  return CLI_EXIT_OK;
}

const cli_command cli_cmd_lookup = {"lookup", "find the tuned winner for a problem, as librooftune does",
                                    usage, cmd_lookup, 0};
