/* fuzz_declared.c — the family declaration loader (kernels/declared.h): any family.json loads
 * or fails with an error naming it; a family that loads parses its example shape and a few
 * others (a shape it refuses, for a count or scalar that fails for it too, says where), binds
 * its names and prices its problems. */
#include "fuzz_util.h"
#include "kernels/declared.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  const char *path = fuzz_write("family.json", data, size);
  family_ops *f = NULL;
  rt_error err = {0};
  if (declared_load(path, &f, &err) != RT_OK) {
    if (!err.source[0]) abort();
    return 0;
  }
  const char *shapes[] = {f->example_shape,
                          "1",
                          "64x64",
                          "4096x4096x4096",
                          "0x1",
                          "9999999999x2",
                          "2147482623",
                          "2147482623x2147482623x2147482623"};
  for (size_t i = 0; i < sizeof shapes / sizeof shapes[0]; i++) {
    problem p;
    rt_error e2 = {0};
    if (f->parse_shape(f, shapes[i], "f32", NULL, &p, &e2) != RT_OK) {
      if (!e2.source[0] || !e2.text[0]) abort(); /* every refusal names the file or the flag */
      continue;
    }
    rt_vars v;
    rt_vars_clear(&v);
    f->bind(f, &p, &v);
    if (f->flops(f, &p) < 0 || f->min_bytes(f, &p) < 0) abort(); /* costs are never negative */
    f->tolerance(f, &p);
  }
  declared_free(f);
  return 0;
}
