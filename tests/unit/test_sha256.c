/* test_sha256.c — FIPS 180-4 / NIST example vectors, incremental updates equal one call, and a
 * file's digest reads only a regular file (a FIFO or /dev/zero is refused at once, not read). */
/* stages: core */
#include <stdio.h>
#include <sys/stat.h>
#include <unistd.h>

#include "test.h"
#include "core/sha256.h"

static const char *hex_of(const char *msg, size_t n) {
  static char hex[65];
  unsigned char d[32];
  sha256(msg, n, d);
  sha256_hex(d, hex);
  return hex;
}

TEST_CASE(digests) {
  CHECK_STR(hex_of("", 0), "e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855");
  CHECK_STR(hex_of("abc", 3), "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad");
  const char *two = "abcdbcdecdefdefgefghfghighijhijkijkljklmklmnlmnomnopnopq";
  CHECK_STR(hex_of(two, strlen(two)),
            "248d6a61d20638b8e5c026930c3e6039a33ce45964ff2167f6ecedd419db06c1");
  /* one million 'a', fed in uneven pieces */
  sha256_ctx c;
  sha256_init(&c);
  char chunk[997];
  memset(chunk, 'a', sizeof chunk);
  size_t left = 1000000;
  while (left) {
    size_t n = left < sizeof chunk ? left : sizeof chunk;
    sha256_update(&c, chunk, n);
    left -= n;
  }
  unsigned char d[32];
  char hex[65];
  sha256_final(&c, d);
  sha256_hex(d, hex);
  CHECK_STR(hex, "cdc76e5c9914fb9281a1c7e284d73e67f1809a48a497200e046d39ccc7112cd0");
}

TEST_CASE(files) {
  char dir[] = "/tmp/rooftune-sha-XXXXXX", path[64], fifo[64], hex[65];
  if (!mkdtemp(dir)) test_skip("no temporary folder");
  snprintf(path, sizeof path, "%s/f", dir);
  snprintf(fifo, sizeof fifo, "%s/p", dir);
  FILE *f = fopen(path, "wb");
  if (f) {
    fputs("abc", f);
    fclose(f);
  }
  CHECK_INT(sha256_file(path, hex), 0);
  CHECK_STR(hex, "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad");
  CHECK_INT(mkfifo(fifo, 0600), 0);
  CHECK_INT(sha256_file(fifo, hex), -1);        /* no writer: it would block forever */
  CHECK_INT(sha256_file("/dev/zero", hex), -1); /* it would never end */
  CHECK_INT(sha256_file(dir, hex), -1);
  unlink(fifo);
  unlink(path);
  rmdir(dir);
}

TEST_LIST(TEST_ENTRY(digests), TEST_ENTRY(files))
