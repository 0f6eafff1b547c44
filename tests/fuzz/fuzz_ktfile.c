/* fuzz_ktfile.c — the readers of recorded spaces (template/ktfile.h): Kernel Tuner cache
 * files (finished or not), KTT results and rooftune exports.  Any input loads or fails with an
 * error naming the file; what loads has only plausible times and answers the queries replay
 * and --prior make.  Inputs that start with the gzip magic go through the file reader (zlib),
 * the others through the buffer reader. */
#include <math.h>

#include "fuzz_util.h"
#include "template/ktfile.h"

static void use(const ktfile *kf) {
  if (kf->configs == 0 || kf->valid == 0 || kf->valid > kf->configs) abort();
  for (size_t i = 0; i < kf->configs; i++)
    if (!kf->failure[i] && !(kf->time_ms[i] >= KTFILE_MIN_MS && kf->time_ms[i] < 1e20)) abort();
  for (const char *p = kf->device_name; *p; p++)
    if ((unsigned char)*p < 32) abort(); /* never a control character */
  for (size_t i = 0; i < kf->configs && i < 16; i++) {
    candidate_result r;
    ktfile_result(kf, i, &r);
    size_t idx = 0;
    rt_error err = {0};
    if (ktfile_find(kf, r.config, &idx, &err) != RT_OK || idx != i)
      abort(); /* a config finds itself */
  }
  ktfile_count_within(kf, 0.05);
  size_t *order = NULL, n = 0;
  rt_error err = {0};
  ktfile_rank_in(kf, kf->space, &order, &n, &err);
  free(order);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  ktfile *kf = NULL;
  rt_error err = {0};
  rt_status s;
  if (size >= 2 && data[0] == 0x1f && data[1] == 0x8b) {
    const char *path = fuzz_write("space.json.gz", data, size);
    s = ktfile_load(path, &kf, &err);
  } else {
    ktfile_select sel = {"gemm", "4096x4096x4096", "bf16"};
    s = ktfile_load_buffer("input", (const char *)data, size, size % 2 ? &sel : NULL, &kf, &err);
  }
  if (s != RT_OK) {
    if (!err.source[0]) abort();
    return 0;
  }
  use(kf);
  ktfile_free(kf);
  return 0;
}
