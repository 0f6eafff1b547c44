/* bench_ktfile.c — loading Kernel Tuner and KTT files whose parameter has many values: for each
 * size (default 65,535, 70,000 and 200,000 distinct values of one parameter) a Kernel Tuner
 * cache declaring them in tune_params with a record for each value a space can hold (at most
 * 65,535), and a KTT file with a result for each value; then the time of ktfile_load() and
 * what it answered.  A file of more than 65,535 values is refused as the values arrive, naming
 * the parameter and the limit; one of 65,535 loads with every record.  The time per value stays
 * flat when the loaders are linear.
 *
 *     bench_ktfile [N ...]        prints figures; exits 1 when a property (not a time) fails */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "template/ktfile.h"

static double now_s(void) {
  struct timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return (double)ts.tv_sec + ts.tv_nsec * 1e-9;
}

/* Value i of the parameter: distinct, in an order that is not sorted. */
static long value_of(int i, int n) { return 1 + (long)(((long long)i * 7919) % n); }

static long write_kt(const char *path, int n) {
  FILE *f = fopen(path, "w");
  if (!f) {
    perror(path);
    exit(1);
  }
  fprintf(f,
          "{\"device_name\": \"bench\", \"kernel_name\": \"k\", \"tune_params_keys\": [\"x\"],\n"
          " \"tune_params\": {\"x\": [");
  for (int i = 0; i < n; i++) fprintf(f, "%s%ld", i ? ", " : "", value_of(i, n));
  fprintf(f, "]},\n \"cache\": {\n");
  int rec = n < 65535 ? n : 65535;
  for (int i = 0; i < rec; i++)
    fprintf(f, "  \"%d\": {\"x\": %d, \"time\": %g}%s\n", i + 1, i + 1, 1.0 + i * 1e-3,
            i + 1 < rec ? "," : "");
  fprintf(f, "}}\n");
  long size = ftell(f);
  fclose(f);
  return size;
}

static long write_ktt(const char *path, int n) {
  FILE *f = fopen(path, "w");
  if (!f) {
    perror(path);
    exit(1);
  }
  fprintf(f,
          "{\"Metadata\": {\"Device\": \"bench\", \"TimeUnit\": \"Microseconds\"},\n"
          " \"Results\": [\n");
  for (int i = 0; i < n; i++)
    fprintf(f,
            "  {\"KernelName\": \"k\", \"Status\": \"Ok\", \"Configuration\": [{\"Name\": \"x\", "
            "\"Value\": %ld}], \"ComputationResults\": [{\"Duration\": %d}]}%s\n",
            value_of(i, n), 10 + i, i + 1 < n ? "," : "");
  fprintf(f, "]}\n");
  long size = ftell(f);
  fclose(f);
  return size;
}

/* Loads path and checks the answer for n values; 1 when the property fails. */
static int run(const char *format, const char *path, long bytes, int n) {
  ktfile *kf = NULL;
  rt_error err = {0};
  double t0 = now_s();
  rt_status rc = ktfile_load(path, &kf, &err);
  double t = now_s() - t0;
  int bad = 0;
  char what[200];
  if (rc == RT_OK) {
    size_t want = (size_t)(n < 65535 ? n : 65535);
    snprintf(what, sizeof what, "loaded, %zu configurations", kf->configs);
    bad = n > 65535 || kf->configs != want;
  } else {
    snprintf(what, sizeof what, "refused: %.150s", err.text);
    bad = n <= 65535 || !strstr(err.text, "65535") || !strstr(err.text, "parameter x");
  }
  printf("%-13s %9d %10.2f %10.2f %10.2f  %s%s\n", format, n, bytes / 1e6, t, 1e6 * t / n, what,
         bad ? "  PROPERTY FAILED" : "");
  ktfile_free(kf);
  return bad;
}

int main(int argc, char **argv) {
  int sizes[8] = {65535, 70000, 200000}, nsizes = 3;
  if (argc > 1) {
    nsizes = 0;
    for (int i = 1; i < argc && nsizes < 8; i++) sizes[nsizes++] = atoi(argv[i]);
  }
  char dir[] = "/tmp/bench-ktfile-XXXXXX";
  if (!mkdtemp(dir)) return 1;
  int bad = 0;
  printf("ktfile_load on one parameter of N distinct values (%s)\n", dir);
  printf("%-13s %9s %10s %10s %10s  %s\n", "format", "values", "MB", "load s", "us/value",
         "answer");
  for (int s = 0; s < nsizes; s++) {
    int n = sizes[s];
    char p[300];
    snprintf(p, sizeof p, "%s/kt-%d.json", dir, n);
    bad |= run("kernel_tuner", p, write_kt(p, n), n);
    unlink(p);
    snprintf(p, sizeof p, "%s/ktt-%d.json", dir, n);
    bad |= run("ktt", p, write_ktt(p, n), n);
    unlink(p);
  }
  rmdir(dir);
  return bad;
}
