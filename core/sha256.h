/* sha256.h — SHA-256 (FIPS 180-4) for content addressing: the cubin cache keys compiled code
 * by the hash of everything that decides it (source text, options, NVRTC version, target), and
 * the database can name a template source by its hash.  Incremental: init, update any number of
 * times, final.  No allocation; a context lives on the stack. */
#ifndef ROOFTUNE_SHA256_H
#define ROOFTUNE_SHA256_H

#include <stddef.h>
#include <stdint.h>

typedef struct sha256_ctx {
  uint32_t state[8];     /* the running hash */
  uint64_t bytes;        /* message length so far */
  unsigned char buf[64]; /* the partial block */
  size_t used;           /* bytes in buf */
} sha256_ctx;

void sha256_init(sha256_ctx *c);
void sha256_update(sha256_ctx *c, const void *data, size_t n);
void sha256_final(sha256_ctx *c, unsigned char out[32]);
/* The digest of one buffer. */
void sha256(const void *data, size_t n, unsigned char out[32]);
/* 64 lowercase hex digits and a NUL into hex. */
void sha256_hex(const unsigned char digest[32], char hex[65]);
/* The hex digest of a whole file's bytes; 0 on success, -1 when it cannot be read or is not a
 * regular file (a FIFO or a device is never opened for reading, so this never blocks). */
int sha256_file(const char *path, char hex[65]);

#endif
