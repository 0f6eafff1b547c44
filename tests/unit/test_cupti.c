/* test_cupti.c — the host half of the hardware counters (driver/cupti.h), no GPU needed:
 * libcupti loads at run time; its host API knows the chips rooftune tunes on; rooftune's
 * metric list for GH100, GA100 and AD102 holds every metric the diagnosis needs (and only
 * metrics the chip offers: gmma stalls on Hopper, none on Ampere); CUPTI builds a
 * configuration image for each list with a plausible number of passes, the same bytes every
 * time, and refuses a misspelt metric and an unknown chip with a message naming them; the
 * decoding arithmetic (bytes add over ranges, percentages weighted by duration, stall shares
 * ranked) on worked values; and a counter data image that is not one is refused, not read.
 * What needs a GPU (a collection, a real counter data image) is tests/gpu/test_counters.c. */
/* stages: driver */
#include "test.h"
#include "driver/cupti.h"

static int has_metric(const cupti_metrics *m, const char *name) {
  for (int i = 0; i < m->count; i++)
    if (!strcmp(m->names[i], name)) return 1;
  return 0;
}

static void test_list(const char *chip, int hopper) {
  cupti_metrics m;
  rt_error err = {0};
  CHECK_INT(cupti_metric_list(chip, NULL, &m, &err), RT_OK);
  if (err.text[0]) fprintf(stderr, "%s: %s\n", chip, err.text);
  CHECK_STR(m.chip, chip);
  static const char *const need[] = {
      "gpu__time_duration.sum",
      "dram__bytes_read.sum",
      "dram__bytes_write.sum",
      "lts__t_bytes.sum",
      "sm__warps_active.avg.pct_of_peak_sustained_active",
      "sm__pipe_tensor_cycles_active.avg.pct_of_peak_sustained_active",
      "sm__pipe_fma_cycles_active.avg.pct_of_peak_sustained_active",
      "sm__throughput.avg.pct_of_peak_sustained_elapsed",
      "smsp__warps_issue_stalled_long_scoreboard.sum",
      "smsp__warps_issue_stalled_barrier.sum",
      "smsp__warps_issue_stalled_math_pipe_throttle.sum"};
  for (size_t i = 0; i < sizeof need / sizeof need[0]; i++) {
    if (!has_metric(&m, need[i])) fprintf(stderr, "%s lacks %s\n", chip, need[i]);
    CHECK(has_metric(&m, need[i]));
  }
  CHECK_INT(has_metric(&m, "smsp__warps_issue_stalled_gmma.sum"), hopper);
  CHECK(!has_metric(&m, "smsp__warps_issue_stalled_selected.sum")); /* issuing is no stall */
  int stalls = 0;
  for (int i = 0; i < m.count; i++) {
    CHECK(m.ptrs[i] == m.names[i]);
    for (int j = 0; j < i; j++) CHECK(strcmp(m.names[i], m.names[j]) != 0);
    if (m.field[i] == CUPTI_F_STALL) {
      stalls++;
      CHECK(m.reason[i][0] && strstr(m.names[i], m.reason[i]));
    }
  }
  CHECK(stalls >= 12);

  uint8_t *img = NULL, *img2 = NULL;
  size_t size = 0, size2 = 0, passes = 0;
  CHECK_INT(cupti_config_image(&m, NULL, &img, &size, &passes, &err), RT_OK);
  if (err.text[0]) fprintf(stderr, "%s: %s\n", chip, err.text);
  CHECK(img != NULL && size > 1024);
  /* one pass cannot hold DRAM, L2, SM pipes and ~17 stall counters; a hundred would be a bug */
  CHECK(passes >= 2 && passes <= 40);
  printf("%s: %d metrics (%d stall reasons), configuration image %zu bytes, %zu passes\n", chip,
         m.count, stalls, size, passes);
  CHECK_INT(cupti_config_image(&m, NULL, &img2, &size2, NULL, &err), RT_OK);
  CHECK(size2 == size && img && img2 && memcmp(img, img2, size) == 0);
  free(img);
  free(img2);

  /* a misspelt metric is CUPTI's to refuse, and the message says which call refused it */
  cupti_metrics bad = m;
  for (int i = 0; i < bad.count; i++) bad.ptrs[i] = bad.names[i];
  snprintf(bad.names[1], sizeof bad.names[1], "dram__bytes_raed.sum");
  rt_error berr = {0};
  CHECK_INT(cupti_config_image(&bad, NULL, &img, &size, NULL, &berr), RT_ERR_UNSUPPORTED);
  CHECK(img == NULL);
  CHECK_CONTAINS(berr.text, "cuptiProfilerHostConfigAddMetrics");
}

/* Worked decoding: two ranges (a library call of two kernels), four metrics and three stalls. */
static void test_values(void) {
  cupti_metrics m;
  memset(&m, 0, sizeof m);
  const char *names[] = {"gpu__time_duration.sum",
                         "dram__bytes_read.sum",
                         "dram__bytes_write.sum",
                         "lts__t_bytes.sum",
                         "sm__warps_active.avg.pct_of_peak_sustained_active",
                         "sm__pipe_tensor_cycles_active.avg.pct_of_peak_sustained_active",
                         "smsp__warps_issue_stalled_barrier.sum",
                         "smsp__warps_issue_stalled_long_scoreboard.sum",
                         "smsp__warps_issue_stalled_wait.sum",
                         "smsp__warps_issue_stalled_misc.sum"};
  cupti_field fields[] = {CUPTI_F_DURATION,  CUPTI_F_DRAM_READ, CUPTI_F_DRAM_WRITE, CUPTI_F_L2,
                          CUPTI_F_OCCUPANCY, CUPTI_F_TENSOR,    CUPTI_F_STALL,      CUPTI_F_STALL,
                          CUPTI_F_STALL,     CUPTI_F_STALL};
  const char *reasons[] = {"", "", "", "", "", "", "barrier", "long_scoreboard", "wait", "misc"};
  for (int i = 0; i < 10; i++) {
    snprintf(m.names[i], sizeof m.names[i], "%s", names[i]);
    m.field[i] = fields[i];
    snprintf(m.reason[i], sizeof m.reason[i], "%s", reasons[i]);
    m.ptrs[i] = m.names[i];
  }
  m.count = 10;
  /* range 0: 300 us at 60 % occupancy, range 1: 100 us at 20 % -> 50 % weighted by duration */
  const double v[2][10] = {{300e3, 1e9, 2e8, 3e9, 60, 90, 300, 500, 100, 0},
                           {100e3, 5e8, 1e8, 1e9, 20, 10, 100, 300, 0, 0}};
  hw_counters c;
  cupti_counters_from_values(&m, &v[0][0], 2, &c);
  CHECK_INT(c.measured, 1);
  CHECK_NEAR(c.duration_ms, 0.4, 1e-12);
  CHECK_NEAR(c.dram_read_bytes, 1.5e9, 1e-3);
  CHECK_NEAR(c.dram_write_bytes, 3e8, 1e-3);
  CHECK_NEAR(c.l2_bytes, 4e9, 1e-3);
  CHECK_NEAR(c.occupancy, 0.5, 1e-12);
  CHECK_NEAR(c.tensor_pipe, 0.70, 1e-12);
  /* stalls: long_scoreboard 800, barrier 400, wait 100 of 1300; misc (0) is not listed */
  CHECK_STR(c.stalls, "long_scoreboard:0.62,barrier:0.31,wait:0.08");
  /* one range, no stall counted: no stall text */
  const double one[10] = {1e3, 1, 2, 3, 50, 0, 0, 0, 0, 0};
  cupti_counters_from_values(&m, one, 1, &c);
  CHECK_STR(c.stalls, "");
  CHECK_NEAR(c.occupancy, 0.5, 1e-12);
}

TEST_CASE(profiler_host) {
  rt_error err = {0};
#if defined(__SANITIZE_ADDRESS__)
  /* libcupti opens libnvperf_host with RTLD_DEEPBIND, which the sanitizer runtime refuses (it
   * aborts the process); the plain build runs this test */
  test_skip("libcupti loads libnvperf_host with RTLD_DEEPBIND, which AddressSanitizer cannot run");
#endif
  if (cupti_load(&err) != RT_OK) test_skip(err.text);
  printf("libcupti: %s\n", cupti.path);
  char chips[1024];
  CHECK_INT(cupti_supported_chips(chips, sizeof chips, &err), RT_OK);
  CHECK_CONTAINS(chips, "GH100");
  CHECK_CONTAINS(chips, "GA100");
  CHECK_CONTAINS(chips, "AD102");
  test_list("GH100", 1);
  test_list("GA100", 0);
  test_list("AD102", 0);

  cupti_metrics m;
  rt_error e2 = {0};
  CHECK_INT(cupti_metric_list("GZ999", NULL, &m, &e2), RT_ERR_UNSUPPORTED);
  CHECK_CONTAINS(e2.text, "GZ999");

  test_values();

  /* a counter data image that is not one: CUPTI refuses it, nothing is read */
  CHECK_INT(cupti_metric_list("GH100", NULL, &m, &err), RT_OK);
  uint8_t *junk = calloc(1, 65536);
  hw_counters c;
  rt_error e3 = {0};
  rt_status s = cupti_decode(&m, junk, 65536, &c, &e3);
  CHECK(s == RT_ERR_UNSUPPORTED || s == RT_ERR_NOT_FOUND);
  CHECK_INT(c.measured, 0);
  printf("a zeroed image: %s\n", e3.text);
  CHECK_INT(cupti_decode(&m, NULL, 0, &c, &e3), RT_ERR_INVALID);
  free(junk);
}

TEST_LIST(TEST_ENTRY(profiler_host))
