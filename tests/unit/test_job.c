/* test_job.c — job files: a file using every field loads with each value where it belongs;
 * every invalid file in tests/data/jobs/invalid is refused with exactly the one-line error of
 * its .expected (file, field, line); durations; jsonline's lines; shards own disjoint problems
 * that cover the job, split problems belong to all, tags and shard databases. */
/* stages: job */
#include <dirent.h>
#include <unistd.h>

#include "test.h"
#include "tuner/device/device.h"
#include "job/job.h"
#include "job/jsonline.h"

static void test_valid(const char *dir) {
  char path[1200];
  snprintf(path, sizeof path, "%s/valid/full.json", dir);
  job *j = NULL;
  rt_error err = {0};
  CHECK_INT(job_load(path, &j, &err), RT_OK);
  if (!j) {
    fprintf(stderr, "  %s (%s %s line %d)\n", err.text, err.source, err.field, err.line);
    return;
  }
  CHECK_STR(j->name, "full-1");
  CHECK_CONTAINS(j->database, "/valid/db/tuning.db");
  CHECK(j->database[0] == '/');
  CHECK_STR(j->output, "/tmp/rooftune-full-out");
  CHECK_INT(j->ndevices, 2);
  CHECK_STR(j->devices[1], "model:a100");
  CHECK_NEAR(j->time_budget_s, 5400, 1e-9);
  CHECK_NEAR(j->timeout_s, 15, 1e-9);
  CHECK_CONTAINS(j->shard_database, "/valid/shards/{name}-{i}-of-{n}.db");
  CHECK_NEAR(j->fresh.max_age_s, 2 * 86400, 1e-9);
  CHECK_INT(j->fresh.driver, 0);
  CHECK_INT(j->fresh.toolkit, 1);
  CHECK_INT(j->fresh.template_version, 0);
  CHECK_INT(j->recheck, 1);
  CHECK_NEAR(j->recheck_every_s, 0, 1e-12);
  CHECK_NEAR(j->tolerance, 0.075, 1e-12);
  CHECK_INT(j->nproblems, 5);
  if (j->nproblems == 5) {
    const job_problem *p = j->problems;
    CHECK_STR(p[0].dtype, "bf16");
    CHECK_INT(p[0].budget, 8);
    CHECK_STR(p[0].strategy, "random");
    CHECK_INT(p[0].seed, 3);
    CHECK_INT(p[0].line, 14);
    CHECK_STR(p[0].family, "gemm");
    CHECK_INT(p[0].is_template, 0);
    CHECK_INT(p[1].budget, 4);
    CHECK_STR(p[1].strategy, "lever");
    CHECK_STR(p[1].layout, "nt");
    CHECK_STR(p[2].family, "gemm");
    CHECK_INT(p[2].is_template, 1);
    CHECK_STR(p[2].dtype, "f16");
    CHECK_INT(p[2].seed, 9);
    CHECK_INT(p[2].split, 1);
    CHECK_STR(p[3].family, "attention");
    CHECK_STR(p[4].dtype, "f32");
  }
  /* shards: the unsplit problems go round, the split one to every shard */
  job_shard s3[3];
  for (int i = 0; i < 3; i++) s3[i] = (job_shard){i, 3};
  for (size_t k = 0; k < j->nproblems; k++) {
    int owners = 0;
    for (int i = 0; i < 3; i++) owners += job_shard_owns(j, k, s3[i]);
    CHECK_INT(owners, k == 2 ? 3 : 1);
    CHECK_INT(job_problem_split(j, k, s3[0]), k == 2);
    CHECK(job_shard_owns(j, k, (job_shard){0, 1}));
    CHECK(!job_problem_split(j, k, (job_shard){0, 1}));
  }
  CHECK(job_shard_owns(j, 4, s3[1]) && !job_shard_owns(j, 4, s3[0]));
  char buf[1200];
  job_shard_tag(j, s3[2], buf, sizeof buf);
  CHECK_STR(buf, "[job full-1 shard 2/3]");
  job_shard_database(j, s3[1], buf, sizeof buf);
  CHECK_CONTAINS(buf, "/valid/shards/full-1-1-of-3.db");
  job_shard sub = job_shard_sub(s3[1], 1, 4);
  CHECK_INT(sub.index, 5);
  CHECK_INT(sub.count, 12);
  job_free(j);
}

/* An expected message names the device kinds as "{DEVICES}": the table's help text, so a new
 * kind needs no fixture edits. */
static void expand_devices(char *want, size_t size) {
  char *m = strstr(want, "{DEVICES}"), rest[1024], kinds[512];
  if (!m) return;
  snprintf(rest, sizeof rest, "%s", m + strlen("{DEVICES}"));
  snprintf(m, size - (size_t)(m - want), "%s%s", device_kinds_help(0, kinds, sizeof kinds), rest);
}

static void test_invalid(const char *dir) {
  char idir[1200];
  snprintf(idir, sizeof idir, "%s/invalid", dir);
  char cwd[1200];
  CHECK(getcwd(cwd, sizeof cwd) != NULL);
  CHECK_INT(chdir(idir), 0); /* the messages then name each file as the fixtures do */
  DIR *d = opendir(".");
  CHECK(d != NULL);
  if (!d) return;
  struct dirent *e;
  int n = 0;
  while ((e = readdir(d)) != NULL) {
    size_t len = strlen(e->d_name);
    if (len < 6 || strcmp(e->d_name + len - 5, ".json")) continue;
    char exp_path[600], want[1024] = "";
    snprintf(exp_path, sizeof exp_path, "%.*s.expected", (int)(len - 5), e->d_name);
    FILE *ef = fopen(exp_path, "r");
    CHECK(ef != NULL);
    if (ef) {
      if (!fgets(want, sizeof want, ef)) want[0] = 0;
      fclose(ef);
      want[strcspn(want, "\n")] = 0;
    }
    expand_devices(want, sizeof want);
    job *j = NULL;
    rt_error err = {0};
    rt_status s = job_load(e->d_name, &j, &err);
    CHECK(s != RT_OK);
    CHECK(j == NULL);
    char got[1600], line[1800];
    rt_error_format(&err, got, sizeof got);
    snprintf(line, sizeof line, "%s: %s", rt_status_name(s), got);
    /* the expected text is the whole line, or (for messages that quote the family's own
     * words) its start */
    if (strncmp(line, want, strlen(want)) != 0 || !want[0]) {
      test_failures++;
      fprintf(stderr, "%s:\n  got  %s\n  want %s\n", e->d_name, line, want);
    }
    test_checks++;
    job_free(j);
    n++;
  }
  closedir(d);
  CHECK_INT(chdir(cwd), 0);
  CHECK(n >= 20);
  printf("%d invalid job files refused with their expected message\n", n);
  /* a missing file names itself */
  job *j = NULL;
  rt_error err = {0};
  CHECK_INT(job_load("/nonexistent/job.json", &j, &err), RT_ERR_IO);
  char line[1600];
  rt_error_format(&err, line, sizeof line);
  CHECK_CONTAINS(line, "/nonexistent/job.json");
}

static void test_durations(void) {
  CHECK_NEAR(job_parse_duration("90m"), 5400, 1e-9);
  CHECK_NEAR(job_parse_duration("1h30m"), 5400, 1e-9);
  CHECK_NEAR(job_parse_duration("7d"), 7 * 86400, 1e-9);
  CHECK_NEAR(job_parse_duration("2w"), 14 * 86400, 1e-9);
  CHECK_NEAR(job_parse_duration("3600"), 3600, 1e-9);
  CHECK_NEAR(job_parse_duration("0.5s"), 0.5, 1e-12);
  CHECK_NEAR(job_parse_duration("0"), 0, 1e-12);
  CHECK(job_parse_duration("1h30") < 0);
  CHECK(job_parse_duration("3 hours") < 0);
  CHECK(job_parse_duration("-1h") < 0);
  CHECK(job_parse_duration("") < 0);
  CHECK(job_parse_duration("h") < 0);
  char b[32];
  job_format_duration(40, b, sizeof b);
  CHECK_STR(b, "40 s");
  job_format_duration(3 * 86400, b, sizeof b);
  CHECK_STR(b, "3.0 d");
  job_shard s;
  rt_error err = {0};
  CHECK_INT(job_shard_parse("3/4", &s, &err), RT_OK);
  CHECK_INT(s.index, 3);
  CHECK_INT(s.count, 4);
  CHECK_INT(job_shard_parse("4/4", &s, &err), RT_ERR_USAGE);
  CHECK_STR(err.source, "--shard");
  CHECK_INT(job_shard_parse("1", &s, &err), RT_ERR_USAGE);
  CHECK_INT(job_shard_parse("-1/2", &s, &err), RT_ERR_USAGE);
  CHECK_INT(job_shard_parse("1/2x", &s, &err), RT_ERR_USAGE);
}

static void test_jsonline(void) {
  const char *t =
      "{\n  \"a\": 1,\n  \"b\": [\n    {\"x\": \"{[\\\"\"},\n    {\"x\": 2,\n     \"y\": 3}\n  ],\n"
      "  \"c\": {\"d\": {\n    \"e\": null}}\n}\n";
  CHECK_INT(jsonline_find(t, ""), 1);
  CHECK_INT(jsonline_find(t, "a"), 2);
  CHECK_INT(jsonline_find(t, "b"), 3);
  CHECK_INT(jsonline_find(t, "b[0]"), 4);
  CHECK_INT(jsonline_find(t, "b[1].y"), 6);
  CHECK_INT(jsonline_find(t, "c.d.e"), 9);
  CHECK_INT(jsonline_find(t, "c.d"), 8);
  CHECK_INT(jsonline_find(t, "b[1].z"), 5); /* absent: the object it would be in */
  CHECK_INT(jsonline_find(t, "b[7]"), 3);
  CHECK_INT(jsonline_find(NULL, "a"), 0);
}

TEST_CASE(jobs) {
  char dir[1024];
  snprintf(dir, sizeof dir, "%s/tests/data/jobs", test_source_dir());
  test_durations();
  test_jsonline();
  test_valid(dir);
  test_invalid(dir);
}

TEST_LIST(TEST_ENTRY(jobs))
