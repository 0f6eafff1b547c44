/* bench_inputs.c — how fast the attention family makes a problem's inputs (kernels/attention.c:
 * Q, K, V hashed element by element, in pieces, by every core), against the former way (one
 * core, one splitmix64 stream, a double per element), on a host-memory stand-in for the
 * device (tests/fake_cuda.h: the "upload" is a memcpy).
 *
 * usage: bench_inputs [SHAPE] [--old]
 * Default shape 8x32:8x1:32768x128 (an eighth of the decode suite's 64x32:8x1:32768x128, whose
 * K and V need 8 GB of host memory here); prints the seconds of the whole setup, elements per
 * second and the time the full shape would take at that rate.  --old also times the former
 * generator on K (one core).  Wall-clock figures from this machine; nothing here is a test.
 */
#include <stdio.h>
#include <string.h>
#include <sys/resource.h>
#include <time.h>
#include <unistd.h>

#include "kernels/attention.h"
#include "kernels/numeric.h"
#include "tests/fake_cuda.h"

/* CPU seconds of this process, every thread (other sessions' load does not inflate them) */
static double cpu(void) {
  struct rusage ru;
  getrusage(RUSAGE_SELF, &ru);
  return (double)ru.ru_utime.tv_sec + (double)ru.ru_stime.tv_sec +
         ((double)ru.ru_utime.tv_usec + (double)ru.ru_stime.tv_usec) * 1e-6;
}

static double now(void) {
  struct timespec t;
  clock_gettime(CLOCK_MONOTONIC, &t);
  return (double)t.tv_sec + (double)t.tv_nsec * 1e-9;
}

static void reference(uintptr_t fn, void **args, const unsigned grid[3]) {
  (void)grid;
  const attn_args *a = (const attn_args *)args[0];
  if (fn != 1) return;
  memset((void *)(uintptr_t)a->o, 0, (size_t)a->B * a->SQ * a->HQ * a->D * 4);
  memset((void *)(uintptr_t)a->lse, 0, (size_t)a->B * a->HQ * a->SQ * 4);
}

int main(int argc, char **argv) {
  const char *shape = "8x32:8x1:32768x128";
  int old = 0;
  for (int i = 1; i < argc; i++) {
    if (!strcmp(argv[i], "--old"))
      old = 1;
    else
      shape = argv[i];
  }
  problem p;
  rt_error err = {0};
  if (attention_family.parse_shape(&attention_family, shape, "bf16", NULL, &p, &err)) {
    fprintf(stderr, "bench_inputs: %s\n", err.text);
    return 2;
  }
  const double kv = (double)problem_dim(&p, "B") * problem_dim(&p, "SKV") * problem_dim(&p, "HKV") *
                    problem_dim(&p, "D"),
               q = (double)problem_dim(&p, "B") * problem_dim(&p, "SQ") * problem_dim(&p, "HQ") *
                   problem_dim(&p, "D");
  static const unsigned char cubin[16];
  family_reference ref;
  memset(&ref, 0, sizeof ref);
  ref.cubin = cubin;
  ref.entry = "attn_reference";
  ref.grid[0] = ref.grid[1] = ref.grid[2] = ref.block[0] = ref.block[1] = ref.block[2] = 1;
  fake_cuda_install(reference);
  family_gpu *g = NULL;
  double t0 = now(), c0 = cpu();
  if (attention_family.gpu_setup(&attention_family, &p, 1, &ref, NULL, &g, &err)) {
    fprintf(stderr, "bench_inputs: %s\n", err.text);
    return 1;
  }
  const double t = now() - t0, c = cpu() - c0, elems = q + 2 * kv;
  attention_family.gpu_teardown(g);
  if (fake_cuda_allocs())
    fprintf(stderr, "bench_inputs: %d buffers left allocated\n", fake_cuda_allocs());
  long cpus = sysconf(_SC_NPROCESSORS_ONLN);
  printf(
      "%s bf16: %.3g elements (Q, K, V) in %.2f s on %ld cores (%.2f CPU s, %.3g elements per CPU "
      "s); "
      "64x32:8x1:32768x128 (%.3g) at that rate on 16 cores: %.1f s\n",
      shape, elems, t, cpus, c, elems / c, 2 * 64.0 * 32768 * 8 * 128,
      2 * 64.0 * 32768 * 8 * 128 / (16 * elems / c));
  if (old) { /* the former generator: one stream, a double per element, one core, on K alone */
    uint16_t *buf = malloc(((size_t)1 << 20) * 2);
    uint64_t s = 0x4b;
    double t1 = now(), c1 = cpu();
    for (double done = 0; done < kv; done += (double)(1 << 20)) {
      for (size_t i = 0; i < ((size_t)1 << 20); i++)
        buf[i] = num_f32_to_bf16((float)num_uniform(&s, -1.0, 1.0));
      fake_cuMemcpyHtoD((CUdeviceptr)(uintptr_t)buf, buf, 2); /* the upload's call, not its bytes */
    }
    const double dt = now() - t1, dc = cpu() - c1;
    printf(
        "former generator (one core): K's %.3g elements in %.2f s (%.2f CPU s, %.3g elements per "
        "CPU s); "
        "64x32:8x1:32768x128 at that rate: %.1f s\n",
        kv, dt, dc, kv / dc, 2 * 64.0 * 32768 * 8 * 128 / (kv / dc));
    free(buf);
  }
  return 0;
}
