/* test_ktfile_hostile.c — Kernel Tuner, KTT and export files that once loaded as something
 * they are not, or failed in a way Kernel Tuner does not:
 *   - an unfinished Kernel Tuner cache (an interrupted run writes no closing braces) is read as
 *     Kernel Tuner reads it, and says it was unfinished;
 *   - a gzip file truncated inside its CRC trailer is refused (it was accepted), and so is one
 *     with bytes after its gzip stream (zlib ignores them; it was accepted), while two gzip
 *     streams one after the other still read as one file;
 *   - duplicate keys are refused (the last one silently won);
 *   - times that are no kernel time (1e-300 ms became the optimum; negative, zero, text-less)
 *     are refused naming the record; Kernel Tuner's failure marker 1e20 is a failure;
 *   - device names, kernel names and failure reasons lose their control characters;
 *   - parameter values longer than 255 characters and configurations longer than 767 are
 *     refused (they were cut, so two configurations could become one);
 *   - an empty file is reported as empty, not as invalid JSON;
 *   - a parameter of more distinct values than a space holds (65,535) is refused naming the
 *     parameter and the limit, in Kernel Tuner and KTT files alike (200,000 values did not
 *     finish: every value was compared with every earlier one), while 65,535 values load with
 *     each record on its own value (1 and 1.0, 0 and -0 are one value);
 *   - a file of more parameters than a configuration's text can carry is refused at once;
 *   - every error names the file. */
/* stages: template */
#include <unistd.h>
#include <zlib.h>

#include "test.h"
#include "template/ktfile.h"

static char dir[256];

static const char *put(const char *name, const char *text) {
  static char path[512];
  snprintf(path, sizeof path, "%s/%s", dir, name);
  FILE *f = fopen(path, "w");
  CHECK(f != NULL);
  if (f) {
    fputs(text, f);
    fclose(f);
  }
  return path;
}

/* A Kernel Tuner cache as its writer leaves it: header, entries with a comma after each, and
 * (when finished) "}\n}".  TIMES are the entries' time texts. */
static char *kt_cache(const char *device, int n, const char *const *times, int finished) {
  size_t cap = 4096 + (size_t)n * 256;
  char *s = malloc(cap);
  size_t k = (size_t)snprintf(s, cap,
                              "{\n\"device_name\": \"%s\",\n\"kernel_name\": \"k\",\n"
                              "\"tune_params_keys\": [\"x\"],\n\"tune_params\": {\"x\": [",
                              device);
  for (int i = 0; i < n; i++) k += (size_t)snprintf(s + k, cap - k, "%s%d", i ? ", " : "", i + 1);
  k += (size_t)snprintf(s + k, cap - k, "]},\n\"cache\": {\n");
  for (int i = 0; i < n; i++)
    k += (size_t)snprintf(s + k, cap - k, "\"%d\": {\"x\": %d, \"time\": %s},\n", i + 1, i + 1,
                          times[i]);
  if (finished) {
    s[k - 2] = '\n'; /* the last entry has no comma */
    k--;
    snprintf(s + k, cap - k, "}\n}\n");
  }
  return s;
}

static rt_status load(const char *path, ktfile **kf, rt_error *err) {
  rt_error_clear(err);
  *kf = NULL;
  rt_status s = ktfile_load(path, kf, err);
  if (s) CHECK_STR(err->source, path); /* every error names the file */
  return s;
}

static void test_unfinished_cache(void) {
  const char *times[] = {"2.0", "1.5", "\"CompilationFailedConfig\"", "3.25"};
  ktfile *kf;
  rt_error err;
  char *done = kt_cache("GPU", 4, times, 1);
  CHECK_INT(load(put("done.json", done), &kf, &err), RT_OK);
  if (kf) CHECK_INT(kf->unfinished, 0);
  ktfile_free(kf);
  /* as an interrupted run leaves it: a comma after the last entry, no closing braces */
  char *open = kt_cache("GPU", 4, times, 0);
  CHECK_INT(load(put("open.json", open), &kf, &err), RT_OK);
  if (kf) {
    CHECK_INT(kf->unfinished, 1);
    CHECK_INT(kf->configs, 4);
    CHECK_INT(kf->valid, 3);
    CHECK_NEAR(kf->optimum_ms, 1.5, 0);
  }
  ktfile_free(kf);
  /* cut in the middle of an entry: Kernel Tuner cannot read it either */
  open[strlen(open) - 12] = '\0';
  CHECK_INT(load(put("cut.json", open), &kf, &err), RT_ERR_PARSE);
  CHECK_CONTAINS(err.text, "invalid JSON");
  free(done);
  free(open);
}

static void test_gzip_trailer(void) {
  char plain[512], gz[512];
  snprintf(plain, sizeof plain, "%s/tests/data/ktfiles/small.json", test_source_dir());
  snprintf(gz, sizeof gz, "%s/trailer.json.gz", dir);
  FILE *in = fopen(plain, "rb");
  gzFile out = gzopen(gz, "wb");
  char buf[4096];
  size_t n;
  while (in && out && (n = fread(buf, 1, sizeof buf, in)) > 0) gzwrite(out, buf, (unsigned)n);
  if (in) fclose(in);
  if (out) gzclose(out);
  ktfile *kf;
  rt_error err;
  CHECK_INT(load(gz, &kf, &err), RT_OK);
  ktfile_free(kf);
  /* drop the last 3 bytes: the CRC and length trailer is incomplete, the data is whole */
  FILE *f = fopen(gz, "rb");
  unsigned char data[1 << 16];
  size_t len = f ? fread(data, 1, sizeof data, f) : 0;
  if (f) fclose(f);
  f = fopen(gz, "wb");
  if (f) {
    fwrite(data, 1, len - 3, f);
    fclose(f);
  }
  CHECK_INT(load(gz, &kf, &err), RT_ERR_IO);
  CHECK_CONTAINS(err.text, "ends early");
  ktfile_free(kf);
  /* the whole stream and garbage after it */
  f = fopen(gz, "wb");
  if (f) {
    fwrite(data, 1, len, f);
    fputs("trailing garbage\n", f);
    fclose(f);
  }
  CHECK_INT(load(gz, &kf, &err), RT_ERR_PARSE);
  CHECK_CONTAINS(err.text, "17 more bytes follow it");
  ktfile_free(kf);
  /* a zero padding too */
  f = fopen(gz, "wb");
  if (f) {
    fwrite(data, 1, len, f);
    fwrite("\0\0\0\0", 1, 4, f);
    fclose(f);
  }
  CHECK_INT(load(gz, &kf, &err), RT_ERR_PARSE);
  ktfile_free(kf);
  /* a gzip stream of whitespace after the first: two members are one file, as gzip reads them */
  f = fopen(gz, "wb");
  if (f) {
    fwrite(data, 1, len, f);
    fclose(f);
  }
  out = gzopen(gz, "ab");
  if (out) {
    gzwrite(out, "\n\n", 2);
    gzclose(out);
  }
  CHECK_INT(load(gz, &kf, &err), RT_OK);
  ktfile_free(kf);
}

static void test_duplicate_keys(void) {
  ktfile *kf;
  rt_error err;
  const char *text =
      "{\"tune_params_keys\": [\"x\"], \"tune_params\": {\"x\": [1, 2]}, \"cache\": {"
      "\"1\": {\"x\": 1, \"time\": 5.0}, \"1\": {\"x\": 1, \"time\": 0.5}}}";
  CHECK_INT(load(put("dup.json", text), &kf, &err), RT_ERR_PARSE);
  CHECK_CONTAINS(err.text, "duplicate");
  ktfile_free(kf);
}

static void test_times(void) {
  static const struct {
    const char *time;
    int ok;           /* 1: timed, 2: a failure, 0: refused */
    const char *text; /* in the error */
  } cases[] = {
      {"1e-300", 0, "not a kernel time"},
      {"-1.0", 0, "not a kernel time"},
      {"0", 0, "not a kernel time"},
      {"true", 0, "not a number"},
      {"null", 0, "not a number"},
      {"[1]", 0, "not a number"},
      {"1e20", 2, NULL},
      {"1e300", 2, NULL},
      {"0.000001", 1, NULL},
      {"86400000", 1, NULL},
  };
  for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
    const char *times[] = {"1.0", cases[i].time};
    char *text = kt_cache("GPU", 2, times, 1);
    ktfile *kf;
    rt_error err;
    rt_status s = load(put("time.json", text), &kf, &err);
    if (cases[i].ok) {
      CHECK_INT(s, RT_OK);
      if (kf) CHECK_INT(kf->valid, cases[i].ok == 1 ? 2 : 1);
    } else {
      CHECK_INT(s, RT_ERR_PARSE);
      CHECK_CONTAINS(err.text, cases[i].text);
      CHECK_CONTAINS(err.text, "cache entry \"2\"");
    }
    ktfile_free(kf);
    free(text);
  }
  /* a whole record without a time */
  ktfile *kf;
  rt_error err;
  const char *none =
      "{\"tune_params_keys\": [\"x\"], \"tune_params\": {\"x\": [1, 2]}, \"cache\": {"
      "\"1\": {\"x\": 1, \"time\": 5.0}, \"2\": {\"x\": 2}}}";
  CHECK_INT(load(put("notime.json", none), &kf, &err), RT_ERR_PARSE);
  CHECK_CONTAINS(err.text, "no time");
  ktfile_free(kf);
  /* KTT: a negative duration */
  const char *ktt =
      "{\"Metadata\": {\"TimeUnit\": \"Microseconds\"}, \"Results\": ["
      "{\"KernelName\": \"k\", \"Status\": \"Ok\", \"Configuration\": [{\"Name\": \"x\", "
      "\"Value\": 1}], \"ComputationResults\": [{\"Duration\": 12}]},"
      "{\"KernelName\": \"k\", \"Status\": \"Ok\", \"Configuration\": [{\"Name\": \"x\", "
      "\"Value\": 2}], \"ComputationResults\": [{\"Duration\": -3}]}]}";
  CHECK_INT(load(put("ktt.json", ktt), &kf, &err), RT_ERR_PARSE);
  CHECK_CONTAINS(err.text, "Results[1]");
  ktfile_free(kf);
  /* KTT: a counter that is no count, a register count that is no whole number, a block of 0 */
  static const struct {
    const char *comp, *text;
  } bad[] = {
      {"\"ProfilingData\": {\"Counters\": [{\"Name\": \"dram__sectors_read.sum\", \"Value\": -1}]}",
       "dram__sectors_read.sum"},
      {"\"ProfilingData\": {\"Counters\": [{\"Name\": \"dram__sectors_read.sum\", \"Value\": "
       "\"9\"}]}",
       "dram__sectors_read.sum"},
      {"\"ProfilingData\": {\"Counters\": [{\"Value\": 3}]}", "no Name"},
      {"\"ProfilingData\": {\"Counters\": 7}", "not a list"},
      {"\"CompilationData\": {\"RegistersCount\": 31.5}, \"LocalSize\": {\"X\": 32}",
       "RegistersCount"},
      {"\"LocalSize\": {\"X\": 0, \"Y\": 1, \"Z\": 1}", "LocalSize"},
  };
  for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
    char text[1024];
    snprintf(
        text, sizeof text,
        "{\"Metadata\": {\"TimeUnit\": \"Microseconds\", \"GlobalSizeType\": \"CUDA\"}, "
        "\"Results\": [{\"KernelName\": \"k\", \"Status\": \"Ok\", \"Configuration\": "
        "[{\"Name\": \"x\", \"Value\": 1}], \"ComputationResults\": [{\"Duration\": 12, %s}]}]}",
        bad[i].comp);
    CHECK_INT(load(put("ktt_counter.json", text), &kf, &err), RT_ERR_PARSE);
    CHECK(kf == NULL);
    CHECK_CONTAINS(err.text, "Results[0]");
    CHECK_CONTAINS(err.text, bad[i].text);
    CHECK_CONTAINS(err.source, "ktt_counter.json");
  }
}

static void test_control_characters(void) {
  const char *times[] = {"1.0", "\"Runtime\\u001b[2Jfailed\"", "2.0"};
  char *text = kt_cache("GPU\\u001b]0;owned\\u0007\\nname", 3, times, 1);
  ktfile *kf;
  rt_error err;
  CHECK_INT(load(put("ctrl.json", text), &kf, &err), RT_OK);
  if (kf) {
    CHECK_STR(kf->device_name, "GPU?]0;owned??name");
    CHECK_INT(kf->nreasons, 1);
    if (kf->nreasons) CHECK_STR(kf->reasons[0], "Runtime?[2Jfailed");
  }
  ktfile_free(kf);
  free(text);
  /* a control character in a parameter name or value is refused */
  const char *bad =
      "{\"tune_params_keys\": [\"x\\ny\"], \"tune_params\": {\"x\\ny\": [1]}, \"cache\": {"
      "\"1\": {\"x\\ny\": 1, \"time\": 5.0}}}";
  CHECK_INT(load(put("ctrlname.json", bad), &kf, &err), RT_ERR_PARSE);
  CHECK_CONTAINS(err.text, "control character");
  ktfile_free(kf);
}

static void test_lengths(void) {
  char big[400];
  memset(big, 'v', 300);
  big[300] = '\0';
  char text[4096];
  snprintf(text, sizeof text,
           "{\"tune_params_keys\": [\"x\"], \"tune_params\": {\"x\": [\"%s\", \"b\"]}, \"cache\": {"
           "\"a\": {\"x\": \"%s\", \"time\": 5.0}, \"b\": {\"x\": \"b\", \"time\": 4.0}}}",
           big, big);
  ktfile *kf;
  rt_error err;
  CHECK_INT(load(put("longval.json", text), &kf, &err), RT_ERR_PARSE);
  CHECK_CONTAINS(err.text, "longer than 255 characters");
  ktfile_free(kf);
  /* four values of 200 characters: each fits, a configuration does not */
  memset(big, 'w', 200);
  big[200] = '\0';
  snprintf(
      text, sizeof text,
      "{\"tune_params_keys\": [\"a\", \"b\", \"c\", \"d\"], \"tune_params\": {\"a\": [\"%s\"], "
      "\"b\": [\"%s\"], \"c\": [\"%s\"], \"d\": [\"%s\"]}, \"cache\": {\"1\": {\"a\": \"%s\", "
      "\"b\": \"%s\", \"c\": \"%s\", \"d\": \"%s\", \"time\": 1.0}}}",
      big, big, big, big, big, big, big, big);
  CHECK_INT(load(put("longcfg.json", text), &kf, &err), RT_ERR_PARSE);
  CHECK_CONTAINS(err.text, "811 characters");
  ktfile_free(kf);
}

static void test_empty(void) {
  ktfile *kf;
  rt_error err;
  CHECK_INT(load(put("empty.json", ""), &kf, &err), RT_ERR_PARSE);
  CHECK_CONTAINS(err.text, "the file is empty");
  CHECK_INT(load(put("blank.json", " \n\t\n"), &kf, &err), RT_ERR_PARSE);
  CHECK_CONTAINS(err.text, "only white space");
  /* an empty gzip stream is as empty */
  char gz[512];
  snprintf(gz, sizeof gz, "%s/empty.json.gz", dir);
  gzFile out = gzopen(gz, "wb");
  if (out) gzclose(out);
  CHECK_INT(load(gz, &kf, &err), RT_ERR_PARSE);
  CHECK_CONTAINS(err.text, "the file is empty");
  /* a folder is not a file (and a FIFO would block) */
  CHECK_INT(load(dir, &kf, &err), RT_ERR_IO);
  CHECK_CONTAINS(err.text, "not a regular file");
}

/* A Kernel Tuner cache of one parameter x declaring n distinct values (in an unsorted order),
 * with a record for each of the first nrec values. */
static char *kt_values(int n, int nrec) {
  size_t cap = 256 + (size_t)n * 12 + (size_t)nrec * 48;
  char *s = malloc(cap);
  size_t k = (size_t)snprintf(s, cap, "{\"tune_params_keys\": [\"x\"], \"tune_params\": {\"x\": [");
  for (int i = 0; i < n; i++)
    k += (size_t)snprintf(s + k, cap - k, "%s%lld", i ? ", " : "", 1 + ((long long)i * 7919) % n);
  k += (size_t)snprintf(s + k, cap - k, ", 1.0, -0.0, 0]}, \"cache\": {");
  for (int i = 0; i < nrec; i++)
    k += (size_t)snprintf(s + k, cap - k, "%s\"%d\": {\"x\": %d, \"time\": %d.5}", i ? ", " : "", i,
                          nrec - i, i + 1);
  snprintf(s + k, cap - k, "}}");
  return s;
}

static void test_many_values(void) {
  ktfile *kf;
  rt_error err;
  /* 65,534 values and the 0 that -0.0 and 0 both are: a full domain loads */
  char *text = kt_values(65534, 65534);
  CHECK_INT(load(put("full.json", text), &kf, &err), RT_OK);
  if (kf) {
    CHECK_INT(kf->configs, 65534);
    const space_param *p = space_param_at(kf->space, 0);
    CHECK_INT(p->count, 65535);
    CHECK_INT(p->ints[0], 0);
    CHECK_INT(p->ints[65534], 65534);
    /* record i gives x = 65534 - i, at position 65534 - i of the sorted domain */
    CHECK_INT(space_config(kf->space, 0)[0], 65534);
    CHECK_INT(space_config(kf->space, 65533)[0], 1);
    CHECK_NEAR(kf->optimum_ms, 1.5, 0);
  }
  ktfile_free(kf);
  free(text);
  /* 200,000 values (1.5 MB): refused naming the parameter and the limit */
  text = kt_values(200000, 1);
  CHECK_INT(load(put("values.json", text), &kf, &err), RT_ERR_INVALID);
  CHECK_CONTAINS(err.text, "parameter x has more than the 65535 distinct values");
  free(text);
  /* the same in a KTT file: a result for each of 70,000 values */
  size_t cap = 256 + 70000 * 160;
  char *ktt = malloc(cap);
  size_t k = (size_t)snprintf(ktt, cap,
                              "{\"Metadata\": {\"TimeUnit\": \"Microseconds\"}, "
                              "\"Results\": [");
  for (int i = 0; i < 70000; i++)
    k += (size_t)snprintf(ktt + k, cap - k,
                          "%s{\"KernelName\": \"k\", \"Status\": \"Ok\", \"Configuration\": "
                          "[{\"Name\": \"y\", \"Value\": %d}], \"ComputationResults\": "
                          "[{\"Duration\": 5}]}",
                          i ? ", " : "", i);
  snprintf(ktt + k, cap - k, "]}");
  CHECK_INT(load(put("ktt-values.json", ktt), &kf, &err), RT_ERR_INVALID);
  CHECK_CONTAINS(err.text, "parameter y has more than the 65535 distinct values");
  free(ktt);
  /* 300 parameters: no configuration of them fits 767 characters */
  char *many = malloc(300 * 40 + 256);
  k = (size_t)sprintf(many, "{\"tune_params_keys\": [");
  for (int i = 0; i < 300; i++) k += (size_t)sprintf(many + k, "%s\"p%d\"", i ? ", " : "", i);
  k += (size_t)sprintf(many + k, "], \"tune_params\": {");
  for (int i = 0; i < 300; i++) k += (size_t)sprintf(many + k, "%s\"p%d\": [1]", i ? ", " : "", i);
  sprintf(many + k, "}, \"cache\": {}}");
  CHECK_INT(load(put("params.json", many), &kf, &err), RT_ERR_PARSE);
  CHECK_CONTAINS(err.text, "the file has 300 parameters");
  free(many);
}

TEST_CASE(hostile_files) {
  const char *t = getenv("TMPDIR");
  snprintf(dir, sizeof dir, "%s/rooftune-kth-XXXXXX", t && *t ? t : "/tmp");
  if (!mkdtemp(dir)) test_skip("cannot create a temporary folder");
  test_unfinished_cache();
  test_gzip_trailer();
  test_duplicate_keys();
  test_times();
  test_control_characters();
  test_lengths();
  test_empty();
  test_many_values();
  char cmd[512];
  snprintf(cmd, sizeof cmd, "rm -rf '%s'", dir);
  if (system(cmd) != 0) fprintf(stderr, "cannot remove %s\n", dir);
}

TEST_LIST(TEST_ENTRY(hostile_files))
