/* test_family_halves.c — every C family is one list (C_FAMILIES, from kernels/NAME_serve.c) and
 * two family_ops: its serving half (what librooftune serves by: family_serving_find) says the
 * same shape syntax, names, coordinates, vendor library and default layout as the whole family
 * (family_find), and carries none of the tuning fields; the coordinates of gemm and of attention
 * prefill and decode. */
/* stages: kernels */
#include "test.h"
#include "kernels/c_families.h"
#include "kernels/family.h"

/* Both NULL, or the same text (two files' literals need not be one object). */
static int same_text(const char *a, const char *b) { return a == b || (a && b && !strcmp(a, b)); }

static void check_halves(const char *name) {
  const family_ops *whole = family_find(name), *serve = family_serving_find(name);
  CHECK(whole != NULL);
  CHECK(serve != NULL);
  if (!whole || !serve) return;
  CHECK(whole != serve);
  CHECK_STR(serve->name, whole->name);
  CHECK(serve->parse_shape == whole->parse_shape);
  CHECK(serve->bind == whole->bind);
  CHECK(serve->coords == whole->coords && serve->coords != NULL);
  CHECK(same_text(serve->shape_help, whole->shape_help));
  CHECK(same_text(serve->library, whole->library));
  CHECK(same_text(serve->default_layout, whole->default_layout));
  /* nothing of tuning: no costs, no tolerance, no GPU side, no candidates */
  CHECK(!serve->flops && !serve->min_bytes && !serve->tolerance && !serve->fused_bytes);
  CHECK(!serve->gpu_setup && !serve->gpu_verify && !serve->gpu_launch && !serve->library_list);
  CHECK(whole->flops && whole->gpu_setup && whole->gpu_verify);
}

static void coords(const char *family, const char *shape, int kind, int n) {
  const family_ops *f = family_serving_find(family);
  problem p;
  rt_error err = {0};
  CHECK_INT(f->parse_shape(f, shape, "bf16", NULL, &p, &err), RT_OK);
  family_coords c;
  f->coords(f, &p, &c);
  CHECK_INT(c.kind, kind);
  CHECK_INT(c.n, n);
}

TEST_CASE(halves) {
  int n = 0;
#define HALVES(name) check_halves(#name), n++;
  C_FAMILIES(HALVES)
#undef HALVES
  CHECK(n >= 2);
  CHECK(family_serving_find("softmax") == NULL); /* a declared family is served by position */
  CHECK(family_serving_find(NULL) == NULL);
  CHECK_STR(family_serving_find("gemm")->library, "cublaslt");
  CHECK_STR(family_serving_find("gemm")->default_layout, "nn");
  CHECK_STR(family_serving_find("attention")->library, "cudnn");
  coords("gemm", "8@64x128x256", 1, 4);
  coords("attention", "4x32x4096x128", 2, 3);      /* prefill */
  coords("attention", "64x32:8x1:8192x128", 3, 2); /* decode */
  printf("%d C families, each a serving half and the whole\n", n);
}

TEST_LIST(TEST_ENTRY(halves))
