/* test_space.c — the space's index, neighbours, format and parse, and its error paths. */
/* stages: template */
#include "test.h"
#include "template/space.h"

/* A: 16 32 64 128; B: 1 2 4; L: row col.  Valid: A*B <= 128 (brute force below). */
static space *make_space(void) {
  space *s = space_new();
  const long long a[] = {16, 32, 64, 128}, b[] = {1, 2, 4};
  const char *const l[] = {"row", "col"};
  CHECK_INT(space_add_param(s, "A", 4, a, NULL, NULL), RT_OK);
  CHECK_INT(space_add_param(s, "B", 3, b, NULL, NULL), RT_OK);
  CHECK_INT(space_add_param(s, "L", 2, NULL, l, NULL), RT_OK);
  for (uint16_t i = 0; i < 4; i++)
    for (uint16_t j = 0; j < 3; j++)
      for (uint16_t k = 0; k < 2; k++)
        if (a[i] * b[j] <= 128) {
          uint16_t cfg[3] = {i, j, k};
          CHECK_INT(space_add_config(s, cfg, NULL), RT_OK);
        }
  CHECK_INT(space_finish(s, NULL), RT_OK);
  return s;
}

static int contains(const size_t *v, size_t n, size_t x) {
  for (size_t i = 0; i < n; i++)
    if (v[i] == x) return 1;
  return 0;
}

/* space_move: the nearest valid value that way, by value (the domain written out of order),
 * skipping values no valid configuration has; identifiers by position; nth; -1 at the ends. */
TEST_CASE(move) {
  space *s = space_new();
  rt_error e = {0};
  static const long long tile[] = {128, 32, 256, 64};
  static const char *const lay[] = {"row", "col", "blk"};
  CHECK_INT(space_add_param(s, "TILE", 4, tile, NULL, &e), RT_OK);
  CHECK_INT(space_add_param(s, "LAYOUT", 3, NULL, lay, &e), RT_OK);
  /* valid: TILE 32, 128, 256 with row; TILE 64 only with blk; 128 with col */
  static const uint16_t cfgs[][2] = {{1, 0}, {0, 0}, {2, 0}, {3, 2}, {0, 1}};
  for (int i = 0; i < 5; i++) CHECK_INT(space_add_config(s, cfgs[i], &e), RT_OK);
  CHECK_INT(space_finish(s, &e), RT_OK);
  uint16_t c32row[2] = {1, 0};
  /* 32 -> (64 has no row configuration) -> 128 */
  CHECK_INT(space_move(s, c32row, 0, 1, 1), 1);
  CHECK_INT(space_move(s, c32row, 0, 1, 2), 2); /* the second valid one: 256 */
  CHECK_INT(space_move(s, c32row, 0, 1, 3), -1);
  CHECK_INT(space_move(s, c32row, 0, -1, 1), -1); /* 32 is the smallest */
  uint16_t c256row[2] = {2, 0};
  CHECK_INT(space_move(s, c256row, 0, -1, 1), 1); /* 256 -> 128 */
  CHECK_INT(space_move(s, c256row, 0, 1, 1), -1);
  uint16_t c128row[2] = {0, 0};
  CHECK_INT(space_move(s, c128row, 1, 1, 1), 4); /* row -> col */
  CHECK_INT(space_move(s, c128row, 1, -1, 1), -1);
  uint16_t c64blk[2] = {3, 2};
  CHECK_INT(space_move(s, c64blk, 1, -1, 1), -1); /* 64 has no col or row configuration */
  CHECK_INT(space_move(s, c64blk, 0, 1, 1), -1);  /* nor blk with a larger TILE */
  CHECK_INT(space_move(s, c32row, 5, 1, 1), -1);  /* no such parameter */
  CHECK_INT(space_move(s, c32row, 0, 0, 1), -1);
  space_free(s);
}

TEST_CASE(small_space) {
  space *s = make_space();
  /* valid: A=16 (3 B) + 32 (3) + 64 (2) + 128 (1) = 9, times 2 layouts */
  CHECK_INT(space_size(s), 18);
  CHECK_NEAR(space_product(s), 24, 0);
  CHECK_INT(space_nparams(s), 3);
  CHECK_INT(space_param_index(s, "B"), 1);
  CHECK_INT(space_param_index(s, "Z"), -1);
  CHECK_STR(space_param_at(s, 2)->idents[1], "col");
  CHECK(space_param_at(s, 3) == NULL);

  /* index round trip, format/parse round trip */
  for (size_t i = 0; i < space_size(s); i++) {
    CHECK_INT(space_index(s, space_config(s, i)), (long)i);
    char buf[128];
    size_t n = space_format_config(s, i, buf, sizeof buf);
    CHECK_INT(n, strlen(buf));
    size_t back = 999;
    CHECK_INT(space_parse_config(s, buf, &back, NULL), RT_OK);
    CHECK_INT(back, i);
  }
  /* deterministic order: insertion order */
  char buf[128];
  space_format_config(s, 0, buf, sizeof buf);
  CHECK_STR(buf, "A=16,B=1,L=row");
  space_format_config(s, 17, buf, sizeof buf);
  CHECK_STR(buf, "A=128,B=1,L=col");
  CHECK_INT(space_value(s, 17, 0), 128);
  CHECK_INT(space_value(s, 17, 2), 1);
  /* a short buffer still reports the full length and stays terminated */
  char small[5];
  CHECK_INT(space_format_config(s, 0, small, sizeof small), 14);
  CHECK_STR(small, "A=16");

  uint16_t invalid[3] = {3, 2, 0}; /* 128*4 > 128 */
  CHECK_INT(space_index(s, invalid), -1);
  uint16_t out_of_range[3] = {9, 0, 0};
  CHECK_INT(space_index(s, out_of_range), -1);

  space_free(s);
}

TEST_CASE(neighbours_and_single) {
  space *s = make_space();
  /* neighbours of A=32,B=2,L=row: A 16/64 (B=2: 32,128 ok), B 1/4 (32*4=128 ok), L col */
  size_t idx;
  CHECK_INT(space_parse_config(s, "A=32,B=2,L=row", &idx, NULL), RT_OK);
  size_t nb[16];
  size_t nn = space_neighbours(s, idx, nb, 16);
  CHECK_INT(nn, 5);
  const char *want[] = {"A=16,B=2,L=row", "A=64,B=2,L=row", "A=32,B=1,L=row", "A=32,B=4,L=row",
                        "A=32,B=2,L=col"};
  for (int w = 0; w < 5; w++) {
    size_t k;
    CHECK_INT(space_parse_config(s, want[w], &k, NULL), RT_OK);
    CHECK(contains(nb, nn, k));
  }
  /* neighbours of A=128,B=1,L=col: A=64 only (B=2 invalid), L=row */
  CHECK_INT(space_parse_config(s, "L=col, B=1, A=128", &idx, NULL), RT_OK);
  nn = space_neighbours(s, idx, nb, 16);
  CHECK_INT(nn, 2);
  /* cap smaller than the count: returns the count, writes cap */
  nb[1] = 12345;
  CHECK_INT(space_neighbours(s, idx, nb, 1), 2);
  CHECK_INT(nb[1], 12345);
  CHECK_INT(space_neighbours(s, 999, nb, 16), 0);

  /* space_single: the same parameters, single configuration, the same text */
  space *single = NULL;
  CHECK_INT(space_single(s, idx, &single, NULL), RT_OK);
  CHECK(single != NULL);
  if (single) {
    char a[64], b[64];
    CHECK_INT(space_size(single), 1);
    CHECK_INT(space_nparams(single), space_nparams(s));
    space_format_config(s, idx, a, sizeof a);
    space_format_config(single, 0, b, sizeof b);
    CHECK_STR(b, a);
    size_t k;
    CHECK_INT(space_parse_config(single, "A=16,B=1,L=row", &k, NULL), RT_ERR_NOT_FOUND);
    space_free(single);
  }
  CHECK_INT(space_single(s, space_size(s), &single, NULL), RT_ERR_INVALID);
  CHECK(single == NULL);

  space_free(s);
}

TEST_CASE(parse_errors) {
  rt_error err;
  space *s = make_space();
  size_t idx;
  char buf[128];
  /* parse errors carry a column */
  rt_error_clear(&err);
  CHECK_INT(space_parse_config(s, "A=16,Q=1,L=row", &idx, &err), RT_ERR_PARSE);
  CHECK_INT(err.column, 6);
  CHECK_CONTAINS(err.text, "unknown parameter Q");
  CHECK_CONTAINS(err.text, "A, B, L");
  rt_error_clear(&err);
  CHECK_INT(space_parse_config(s, "A=16,B=3,L=row", &idx, &err), RT_ERR_PARSE);
  CHECK_INT(err.column, 8);
  CHECK_CONTAINS(err.text, "1, 2, 4");
  rt_error_clear(&err);
  CHECK_INT(space_parse_config(s, "A=16,B=1,L=diag", &idx, &err), RT_ERR_PARSE);
  CHECK_CONTAINS(err.text, "row, col");
  rt_error_clear(&err);
  CHECK_INT(space_parse_config(s, "A=16,B=1", &idx, &err), RT_ERR_PARSE);
  CHECK_CONTAINS(err.text, "lacks parameter L");
  rt_error_clear(&err);
  CHECK_INT(space_parse_config(s, "A=16,A=32,B=1,L=row", &idx, &err), RT_ERR_PARSE);
  CHECK_INT(err.column, 6);
  CHECK_CONTAINS(err.text, "given twice");
  rt_error_clear(&err);
  CHECK_INT(space_parse_config(s, "A=16,B", &idx, &err), RT_ERR_PARSE);
  CHECK_INT(err.column, 7);
  rt_error_clear(&err);
  CHECK_INT(space_parse_config(s, "", &idx, &err), RT_ERR_PARSE);
  CHECK_INT(space_parse_config(s, "A=16x,B=1,L=row", &idx, &err), RT_ERR_PARSE);
  CHECK_INT(space_parse_config(s, "A=,B=1,L=row", &idx, &err), RT_ERR_PARSE);
  rt_error_clear(&err);
  CHECK_INT(space_parse_config(s, "A=128,B=4,L=row", &idx, &err), RT_ERR_NOT_FOUND);
  CHECK_CONTAINS(err.text, "not valid");
  uint16_t vals[3];
  CHECK_INT(space_parse_values(s, "A=128,B=4,L=row", vals, NULL), RT_OK);
  CHECK(vals[0] == 3 && vals[1] == 2 && vals[2] == 0);
  CHECK_INT(space_format_values(s, vals, buf, sizeof buf), 15);
  CHECK_STR(buf, "A=128,B=4,L=row");

  space_free(s);
}

TEST_CASE(build_errors) {
  rt_error err;
  space *s = make_space();
  /* build errors */
  rt_error_clear(&err);
  const long long one[] = {1};
  CHECK_INT(space_add_param(s, "C", 1, one, NULL, &err), RT_ERR_INVALID);
  uint16_t cfg0[3] = {0, 0, 0};
  CHECK_INT(space_add_config(s, cfg0, &err), RT_ERR_INVALID);
  space_free(s);
}

TEST_CASE(param_errors) {
  const long long one[] = {1};
  rt_error err;
  space *s;
  s = space_new();
  CHECK_INT(space_add_param(s, "X", 0, one, NULL, &err), RT_ERR_INVALID);
  CHECK_INT(space_add_param(s, "X", 1, NULL, NULL, &err), RT_ERR_INVALID);
  CHECK_INT(space_add_param(s, "X", 1, one, NULL, &err), RT_OK);
  CHECK_INT(space_add_param(s, "X", 1, one, NULL, &err), RT_ERR_INVALID);
  CHECK_CONTAINS(err.text, "twice");
  uint16_t bad[1] = {1};
  CHECK_INT(space_add_config(s, bad, &err), RT_ERR_INVALID);
  uint16_t c0[1] = {0};
  CHECK_INT(space_add_config(s, c0, &err), RT_OK);
  CHECK_INT(space_add_config(s, c0, &err), RT_OK);
  rt_error_clear(&err);
  CHECK_INT(space_finish(s, &err), RT_ERR_INVALID);
  CHECK_CONTAINS(err.text, "repeats");
  space_free(s);
}

TEST_CASE(large_space) {
  size_t nb[16];
  space *s;
  /* a larger space: 40*40*40 product, every third config valid, all round trips */
  s = space_new();
  long long dom[40];
  for (int i = 0; i < 40; i++) dom[i] = i * 3;
  CHECK_INT(space_add_param(s, "P", 40, dom, NULL, NULL), RT_OK);
  CHECK_INT(space_add_param(s, "Q", 40, dom, NULL, NULL), RT_OK);
  CHECK_INT(space_add_param(s, "R", 40, dom, NULL, NULL), RT_OK);
  size_t added = 0;
  for (uint16_t i = 0; i < 40; i++)
    for (uint16_t j = 0; j < 40; j++)
      for (uint16_t k = 0; k < 40; k++)
        if ((i + j + k) % 3 == 0) {
          uint16_t c[3] = {i, j, k};
          space_add_config(s, c, NULL);
          added++;
        }
  CHECK_INT(space_finish(s, NULL), RT_OK);
  CHECK_INT(space_size(s), added);
  int bad_rt = 0;
  for (size_t i = 0; i < space_size(s); i++)
    if (space_index(s, space_config(s, i)) != (long)i) bad_rt++;
  CHECK_INT(bad_rt, 0);
  /* a step in one parameter changes the sum by 1, so no config has a valid neighbour */
  CHECK_INT(space_neighbours(s, 5, nb, 16), 0);
  space_free(s);
  space_free(NULL);
}

TEST_LIST(TEST_ENTRY(small_space), TEST_ENTRY(neighbours_and_single), TEST_ENTRY(parse_errors),
          TEST_ENTRY(build_errors), TEST_ENTRY(param_errors), TEST_ENTRY(large_space),
          TEST_ENTRY(move))
