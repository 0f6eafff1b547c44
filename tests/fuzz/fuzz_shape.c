/* fuzz_shape.c — the shape parsers of the families: gemm, attention, and the declared ones
 * shipped in templates/ (softmax, transpose).  The first byte picks the family, the rest is
 * "SHAPE\0DTYPE\0ARGS".  Any text parses or fails with an error; what parses is a problem the
 * family can price: positive dimensions, a canonical shape that parses to the same problem. */
#include "fuzz_util.h"
#include "kernels/family.h"

int LLVMFuzzerInitialize(int *argc, char ***argv);
int LLVMFuzzerInitialize(int *argc, char ***argv) {
  (void)argc;
  (void)argv;
  rt_error err = {0};
  if (family_load_path(ROOFTUNE_SOURCE_DIR "/templates", &err) != RT_OK) {
    fprintf(stderr, "fuzz_shape: %s\n", err.text);
    abort();
  }
  return 0;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  static const char *const families[] = {"gemm", "attention", "softmax", "transpose"};
  if (size < 1) return 0;
  const family_ops *f = family_find(families[data[0] % 4]);
  if (!f) abort();
  char *text = malloc(size + 2);
  memcpy(text, data + 1, size - 1);
  text[size - 1] = text[size] = '\0';
  const char *shape = text, *dtype = shape + strlen(shape) + 1, *args = NULL;
  if (dtype > text + size - 1)
    dtype = "f16";
  else if (dtype + strlen(dtype) + 1 <= text + size - 1)
    args = dtype + strlen(dtype) + 1;
  problem p;
  rt_error err = {0};
  if (f->parse_shape(f, shape, dtype, args, &p, &err) == RT_OK) {
    for (int i = 0; i < p.ndims; i++)
      if (p.dims[i] < 0) abort();
    if (!(f->flops(f, &p) >= 0) || !(f->min_bytes(f, &p) >= 0)) abort();
    rt_vars v;
    rt_vars_clear(&v);
    f->bind(f, &p, &v);
    /* the canonical shape reads back as the same problem */
    problem q;
    rt_error e2 = {0};
    if (f->parse_shape(f, p.shape, p.dtype, p.args[0] ? p.args : NULL, &q, &e2) != RT_OK) abort();
    if (strcmp(q.shape, p.shape) || q.ndims != p.ndims) abort();
  } else if (!err.text[0]) {
    abort(); /* a refusal says why */
  }
  free(text);
  return 0;
}
