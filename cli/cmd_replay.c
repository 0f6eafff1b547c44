/* cmd_replay.c — `rooftune replay`: a search strategy scored on recorded brute-forced spaces. */
#include <errno.h>
#include <jansson.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cli/cli.h"
#include "template/ktfile.h"
#include "search/replay.h"
#include "search/strategy.h"
#include "model/recorded.h"
#include "tuner/replay_compile.h"

static const char usage[] =
    "usage: rooftune replay SPACE_FILE... [--strategy S] [--seeds N] [--budget B] [--target EPS]\n"
    "                       [--prior FILE] [--manifest FILE [--jobs N]] [--blind] [--survey]\n"
    "                       [--json]\n\n"
    "Replays a search strategy on brute-forced spaces recorded by Kernel Tuner (cache files,\n"
    ".json or .json.gz) or KTT (results files): the strategy asks for configurations and gets\n"
    "their recorded times, so no GPU is needed.  For each file it runs the strategy once per\n"
    "seed 0..N-1 and reports the evaluations it needed to reach a configuration within EPS of\n"
    "the file's optimum (median and p90; a run that misses counts as twice the budget) and the\n"
    "fraction of runs that reached it within the budget, next to what random search needs on\n"
    "average, computed exactly: (V+1)/(k+1) for V timed configurations of which k are within\n"
    "the target.  Failed configurations count as evaluations (on a GPU each costs a compile).\n"
    "A file that does not load is reported (in --json as {\"space\", \"error\"}) and the others\n"
    "are scored; the exit status is then 1.  An unfinished Kernel Tuner cache (its run was\n"
    "interrupted) is read as Kernel Tuner reads it, with a note.\n";

static const char *replay_format_name(const ktfile *kf) {
  return kf->format == KTFILE_KTT        ? "KTT results"
         : kf->format == KTFILE_ROOFTUNE ? "rooftune export"
                                         : "Kernel Tuner cache";
}

enum { REPLAY_MAX_PRIORS = 16 };

typedef struct replay_cli {
  const char *strategy, *manifest;      /* --strategy, --manifest */
  const char *prior[REPLAY_MAX_PRIORS]; /* --prior, in the order given */
  int nprior;
  long seeds, budget, jobs; /* --seeds, --budget, --jobs */
  double target;            /* --target */
  int json;                 /* --json */
  int blind, survey;        /* --blind, --survey */
} replay_cli;

/* --prior FILE, repeatable. */
static int replay_add_prior(const char *cmd, const char *value, void *base) {
  replay_cli *cli = base;
  if (cli->nprior >= REPLAY_MAX_PRIORS)
    return cli_usage_error(cmd, "--prior is given at most %d times", REPLAY_MAX_PRIORS);
  cli->prior[cli->nprior++] = value;
  return 0;
}

static const cli_option replay_table[] = {
    CLI_STRING(
        replay_cli, "strategy", "S", strategy,
        "{STRATEGIES_REPLAYING}\n"
        "(default: {STRATEGY_DEFAULT}).  A KTT file with counters, measured on a GPU rooftune's\n"
        "spec table knows, replays each configuration with its diagnosis from its\n"
        "counters and its compile facts, known once the strategy proposes it (lever\n"
        "and steer use them); other files carry times only"),
    CLI_FLAG(replay_cli, "blind", blind,
             "tell the strategy only times (no diagnosis, no compile facts): the same run\n"
             "without --blind shows what the diagnosis adds"),
    CLI_FLAG(replay_cli, "survey", survey,
             "give the strategy every configuration's compile facts from the start, as a\n"
             "compile-first survey would, and count its cost: 0.1 evaluation per\n"
             "configuration, added to every run (steer then weighs the facts in its model)"),
    CLI_COUNT(replay_cli, "seeds", "N", seeds, 0, "runs per file, seeds 0..N-1 (default 30)"),
    CLI_COUNT(replay_cli, "budget", "B", budget, 1,
              "evaluations per run, failed ones included (default 1000: about an hour\n"
              "of compiling and timing on a GPU)"),
    CLI_NUMBER(replay_cli, "target", "EPS", target, 0,
               "within this fraction of the optimum (default 0.05)"),
    CLI_CALL("prior", "FILE", replay_add_prior, CLI_OPT_REPEAT,
             "another recording of the same kernel (typically on another GPU), whose\n"
             "fastest configurations each run evaluates first: what transfer from a\n"
             "known GPU gains (parameters matched by name; random's figure has none).\n"
             "Repeatable: the configurations go by their mean rank over the recordings"),
    CLI_STRING(replay_cli, "manifest", "FILE", manifest,
               "a manifest of the recorded kernel (its parameters, by the recording's\n"
               "names, roles, launch and cost formulas; see tuner/replay_compile.h) whose\n"
               "\"source\" is the kernel's source, which you put beside it: every recorded\n"
               "configuration is compiled with NVRTC for the recorded GPU's architecture\n"
               "(cached), and the strategy is given those static facts (registers, shared\n"
               "memory, occupancy and its limiter) and the cost formulas' roofline bound;\n"
               "the compiled register counts are compared with the recording's"),
    CLI_COUNT(replay_cli, "jobs", "N", jobs, 0,
              "compile processes for --manifest (default: one per core)"),
    CLI_FLAG(replay_cli, "json", json, "print {\"results\":[...]} instead of text"),
    CLI_END,
};

/* One scored file's --json object. */
static json_t *scored_json(const char *file, const ktfile *kf, const replay_stats *rs,
                           const replay_facts *rf, const char *manifest_path, ktfile *const *priors,
                           int npriors, size_t first) {
  json_t *o = json_object();
  json_object_set_new(o, "space", json_string(file));
  json_object_set_new(o, "strategy", json_string(rs->strategy));
  json_object_set_new(o, "seeds", json_integer(rs->seeds));
  json_object_set_new(o, "valid", json_integer((json_int_t)rs->valid));
  json_object_set_new(o, "configs", json_integer((json_int_t)rs->configs));
  json_object_set_new(o, "optimum_ms", json_real(rs->optimum_ms));
  json_object_set_new(o, "timing", json_string("replayed"));
  json_object_set_new(o, "device_name", json_string(kf->device_name));
  json_object_set_new(o, "unfinished", json_boolean(kf->unfinished));
  json_object_set_new(o, "target", json_real(rs->eps));
  json_object_set_new(o, "within_target", json_integer((json_int_t)rs->within));
  json_object_set_new(o, "budget", json_integer(rs->budget));
  json_t *e = json_object();
  json_object_set_new(e, "median", json_real(rs->median));
  json_object_set_new(e, "p90", json_real(rs->p90));
  json_object_set_new(o, "evals_to_target", e);
  json_object_set_new(o, "reached", json_real(rs->reached));
  json_object_set_new(o, "diagnosed", json_integer((json_int_t)rs->diagnosed));
  json_object_set_new(o, "features", json_integer(rs->features));
  json_object_set_new(o, "counters_gpu", json_string(rs->gpu));
  json_object_set_new(o, "blind", json_boolean(rs->blind));
  json_object_set_new(o, "survey_cost", json_real(rs->survey_cost));
  json_object_set_new(o, "results_told", json_integer((json_int_t)rs->steps));
  json_t *per = json_array(); /* seed by seed, for paired comparisons (-1: missed) */
  for (int i = 0; rs->evals && i < rs->seeds; i++)
    json_array_append_new(per, json_integer(rs->evals[i]));
  json_object_set_new(o, "evals_per_seed", per);
  json_object_set_new(o, "lever_share",
                      json_real(rs->steps ? (double)rs->lever_steps / (double)rs->steps : 0));
  json_object_set_new(o, "learned_share",
                      json_real(rs->steps ? (double)rs->learned_steps / (double)rs->steps : 0));
  if (manifest_path) {
    json_t *cj = json_object();
    json_object_set_new(cj, "manifest", json_string(manifest_path));
    json_object_set_new(cj, "arch", json_string(rf->arch));
    json_object_set_new(cj, "mapped", json_integer((json_int_t)rf->mapped));
    json_object_set_new(cj, "compiled", json_integer((json_int_t)rf->compiled));
    json_object_set_new(cj, "failed", json_integer((json_int_t)rf->failed));
    json_object_set_new(cj, "cache_hits", json_integer((json_int_t)rf->cache_hits));
    json_object_set_new(cj, "registers_compared", json_integer((json_int_t)rf->compared));
    json_object_set_new(cj, "registers_agree", json_integer((json_int_t)rf->agree));
    json_object_set_new(o, "compiled", cj);
  }
  json_object_set_new(o, "random_expected", json_real(rs->random_expected));
  if (npriors > 0) {
    json_t *pj = json_object(), *files = json_array();
    json_object_set_new(pj, "file", json_string(priors[0]->path));
    json_object_set_new(pj, "device_name", json_string(priors[0]->device_name));
    for (int p = 0; p < npriors; p++) json_array_append_new(files, json_string(priors[p]->path));
    json_object_set_new(pj, "files", files);
    json_object_set_new(pj, "ranked", json_integer((json_int_t)rs->prior));
    json_object_set_new(pj, "evaluated_first", json_integer((json_int_t)first));
    json_object_set_new(o, "prior", pj);
  }
  return o;
}

/* One scored file in words. */
static void scored_print(const char *file, const ktfile *kf, const replay_stats *rs,
                         const replay_facts *rf, const char *manifest_path, ktfile *const *priors,
                         int npriors, size_t first) {
  printf(
      "%s: %s, %zu configurations (%zu timed, %zu failed), optimum %.4g ms replayed "
      "from %s\n",
      file, replay_format_name(kf), rs->configs, rs->valid, rs->configs - rs->valid, rs->optimum_ms,
      kf->device_name[0] ? kf->device_name : "an unnamed GPU");
  for (int p = 0; p < npriors; p++)
    printf("  prior %d of %d: %s (%s)\n", p + 1, npriors, priors[p]->path,
           priors[p]->device_name[0] ? priors[p]->device_name : "an unnamed GPU");
  if (npriors > 0)
    printf(
        "  the prior%s rank%s %zu of these configurations; each run evaluates the %d first, more "
        "while they lead\n",
        npriors > 1 ? "s" : "", npriors > 1 ? "" : "s", rs->prior, (int)first);
  if (manifest_path)
    printf(
        "  %s: %zu of the %zu configurations are in its file; %zu compiled for %s (%zu "
        "from the cubin cache), %zu failed; registers agree with the recording on %zu of "
        "%zu\n",
        manifest_path, rf->mapped, rs->configs, rf->compiled, rf->arch, rf->cache_hits, rf->failed,
        rf->agree, rf->compared);
  if (rs->blind && (rs->diagnosed || rs->features))
    printf("  blind: the strategy is told only times (no diagnosis, no compile facts)\n");
  else if (rs->diagnosed)
    printf(
        "  %zu configurations diagnosed from their recorded counters against the %s's "
        "spec-table roofs%s\n",
        rs->diagnosed, rs->gpu,
        !rs->features ? ""
        : rs->survey  ? "; every configuration's compile facts given ahead (a survey)"
                      : "; each configuration's compile facts known once proposed");
  if (rs->survey_cost > 0)
    printf("  the survey's compiles count %.1f evaluations in every run\n", rs->survey_cost);
  if (rs->lever_steps)
    printf(
        "  the best had a lever after %.0f %% of the results told (%.0f %% learned from the "
        "evidence)\n",
        100.0 * (double)rs->lever_steps / (double)rs->steps,
        100.0 * (double)rs->learned_steps / (double)rs->steps);
  printf(
      "  %s, %d seeds, budget %ld: evaluations to within %g %% of the optimum: median "
      "%.1f, p90 %.1f; reached in %.0f %% of runs\n",
      rs->strategy, rs->seeds, rs->budget, 100 * rs->eps, rs->median, rs->p90, 100 * rs->reached);
  printf(
      "  random search needs %.1f on average ((V+1)/(k+1), V=%zu, k=%zu); random / %s "
      "= %.2fx\n",
      rs->random_expected, rs->valid, rs->within, rs->strategy, rs->random_expected / rs->median);
}

static int cmd_replay(int argc, char **argv) {
  replay_cli cli = {.seeds = 30, .budget = REPLAY_DEFAULT_BUDGET, .target = REPLAY_DEFAULT_EPS};
  int arg, bad = cli_options_parse("replay", NULL, replay_table, argc, argv, &cli, &arg);
  if (bad) return bad;
  const char *name = cli.strategy, *manifest_path = cli.manifest;
  long jobs = cli.jobs, seeds = cli.seeds, budget = cli.budget;
  double eps = cli.target;
  int json = cli.json;
  if (arg >= argc) return cli_usage_error("replay", "give at least one SPACE_FILE");
  if (seeds < 1 || seeds > 100000)
    return cli_usage_error("replay", "--seeds takes 1 to 100000 runs, not %ld", seeds);
  if (name) {
    int known = 0;
    for (const char *const *n = strategy_names(); *n; n++) known |= strcmp(*n, name) == 0;
    char list[256];
    if (!known)
      return cli_usage_error("replay",
                             "unknown strategy '%s' for --strategy; the strategies are %s", name,
                             strategy_list(STRATEGY_PREDICTED, list, sizeof list));
    if (strategy_flags(name) & STRATEGY_PREDICTED)
      return cli_usage_error("replay",
                             "--strategy %s ranks by a model device's predicted "
                             "times, which a recorded space does not have",
                             name);
  }

  ktfile *priors[REPLAY_MAX_PRIORS] = {NULL};
  for (int p = 0; p < cli.nprior; p++) {
    rt_error err = {0};
    if (ktfile_load(cli.prior[p], &priors[p], &err)) {
      for (int q = 0; q < p; q++) ktfile_free(priors[q]);
      return cli_fail("replay", &err);
    }
  }
  json_t *results = json_array();
  int rcode = CLI_EXIT_OK, scored = 0;
  for (int f = arg; f < argc; f++) {
    /* a file that does not load is reported and the others are still scored */
    rt_error err = {0};
    ktfile *kf;
    rt_status ls = ktfile_load(argv[f], &kf, &err);
    if (!ls && (ls = recorded_check_counters(kf, &err))) {
      ktfile_free(kf);
      kf = NULL;
    }
    replay_stats rs;
    replay_facts rf;
    memset(&rf, 0, sizeof rf);
    replay_given given = {.blind = cli.blind, .survey = cli.survey};
    if (!ls && manifest_path &&
        !(ls = replay_compile(kf, manifest_path, gpu_spec_match_name(kf->device_name), (int)jobs,
                              &rf, &err)))
      given = (replay_given){rf.facts,  rf.flops,  rf.executed_flops, rf.dram_bytes,
                             &rf.roles, cli.blind, cli.survey};
    if (ls && kf) {
      ktfile_free(kf);
      kf = NULL;
    }
    if (!ls &&
        (ls = replay_run_given(kf, name, (int)seeds, budget, eps, (const ktfile *const *)priors,
                               cli.nprior, &given, &rs, &err))) {
      if (!err.source[0]) rt_error_locate(&err, argv[f], NULL, 0, 0);
      ktfile_free(kf);
      kf = NULL;
    }
    if (ls) {
      replay_facts_free(&rf);
      rcode = cli_fail("replay", &err);
      if (json) {
        char line[2048];
        rt_error_format(&err, line, sizeof line);
        json_t *o = json_object();
        json_object_set_new(o, "space", json_string(argv[f]));
        json_object_set_new(o, "error", json_string(line));
        json_array_append_new(results, o);
      }
      continue;
    }
    scored++;
    if (kf->unfinished)
      fprintf(stderr,
              "rooftune replay: note: %s is an unfinished Kernel Tuner cache (its run was "
              "interrupted before the closing braces); read as Kernel Tuner reads it\n",
              argv[f]);
    size_t first = rs.prior < STRATEGY_PRIOR_FIRST ? rs.prior : STRATEGY_PRIOR_FIRST;
    if (json) {
      json_array_append_new(
          results, scored_json(argv[f], kf, &rs, &rf, manifest_path, priors, cli.nprior, first));
    } else {
      scored_print(argv[f], kf, &rs, &rf, manifest_path, priors, cli.nprior, first);
    }
    replay_stats_free(&rs);
    replay_facts_free(&rf);
    ktfile_free(kf);
  }
  for (int p = 0; p < cli.nprior; p++) ktfile_free(priors[p]);
  if (arg + 1 < argc && rcode != CLI_EXIT_OK)
    fprintf(stderr, "rooftune replay: %d of %d files scored; the others are reported above\n",
            scored, argc - arg);
  if (json && (rcode == CLI_EXIT_OK || scored)) {
    json_t *root = json_object();
    json_object_set_new(root, "results", results);
    json_dumpf(root, stdout, JSON_INDENT(2) | JSON_PRESERVE_ORDER | JSON_REAL_PRECISION(10));
    fputc('\n', stdout);
    json_decref(root);
  } else {
    json_decref(results);
  }
  return rcode;
}

const cli_command cli_cmd_replay = {
    .name = "replay",
    .summary = "score a search strategy on recorded brute-forced spaces",
    .usage = usage,
    .options = replay_table,
    .run = cmd_replay};
