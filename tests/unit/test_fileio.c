/* test_fileio.c — whole-file reads: contents and length, files past the first buffer, and an
 * error that names the missing file. */
/* stages: core */
#include <unistd.h>

#include "test.h"
#include "tuner/core/fileio.h"

TEST_CASE(read_write) {
  char path[] = "/tmp/rooftune-fileio-XXXXXX";
  int fd = mkstemp(path);
  CHECK(fd >= 0);
  size_t big = 200000; /* more than the first 64 KiB buffer */
  char *data = malloc(big);
  for (size_t i = 0; i < big; i++) data[i] = (char)('a' + i % 26);
  CHECK(write(fd, data, big) == (ssize_t)big);
  close(fd);

  char *text = NULL;
  size_t len = 0;
  rt_error err = {0};
  CHECK_INT(fileio_read(path, &text, &len, &err), RT_OK);
  CHECK_INT(len, big);
  CHECK(text && memcmp(text, data, big) == 0 && text[big] == '\0');
  free(text);
  unlink(path);

  CHECK_INT(fileio_read(path, &text, NULL, &err), RT_ERR_IO);
  CHECK(text == NULL);
  CHECK_STR(err.source, path);
  CHECK_CONTAINS(err.text, "No such file");
  free(data);
}

TEST_LIST(TEST_ENTRY(read_write))
