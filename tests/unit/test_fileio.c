/* test_fileio.c — whole-file reads: contents and length, files past the first buffer, and an
 * error that names the missing file; a FIFO, a link to one and a link to /dev/zero refused by
 * name without blocking; writes in place through a link (its file written whole, the link kept)
 * and to a FIFO nobody reads (refused at once). */
/* stages: core */
#include <stdio.h>
#include <sys/stat.h>
#include <unistd.h>

#include "test.h"
#include "core/fileio.h"

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

TEST_CASE(not_files) {
  char dir[] = "/tmp/rooftune-fileio-XXXXXX";
  CHECK(mkdtemp(dir) != NULL);
  char fifo[64], to_fifo[64], to_zero[64], file[64], link[64];
  snprintf(fifo, sizeof fifo, "%s/fifo", dir);
  snprintf(to_fifo, sizeof to_fifo, "%s/to-fifo", dir);
  snprintf(to_zero, sizeof to_zero, "%s/to-zero", dir);
  snprintf(file, sizeof file, "%s/file", dir);
  snprintf(link, sizeof link, "%s/link", dir);
  CHECK(mkfifo(fifo, 0600) == 0);
  CHECK(symlink("fifo", to_fifo) == 0);
  CHECK(symlink("/dev/zero", to_zero) == 0);
  const char *bad[] = {fifo, to_fifo, to_zero, dir};
  const char *kind[] = {"a FIFO", "a FIFO", "a character device", "a folder"};
  for (int i = 0; i < 4; i++) {
    rt_error err = {0};
    char *text = NULL;
    int fd = 7;
    CHECK_INT(fileio_read(bad[i], &text, NULL, &err), RT_ERR_IO);
    CHECK_STR(err.source, bad[i]);
    CHECK_CONTAINS(err.text, kind[i]);
    CHECK_INT(fileio_open_read(bad[i], 0, &fd, NULL), RT_ERR_IO);
    CHECK_INT(fd, -1);
    CHECK_INT(fileio_check_source(bad[i], NULL), RT_ERR_IO);
  }
  /* a FIFO nobody reads: refused at once, not blocked on */
  fileio_out o;
  rt_error err = {0};
  CHECK_INT(fileio_out_open(&o, to_fifo, &err), RT_ERR_IO);
  CHECK_CONTAINS(err.text, "nothing reads it");
  /* through a link: its file is written whole, in place; the link stays a link */
  FILE *f = fopen(file, "w");
  CHECK(f && fputs("a longer old content\n", f) >= 0 && fclose(f) == 0);
  CHECK(symlink("file", link) == 0);
  CHECK_INT(fileio_out_open(&o, link, &err), RT_OK);
  CHECK_INT(o.in_place, 1);
  fputs("new\n", o.f);
  CHECK_INT(fileio_out_commit(&o, &err), RT_OK);
  char *text = NULL;
  CHECK_INT(fileio_read(file, &text, NULL, &err), RT_OK);
  CHECK_STR(text, "new\n");
  free(text);
  struct stat sb;
  CHECK(lstat(link, &sb) == 0 && S_ISLNK(sb.st_mode));
  /* a plain file: a temporary renamed over it */
  CHECK_INT(fileio_out_open(&o, file, &err), RT_OK);
  CHECK_INT(o.in_place, 0);
  CHECK(o.tmp[0] != '\0');
  fileio_out_abort(&o);
  const char *all[] = {fifo, to_fifo, to_zero, file, link};
  for (int i = 0; i < 5; i++) unlink(all[i]);
  rmdir(dir);
}

TEST_LIST(TEST_ENTRY(read_write), TEST_ENTRY(not_files))
