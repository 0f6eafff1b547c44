/* fileio.c — whole-file reads, and writes that never replace what they must not (see fileio.h). */
#include "core/fileio.h"

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

const char *fileio_kind(unsigned mode) {
  mode_t m = (mode_t)mode;
  if (S_ISDIR(m)) return "a folder";
  if (S_ISFIFO(m)) return "a FIFO";
  if (S_ISCHR(m)) return "a character device";
  if (S_ISBLK(m)) return "a block device";
  if (S_ISSOCK(m)) return "a socket";
  return "not a regular file";
}

static rt_status io_fail(rt_error *err, const char *path, const char *fmt, const char *what) {
  rt_error_locate(err, path, NULL, 0, 0);
  return rt_error_set(err, RT_ERR_IO, fmt, what);
}

/* ---- reading ---- */

/* "it is a FIFO, not a regular file", for what PATH's stat (following links) says is not one. */
static rt_status not_regular(rt_error *err, const char *path, unsigned mode) {
  return io_fail(err, path,
                 "cannot read it: it is %s, not a regular file (give the path of a file)",
                 fileio_kind(mode));
}

rt_status fileio_check_source(const char *path, rt_error *err) {
  struct stat sb;
  if (stat(path, &sb) != 0) return io_fail(err, path, "cannot open the file: %s", strerror(errno));
  return S_ISREG(sb.st_mode) ? RT_OK : not_regular(err, path, sb.st_mode);
}

rt_status fileio_open_read(const char *path, size_t max, int *out, rt_error *err) {
  *out = -1;
  /* refused by name before it is opened: opening a device may do something, a FIFO blocks */
  rt_status rc = fileio_check_source(path, err);
  if (rc) return rc;
  /* O_NONBLOCK: a FIFO put there since returns at once, and fstat then refuses it */
  int fd = open(path, O_RDONLY | O_NONBLOCK | O_CLOEXEC | O_NOCTTY);
  if (fd < 0) return io_fail(err, path, "cannot read the file: %s", strerror(errno));
  struct stat sb;
  if (fstat(fd, &sb) != 0) {
    int e = errno;
    close(fd);
    return io_fail(err, path, "cannot read the file: %s", strerror(e));
  }
  if (!S_ISREG(sb.st_mode)) {
    close(fd);
    return not_regular(err, path, sb.st_mode);
  }
  if (max && (unsigned long long)sb.st_size > max) {
    close(fd);
    rt_error_locate(err, path, NULL, 0, 0);
    return rt_error_set(err, RT_ERR_IO, "the file is larger than %zu bytes (%lld)", max,
                        (long long)sb.st_size);
  }
  fcntl(fd, F_SETFL, fcntl(fd, F_GETFL) & ~O_NONBLOCK);
  *out = fd;
  return RT_OK;
}

rt_status fileio_read_max(const char *path, size_t max, char **out, size_t *len, rt_error *err) {
  *out = NULL;
  if (len) *len = 0;
  int fd;
  rt_status rc = fileio_open_read(path, max, &fd, err);
  if (rc) return rc;
  FILE *f = fdopen(fd, "rb");
  if (!f) {
    int e = errno;
    close(fd);
    return io_fail(err, path, "cannot read the file: %s", strerror(e));
  }
  size_t cap = 1 << 16, n = 0, got;
  char *buf = malloc(cap + 1);
  while (buf && (got = fread(buf + n, 1, cap - n, f)) > 0) {
    n += got;
    if (max && n > max) break; /* it grew while being read */
    if (n == cap) {
      char *grown = realloc(buf, cap * 2 + 1);
      if (!grown) {
        free(buf);
        buf = NULL;
        break;
      }
      buf = grown;
      cap *= 2;
    }
  }
  int failed = ferror(f);
  fclose(f);
  if (!buf) {
    rt_error_locate(err, path, NULL, 0, 0);
    return rt_error_set(err, RT_ERR_NOMEM, "out of memory reading the file");
  }
  if (failed || (max && n > max)) {
    free(buf);
    rt_error_locate(err, path, NULL, 0, 0);
    return failed ? rt_error_set(err, RT_ERR_IO, "read error")
                  : rt_error_set(err, RT_ERR_IO, "the file is larger than %zu bytes", max);
  }
  buf[n] = '\0';
  *out = buf;
  if (len) *len = n;
  return RT_OK;
}

rt_status fileio_read(const char *path, char **out, size_t *len, rt_error *err) {
  return fileio_read_max(path, 0, out, len, err);
}

/* ---- writing ---- */

static int copy_path(char *dst, size_t size, const char *src) {
  size_t n = strlen(src);
  if (n >= size) return -1;
  memcpy(dst, src, n + 1);
  return 0;
}

/* The folder part of PATH ("." when none), for messages. */
static void folder_of(const char *path, char *buf, size_t size) {
  const char *slash = strrchr(path, '/');
  if (!slash)
    snprintf(buf, size, ".");
  else if (slash == path)
    snprintf(buf, size, "/");
  else
    snprintf(buf, size, "%.*s", (int)(slash - path), path);
}

/* "it is a folder; give the path of a file", for what cannot be written. */
static rt_status unwritable(rt_error *err, const char *path, unsigned mode) {
  rt_error_locate(err, path, NULL, 0, 0);
  return rt_error_set(err, RT_ERR_IO,
                      "cannot write it: it is %s; give the path of a file (or a character device "
                      "or FIFO, written in place)",
                      fileio_kind(mode));
}

/* Our stdout or stderr when it writes to the file A describes, else -1: an output that is where
 * our stdout goes is written through stdout's own descriptor, so the shell's `>>` (O_APPEND) and
 * what was printed before are respected. */
static int same_as_std(const struct stat *a) {
  struct stat b;
  for (int std = STDOUT_FILENO; std <= STDERR_FILENO; std++)
    if (fstat(std, &b) == 0 && a->st_dev == b.st_dev && a->st_ino == b.st_ino &&
        (a->st_mode & S_IFMT) == (b.st_mode & S_IFMT))
      return std;
  return -1;
}

/* o->f on a copy of our stdout or stderr (std), after what was printed there. */
static rt_status open_std(fileio_out *o, int std, rt_error *err) {
  int fd = fcntl(std, F_DUPFD_CLOEXEC, 0);
  if (fd < 0 || !(o->f = fdopen(fd, "w"))) {
    int e = errno;
    if (fd >= 0) close(fd);
    return io_fail(err, o->path, "cannot write it: %s", strerror(e));
  }
  fflush(std == STDOUT_FILENO ? stdout : stderr);
  o->in_place = 1;
  return RT_OK;
}

/* A symbolic link, a device or a FIFO: opened by the kernel (which follows the link with
 * fs.protected_symlinks and the permissions applying) and written through that descriptor. */
static rt_status open_in_place(fileio_out *o, const char *path, int is_link, rt_error *err) {
  int fd = open(path, O_WRONLY | O_NONBLOCK | O_CLOEXEC | O_NOCTTY | (is_link ? O_CREAT : 0), 0666);
  if (fd < 0) {
    int e = errno;
    struct stat sb;
    int known = stat(path, &sb) == 0, std = known && e == ENXIO ? same_as_std(&sb) : -1;
    if (std >= 0) return open_std(o, std, err); /* /dev/stdout on a socket cannot be opened */
    rt_error_locate(err, path, NULL, 0, 0);
    if (e == ENXIO && known && S_ISFIFO(sb.st_mode))
      return rt_error_set(err, RT_ERR_IO, "cannot write it: it is a FIFO and nothing reads it");
    if ((e == EISDIR || e == ENXIO || e == EOPNOTSUPP) && known)
      return unwritable(err, path, sb.st_mode);
    if (e == EACCES && is_link)
      return rt_error_set(err, RT_ERR_IO,
                          "cannot write through the symbolic link: %s (the kernel does not follow "
                          "it for us: fs.protected_symlinks, or its target is not ours to write)",
                          strerror(e));
    return rt_error_set(err, RT_ERR_IO, "cannot write it: %s", strerror(e));
  }
  struct stat sb;
  if (fstat(fd, &sb) != 0) {
    int e = errno;
    close(fd);
    return io_fail(err, path, "cannot write it: %s", strerror(e));
  }
  if (!S_ISREG(sb.st_mode) && !S_ISCHR(sb.st_mode) && !S_ISFIFO(sb.st_mode)) {
    close(fd); /* a block device behind a link: nothing written */
    return unwritable(err, path, sb.st_mode);
  }
  int std = same_as_std(&sb);
  if (std >= 0) { /* where stdout goes: through stdout's descriptor, its offset and O_APPEND */
    close(fd);
    return open_std(o, std, err);
  }
  fcntl(fd, F_SETFL, fcntl(fd, F_GETFL) & ~O_NONBLOCK);
  if (S_ISREG(sb.st_mode) && ftruncate(fd, 0) != 0) { /* a link's file: written whole */
    int e = errno;
    close(fd);
    return io_fail(err, path, "cannot write it: %s", strerror(e));
  }
  if (!(o->f = fdopen(fd, "w"))) {
    int e = errno;
    close(fd);
    return io_fail(err, path, "cannot write it: %s", strerror(e));
  }
  o->in_place = 1;
  return RT_OK;
}

rt_status fileio_out_open(fileio_out *o, const char *path, rt_error *err) {
  memset(o, 0, sizeof *o);
  if (!path || !*path) return rt_error_set(err, RT_ERR_USAGE, "no output path given");
  if (copy_path(o->path, sizeof o->path, path))
    return io_fail(err, path, "%s", "the path is too long");
  struct stat sb;
  int exists = lstat(path, &sb) == 0;
  if (exists && !S_ISREG(sb.st_mode)) {
    if (S_ISDIR(sb.st_mode) || S_ISSOCK(sb.st_mode) || S_ISBLK(sb.st_mode))
      return unwritable(err, path, sb.st_mode);
    return open_in_place(o, path, S_ISLNK(sb.st_mode), err);
  }
  /* a regular file (not a link) or nothing yet: a temporary beside it, created exclusively */
  int fd = -1;
  for (int k = 0; k < 100 && fd < 0; k++) {
    int w = k ? snprintf(o->tmp, sizeof o->tmp, "%s.%ld-%d.tmp", path, (long)getpid(), k)
              : snprintf(o->tmp, sizeof o->tmp, "%s.%ld.tmp", path, (long)getpid());
    if (w < 0 || (size_t)w >= sizeof o->tmp)
      return io_fail(err, path, "%s", "the path is too long");
    fd = open(o->tmp, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC | O_NOFOLLOW, 0666);
    if (fd < 0 && errno != EEXIST) break;
  }
  if (fd < 0) {
    int e = errno;
    char dir[4096];
    folder_of(path, dir, sizeof dir);
    o->tmp[0] = '\0';
    struct stat ds;
    rt_error_locate(err, path, NULL, 0, 0);
    if (e == ENOENT || (e == ENOTDIR && stat(dir, &ds) != 0))
      return rt_error_set(err, RT_ERR_IO, "cannot write it: the folder %s does not exist", dir);
    if (e == ENOTDIR)
      return rt_error_set(err, RT_ERR_IO, "cannot write it: %s is not a folder", dir);
    return rt_error_set(err, RT_ERR_IO, "cannot write it (a new file in %s): %s", dir, strerror(e));
  }
  if (exists) fchmod(fd, sb.st_mode & 07777); /* the file keeps its permissions */
  if (!(o->f = fdopen(fd, "w"))) {
    int e = errno;
    close(fd);
    unlink(o->tmp);
    o->tmp[0] = '\0';
    return io_fail(err, path, "cannot write it: %s", strerror(e));
  }
  return RT_OK;
}

rt_status fileio_out_commit(fileio_out *o, rt_error *err) {
  if (!o->f) return io_fail(err, o->path, "%s", "cannot write it: the file is not open");
  errno = 0;
  int bad = fflush(o->f) != 0 || ferror(o->f);
  int e = errno;
  if (!bad && !o->in_place && fsync(fileno(o->f)) != 0 && errno != EINVAL && errno != EROFS)
    bad = 1, e = errno;
  if (fclose(o->f) != 0 && !bad) bad = 1, e = errno;
  o->f = NULL;
  if (bad) {
    if (o->tmp[0]) unlink(o->tmp);
    o->tmp[0] = '\0';
    rt_error_locate(err, o->path, NULL, 0, 0);
    return rt_error_set(err, RT_ERR_IO, "cannot write it completely: %s",
                        e ? strerror(e) : "a write failed");
  }
  if (o->tmp[0] && rename(o->tmp, o->path) != 0) {
    e = errno;
    unlink(o->tmp);
    o->tmp[0] = '\0';
    rt_error_locate(err, o->path, NULL, 0, 0);
    return rt_error_set(err, RT_ERR_IO, "cannot put it in place: %s", strerror(e));
  }
  o->tmp[0] = '\0';
  return RT_OK;
}

void fileio_out_abort(fileio_out *o) {
  if (o->f) fclose(o->f);
  o->f = NULL;
  if (o->tmp[0]) unlink(o->tmp);
  o->tmp[0] = '\0';
}

rt_status fileio_check_target(const char *path, rt_error *err) {
  struct stat sb;
  if (stat(path, &sb) != 0 || S_ISREG(sb.st_mode)) return RT_OK;
  rt_error_locate(err, path, NULL, 0, 0);
  return rt_error_set(err, RT_ERR_IO, "it is %s, not a regular file; give the path of a file",
                      fileio_kind(sb.st_mode));
}
