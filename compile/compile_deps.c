/* compile_deps.c — the cache key of one compile: the files it reads, found the way NVRTC finds
 * them (see compile_key in compile.h). */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "compile/compile.h"
#include "core/fileio.h"
#include "core/sha256.h"

/* Bounds: a header tree this deep or this wide is refused, not followed forever. */
#define DEPS_MAX_DIRS  (2 + COMPILE_MAX_INCLUDES + COMPILE_MAX_EXTRA)
#define DEPS_MAX_FILES 4096
#define DEPS_MAX_DEPTH 64

typedef struct deps_file {
  dev_t dev;
  ino_t ino;
} deps_file;

typedef struct deps_scan {
  sha256_ctx *c;
  const char *dirs[DEPS_MAX_DIRS]; /* NVRTC's -I folders in its order */
  int ndirs;
  int ntoolkit; /* the first ntoolkit of dirs are the toolkit's */
  deps_file seen[DEPS_MAX_FILES];
  int nseen;
  compile_deps_stats *stats;
  rt_error *err;
} deps_scan;

static void deps_hash_str(sha256_ctx *c, const char *s) { sha256_update(c, s, strlen(s) + 1); }

/* The value of option `opt` when it is "-Ivalue" or "--include-path=value" (want = 'I') or
 * "-include=value" / "--pre-include=value" (want = 'p'); NULL otherwise. */
static const char *deps_option(const char *opt, char want) {
  static const char *const inc[] = {"--include-path=", "-I"};
  static const char *const pre[] = {"--pre-include=", "-include="};
  const char *const *list = want == 'I' ? inc : pre;
  for (int i = 0; i < 2; i++)
    if (!strncmp(opt, list[i], strlen(list[i]))) return opt + strlen(list[i]);
  return NULL;
}

/* "DIR/NAME" into buf ("NAME" when dir is ""; NAME itself when it is absolute); 0 when too long. */
static int deps_join(char *buf, size_t size, const char *dir, size_t dlen, const char *name) {
  int n = name[0] == '/' || dlen == 0 ? snprintf(buf, size, "%s", name)
                                      : snprintf(buf, size, "%.*s/%s", (int)dlen, dir, name);
  return n >= 0 && (size_t)n < size;
}

static rt_status deps_text(deps_scan *sc, const char *text, const char *file, int depth);

/* One file NVRTC would open at `path`: a toolkit header is keyed by its path, size and time;
 * another is read (regular files only), its bytes keyed and its own includes followed. */
static rt_status deps_hit(deps_scan *sc, const char *path, const struct stat *st, int toolkit,
                          const char *from, int depth) {
  if (!S_ISREG(st->st_mode))
    return rt_error_set(sc->err, RT_ERR_IO,
                        "header %s (included by %s) is %s, not a regular file: NVRTC would read "
                        "it and never finish; replace it with a file or remove it",
                        path, from, fileio_kind((unsigned)st->st_mode));
  sc->stats->files++;
  if (sc->stats->found) sc->stats->found(sc->stats->ctx, path, toolkit);
  if (toolkit) {
    char facts[96];
    snprintf(facts, sizeof facts, "%lld %lld.%09ld", (long long)st->st_size,
             (long long)st->st_mtim.tv_sec, (long)st->st_mtim.tv_nsec);
    deps_hash_str(sc->c, "toolkit");
    deps_hash_str(sc->c, path);
    deps_hash_str(sc->c, facts);
    return RT_OK;
  }
  char *body = NULL;
  size_t len = 0;
  rt_error rerr = {0};
  if (fileio_read(path, &body, &len, &rerr))
    return rt_error_set(sc->err, RT_ERR_IO, "header included by %s: %s", from, rerr.text);
  unsigned char dg[32];
  sha256(body, len, dg);
  deps_hash_str(sc->c, "file");
  deps_hash_str(sc->c, path);
  sha256_update(sc->c, dg, sizeof dg);
  sc->stats->bytes += (long long)len;
  rt_status s = RT_OK;
  int seen = 0;
  for (int i = 0; i < sc->nseen; i++)
    if (sc->seen[i].dev == st->st_dev && sc->seen[i].ino == st->st_ino) seen = 1;
  if (!seen) {
    if (sc->nseen == DEPS_MAX_FILES)
      s = rt_error_set(sc->err, RT_ERR_INVALID, "more than %d headers under %s", DEPS_MAX_FILES,
                       from);
    else {
      sc->seen[sc->nseen++] = (deps_file){st->st_dev, st->st_ino};
      s = deps_text(sc, body, path, depth + 1);
    }
  }
  free(body);
  return s;
}

/* One #include of `name` in `file` (quoted: its folder first, then the -I folders; angled: the
 * -I folders): every place tried is keyed, the misses too, up to the first file found. */
static rt_status deps_include(deps_scan *sc, const char *name, int quoted, const char *file,
                              int depth) {
  sc->stats->includes++;
  deps_hash_str(sc->c, quoted ? "include \"\"" : "include <>");
  deps_hash_str(sc->c, name);
  const char *slash = strrchr(file, '/');
  int first = quoted ? -1 : 0;
  if (name[0] == '/') first = sc->ndirs - 1; /* an absolute name is tried once, as it is */
  for (int i = first; i < sc->ndirs; i++) {
    char path[4096];
    int ok = i < 0 ? deps_join(path, sizeof path, file, slash ? (size_t)(slash - file) : 0, name)
                   : deps_join(path, sizeof path, sc->dirs[i], strlen(sc->dirs[i]), name);
    if (!ok) return rt_error_set(sc->err, RT_ERR_INVALID, "include path too long in %s", file);
    struct stat st;
    if (stat(path, &st) != 0) {
      if (errno != ENOENT && errno != ENOTDIR)
        return rt_error_set(sc->err, RT_ERR_IO, "header %s (included by %s): %s", path, file,
                            strerror(errno));
      sc->stats->misses++;
      deps_hash_str(sc->c, "miss");
      deps_hash_str(sc->c, path);
      continue;
    }
    return deps_hit(sc, path, &st, i >= 0 && i < sc->ntoolkit, file, depth);
  }
  deps_hash_str(sc->c, "not found");
  return RT_OK;
}

/* The header named at q (before end) in quotes or <>, looked up as NVRTC would; a name that is
 * not written out (a macro) is refused: the key must know every file the compile may read. */
static rt_status deps_named(deps_scan *sc, const char *q, const char *p, const char *end,
                            const char *what, const char *file, int depth) {
  while (q < end && (*q == ' ' || *q == '\t')) q++;
  char close = q < end && *q == '"' ? '"' : q < end && *q == '<' ? '>' : 0;
  const char *stop = close ? memchr(q + 1, close, (size_t)(end - q - 1)) : NULL;
  if (!stop || stop == q + 1 || (size_t)(stop - q) > 1024)
    return rt_error_set(sc->err, RT_ERR_UNSUPPORTED,
                        "%s: %s whose file is not written in quotes or <> (\"%.*s\"): rooftune "
                        "keys a compile by the files it reads, so it must see the name; write "
                        "the header's name",
                        file, what, (int)(end - p > 120 ? 120 : end - p), p);
  char name[1025];
  memcpy(name, q + 1, (size_t)(stop - q - 1));
  name[stop - q - 1] = 0;
  return deps_include(sc, name, close == '"', file, depth);
}

/* Every #include line of text (all branches: a conditional include is keyed either way), and
 * every __has_include in a directive (a header that appears changes what it says). */
static rt_status deps_text(deps_scan *sc, const char *text, const char *file, int depth) {
  if (depth > DEPS_MAX_DEPTH)
    return rt_error_set(sc->err, RT_ERR_INVALID, "headers nested more than %d deep at %s",
                        DEPS_MAX_DEPTH, file);
  rt_status s = RT_OK;
  for (const char *p = text; !s && *p;) {
    const char *end = strchr(p, '\n');
    if (!end) end = p + strlen(p);
    const char *q = p;
    while (q < end && (*q == ' ' || *q == '\t')) q++;
    if (q < end && *q == '#') {
      q++;
      while (q < end && (*q == ' ' || *q == '\t')) q++;
      size_t kw = (size_t)(end - q) >= 12 && !strncmp(q, "include_next", 12) ? 12
                  : (size_t)(end - q) >= 7 && !strncmp(q, "include", 7)      ? 7
                                                                             : 0;
      if (kw && (q + kw == end || q[kw] == ' ' || q[kw] == '\t' || q[kw] == '"' || q[kw] == '<'))
        s = deps_named(sc, q + kw, p, end, "an #include", file, depth);
      for (const char *h = q;
           !s && !kw && (h = memmem(h, (size_t)(end - h), "__has_include", 13));) {
        h += 13;
        if ((size_t)(end - h) >= 5 && !strncmp(h, "_next", 5)) h += 5;
        while (h < end && (*h == ' ' || *h == '\t')) h++;
        if (h < end && *h == '(') s = deps_named(sc, h + 1, p, end, "a __has_include", file, depth);
      }
    }
    p = *end ? end + 1 : end;
  }
  return s;
}

rt_status compile_key(const unsigned char options_digest[32], const compile_options *opt,
                      const char *name, const char *source, unsigned char key[32],
                      compile_deps_stats *stats, rt_error *err) {
  compile_deps_stats none = {0};
  deps_scan *sc = calloc(1, sizeof *sc);
  if (!sc) return rt_error_set(err, RT_ERR_NOMEM, "out of memory");
  sha256_ctx c;
  sha256_init(&c);
  sc->c = &c;
  sc->err = err;
  sc->stats = stats ? stats : &none;
  sc->stats->includes = sc->stats->misses = sc->stats->files = 0;
  sc->stats->bytes = 0;
  /* NVRTC's folders in the order compile_build_options passes them */
  const char *cuda = compile_cuda_include_dir();
  char cccl[1100];
  snprintf(cccl, sizeof cccl, "%s/cccl", cuda);
  struct stat st;
  sc->dirs[sc->ndirs++] = cuda;
  if (stat(cccl, &st) == 0 && S_ISDIR(st.st_mode)) sc->dirs[sc->ndirs++] = cccl;
  sc->ntoolkit = sc->ndirs;
  for (int i = 0; i < opt->include_count && i < COMPILE_MAX_INCLUDES; i++)
    sc->dirs[sc->ndirs++] = opt->include_dirs[i];
  for (int i = 0; i < opt->extra_count && i < COMPILE_MAX_EXTRA; i++) {
    const char *d = deps_option(opt->extra[i], 'I');
    if (d && *d) sc->dirs[sc->ndirs++] = d;
  }
  sha256_update(&c, options_digest, 32);
  const char *file = name && *name ? name : "kernel.cu";
  deps_hash_str(&c, file); /* its folder is where quoted includes start; __FILE__ */
  deps_hash_str(&c, source);
  rt_status s = RT_OK;
  for (int i = 0; !s && i < opt->extra_count && i < COMPILE_MAX_EXTRA; i++) {
    const char *pre = deps_option(opt->extra[i], 'p');
    if (pre && *pre) s = deps_include(sc, pre, 1, file, 0);
  }
  if (!s) s = deps_text(sc, source, file, 0);
  sha256_final(&c, key);
  free(sc);
  if (s) memset(key, 0, 32);
  return s;
}
