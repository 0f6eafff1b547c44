/* catalog.c — the template search path and what is in it (see catalog.h). */
#include "template/catalog.h"

#include <dirent.h>
#include <errno.h>
#include <jansson.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "core/fileio.h"

#ifndef ROOFTUNE_BUILD_DIR
#define ROOFTUNE_BUILD_DIR ""
#endif
#ifndef ROOFTUNE_BIN_TO_DATADIR
#define ROOFTUNE_BIN_TO_DATADIR "../share"
#endif

static int is_dir(const char *p) {
  struct stat st;
  return stat(p, &st) == 0 && S_ISDIR(st.st_mode);
}

/* 1 when this program's executable lives under the build folder it was built in. */
static int running_from_build(void) {
  char exe[PATH_MAX], build[PATH_MAX];
  ssize_t n = readlink("/proc/self/exe", exe, sizeof exe - 1);
  if (n <= 0 || !ROOFTUNE_BUILD_DIR[0] || !realpath(ROOFTUNE_BUILD_DIR, build)) return 0;
  exe[n] = '\0';
  size_t bl = strlen(build);
  return strncmp(exe, build, bl) == 0 && exe[bl] == '/';
}

/* The installed templates next to this program: <bindir>/<bindir-to-datadir>/rooftune/templates,
 * so an installation moved with `cmake --install --prefix` (or copied) finds its own. */
static int installed_dir(char *buf, size_t size) {
  char exe[PATH_MAX];
  ssize_t n = readlink("/proc/self/exe", exe, sizeof exe - 1);
  if (n <= 0) return 0;
  exe[n] = '\0';
  char *slash = strrchr(exe, '/');
  if (!slash) return 0;
  *slash = '\0';
  if ((size_t)snprintf(buf, size, "%s/%s/rooftune/templates", exe, ROOFTUNE_BIN_TO_DATADIR) >= size)
    return 0;
  return is_dir(buf);
}

const char *catalog_shipped_dir(char *buf, size_t size) {
  const char *env = getenv("ROOFTUNE_TEMPLATE_DIR");
  if (env && *env)
    snprintf(buf, size, "%s", env);
  else if (running_from_build() && is_dir(ROOFTUNE_SOURCE_DIR "/templates"))
    snprintf(buf, size, "%s", ROOFTUNE_SOURCE_DIR "/templates");
  else if (!installed_dir(buf, size))
    snprintf(buf, size, "%s", ROOFTUNE_INSTALL_DATADIR "/templates");
  return buf;
}

const char *catalog_path(char *buf, size_t size) {
  const char *user = getenv("ROOFTUNE_TEMPLATE_PATH");
  char shipped[1024];
  catalog_shipped_dir(shipped, sizeof shipped);
  if (user && *user)
    snprintf(buf, size, "%s:%s", user, shipped);
  else
    snprintf(buf, size, "%s", shipped);
  return buf;
}

rt_status catalog_add_dir(const char *dir, rt_error *err) {
  if (!dir || !*dir || !is_dir(dir)) {
    rt_error_locate(err, "--templates", NULL, 0, 0);
    return rt_error_set(err, RT_ERR_INVALID, "%s is not a folder of templates", dir ? dir : "");
  }
  if (strchr(dir, ':')) {
    rt_error_locate(err, "--templates", NULL, 0, 0);
    return rt_error_set(err, RT_ERR_INVALID, "a template folder's name cannot contain ':' (%s)",
                        dir);
  }
  const char *old = getenv("ROOFTUNE_TEMPLATE_PATH");
  size_t n = strlen(dir) + (old ? strlen(old) : 0) + 2;
  char *v = malloc(n);
  if (!v) return rt_error_set(err, RT_ERR_NOMEM, "out of memory");
  if (old && *old)
    snprintf(v, n, "%s:%s", dir, old);
  else
    snprintf(v, n, "%s", dir);
  int rc = setenv("ROOFTUNE_TEMPLATE_PATH", v, 1);
  free(v);
  return rc ? rt_error_set(err, RT_ERR_NOMEM, "cannot set ROOFTUNE_TEMPLATE_PATH") : RT_OK;
}

/* ---- listing ---- */

typedef struct strv {
  char **v;
  int n, cap;
  int oom;
  char bad[8192 + 260]; /* the first .json in the path that is not a file, or "" */
  char bad_why[96];     /* what it is: "it is a FIFO", "No such file or directory" */
} strv;

/* Notes DIR/NAME, a .json that is not a regular file (stat's st_mode, or errno when 0), as the
 * listing's error: a manifest that cannot be read is never skipped without a word. */
static void strv_bad(strv *s, const char *path, unsigned mode, int e) {
  if (s->bad[0]) return;
  snprintf(s->bad, sizeof s->bad, "%s", path);
  if (e)
    snprintf(s->bad_why, sizeof s->bad_why, "cannot read it: %s", strerror(e));
  else
    snprintf(s->bad_why, sizeof s->bad_why, "it is %s, not a regular file", fileio_kind(mode));
}

static void strv_push(strv *s, const char *dir, const char *name) {
  if (s->oom) return;
  if (s->n == s->cap) {
    int nc = s->cap ? 2 * s->cap : 16;
    char **nv = realloc(s->v, (size_t)nc * sizeof *nv);
    if (!nv) {
      s->oom = 1;
      return;
    }
    s->v = nv;
    s->cap = nc;
  }
  size_t len = strlen(dir) + strlen(name) + 2;
  char *p = malloc(len);
  if (!p) {
    s->oom = 1;
    return;
  }
  snprintf(p, len, "%s/%s", dir, name);
  s->v[s->n++] = p;
}

static int cmp_str(const void *a, const void *b) {
  return strcmp(*(char *const *)a, *(char *const *)b);
}

static int ends_json(const char *name) {
  size_t n = strlen(name);
  return n > 5 && strcmp(name + n - 5, ".json") == 0 && name[0] != '.';
}

/* Pushes DIR/NAME when it is of kind (for CATALOG_OTHER as "DIR/NAME: why"). */
static void push_kind(strv *out, const char *dir, const char *name, catalog_kind kind) {
  char path[8192 + 260], why[400];
  snprintf(path, sizeof path, "%s/%s", dir, name);
  catalog_kind k = strcmp(name, "family.json") == 0 ? CATALOG_FAMILY
                   : kind == CATALOG_FAMILY
                       ? CATALOG_MANIFEST /* not a family: no need to read it */
                       : catalog_classify(path, why, sizeof why);
  if (k != kind) return;
  if (kind != CATALOG_OTHER) {
    strv_push(out, dir, name);
    return;
  }
  char note[600];
  snprintf(note, sizeof note, "%s: %s", name, why);
  strv_push(out, dir, note);
}

/* ---- what a .json file is ---- */

/* 1 when TEXT has "KEY" followed by a colon: a field of that name, for text that is not JSON. */
static int mentions_field(const char *text, const char *key) {
  size_t k = strlen(key);
  for (const char *s = strchr(text, '"'); s; s = strchr(s + 1, '"')) {
    if (strncmp(s + 1, key, k) || s[k + 1] != '"') continue;
    const char *c = s + k + 2;
    while (*c == ' ' || *c == '\t' || *c == '\n' || *c == '\r') c++;
    if (*c == ':') return 1;
  }
  return 0;
}

/* 1 when DIR/BASE (BASE = NAME.json) has NAME.cu or NAME.cuh beside it. */
static int has_source_beside(const char *path) {
  char src[PATH_MAX + 8];
  size_t n = strlen(path);
  if (n < 5 || n >= sizeof src - 4) return 0;
  struct stat st;
  static const char *const exts[] = {".cu", ".cuh"};
  for (int i = 0; i < 2; i++) {
    snprintf(src, sizeof src, "%.*s%s", (int)(n - 5), path, exts[i]);
    if (stat(src, &st) == 0 && S_ISREG(st.st_mode)) return 1;
  }
  return 0;
}

catalog_kind catalog_classify(const char *path, char *why, size_t size) {
  char scratch[8];
  if (!why || !size) why = scratch, size = sizeof scratch;
  why[0] = '\0';
  const char *base = strrchr(path, '/');
  base = base ? base + 1 : path;
  if (strcmp(base, "family.json") == 0) return CATALOG_FAMILY;
  if (has_source_beside(path)) return CATALOG_MANIFEST; /* NAME.json beside NAME.cu */
  struct stat st;
  if (stat(path, &st) != 0 || !S_ISREG(st.st_mode)) return CATALOG_MANIFEST; /* its load says why */
  if (st.st_size > MANIFEST_FILE_MAX) {
    snprintf(why, size, "%lld bytes, more than a manifest may have, and no .cu beside it",
             (long long)st.st_size);
    return CATALOG_OTHER;
  }
  char *text = NULL;
  size_t len = 0;
  if (fileio_read_max(path, MANIFEST_FILE_MAX, &text, &len, NULL) != RT_OK)
    return CATALOG_MANIFEST; /* its load says why */
  json_error_t jerr;
  json_t *root = json_loadb(text, len, 0, &jerr);
  if (root) {
    free(text);
    int is_manifest = json_is_object(root) &&
                      (json_object_get(root, "family") || json_object_get(root, "source"));
    if (!is_manifest)
      snprintf(why, size, "%s without the \"family\" and \"source\" fields a manifest has",
               json_is_object(root) ? "a JSON object" : "JSON but not an object");
    json_decref(root);
    return is_manifest ? CATALOG_MANIFEST : CATALOG_OTHER;
  }
  /* not JSON: a manifest with a syntax error still names its fields */
  int is_manifest = text && (mentions_field(text, "family") || mentions_field(text, "source"));
  free(text);
  if (!is_manifest)
    snprintf(why, size, "not valid JSON (line %d: %s) and no .cu beside it", jerr.line, jerr.text);
  return is_manifest ? CATALOG_MANIFEST : CATALOG_OTHER;
}

/* The .json files of one folder and its subfolders of one kind (catalog_classify), sorted;
 * for CATALOG_OTHER each entry is "FILE: why". */
static void list_dir(const char *dir, catalog_kind kind, strv *out) {
  int first = out->n;
  DIR *d = opendir(dir);
  if (!d) return;
  struct dirent *de;
  while (!out->oom && (de = readdir(d)) != NULL) {
    if (de->d_name[0] == '.') continue;
    char sub[8192];
    if ((size_t)snprintf(sub, sizeof sub, "%s/%s", dir, de->d_name) >= sizeof sub) continue;
    struct stat st;
    if (stat(sub, &st) != 0) {
      if (ends_json(de->d_name)) strv_bad(out, sub, 0, errno);
      continue;
    }
    if (ends_json(de->d_name) && !S_ISREG(st.st_mode)) {
      strv_bad(out, sub, st.st_mode, 0);
    } else if (S_ISREG(st.st_mode) && ends_json(de->d_name)) {
      push_kind(out, dir, de->d_name, kind);
    } else if (S_ISDIR(st.st_mode)) {
      DIR *d2 = opendir(sub);
      if (!d2) continue;
      struct dirent *de2;
      while (!out->oom && (de2 = readdir(d2)) != NULL) {
        char f[8192 + 260];
        snprintf(f, sizeof f, "%s/%s", sub, de2->d_name);
        if (!ends_json(de2->d_name)) continue;
        if (stat(f, &st) != 0)
          strv_bad(out, f, 0, errno);
        else if (!S_ISREG(st.st_mode))
          strv_bad(out, f, st.st_mode, 0);
        else
          push_kind(out, sub, de2->d_name, kind);
      }
      closedir(d2);
    }
  }
  closedir(d);
  if (out->n > first) qsort(out->v + first, (size_t)(out->n - first), sizeof *out->v, cmp_str);
}

static rt_status list_path(const char *path, catalog_kind kind, char ***paths, int *count,
                           rt_error *err) {
  char buf[8192];
  if (!path) path = catalog_path(buf, sizeof buf);
  strv s = {0};
  const char *p = path;
  char seen[CATALOG_MAX_DIRS][PATH_MAX];
  int nseen = 0;
  while (*p) {
    size_t len = strcspn(p, ":");
    char dir[PATH_MAX];
    snprintf(dir, sizeof dir, "%.*s", (int)len, p);
    p += len + (p[len] == ':');
    if (!dir[0]) continue;
    /* a folder named twice (the same real folder) is read once */
    char real[PATH_MAX];
    if (!realpath(dir, real)) continue;
    int dup = 0;
    for (int i = 0; i < nseen; i++) dup |= strcmp(seen[i], real) == 0;
    if (dup) continue;
    if (nseen < CATALOG_MAX_DIRS) snprintf(seen[nseen++], PATH_MAX, "%s", real);
    list_dir(dir, kind, &s);
  }
  if (s.oom || s.bad[0]) {
    catalog_list_free(s.v, s.n);
    *paths = NULL;
    *count = 0;
    if (s.oom) return rt_error_set(err, RT_ERR_NOMEM, "out of memory listing %s", path);
    rt_error_locate(err, s.bad, NULL, 0, 0);
    return rt_error_set(err, RT_ERR_IO,
                        "%s: a .json file in the template path must be a file one can read "
                        "(remove it, or move it out of the template path)",
                        s.bad_why);
  }
  *paths = s.v;
  *count = s.n;
  return RT_OK;
}

rt_status catalog_list(const char *path, char ***paths, int *count, rt_error *err) {
  return list_path(path, CATALOG_MANIFEST, paths, count, err);
}

rt_status catalog_families(const char *path, char ***paths, int *count, rt_error *err) {
  return list_path(path, CATALOG_FAMILY, paths, count, err);
}

rt_status catalog_skipped(const char *path, char ***notes, int *count, rt_error *err) {
  return list_path(path, CATALOG_OTHER, notes, count, err);
}

void catalog_list_free(char **paths, int count) {
  for (int i = 0; i < count; i++) free(paths[i]);
  free(paths);
}

/* ---- finding one ---- */

rt_status catalog_find(const char *path, const char *name, manifest **out, rt_error *err) {
  char buf[8192];
  if (!path) path = catalog_path(buf, sizeof buf);
  *out = NULL;
  char **paths;
  int n;
  rt_status s = catalog_list(path, &paths, &n, err);
  if (s) return s;
  size_t nl = strlen(name);
  manifest *found = NULL;
  const char *found_at = NULL;
  char list[600] = "";
  size_t k = 0;
  for (int i = 0; i < n; i++) {
    const char *base = strrchr(paths[i], '/');
    base = base ? base + 1 : paths[i];
    int named_file = strncmp(base, name, nl) == 0 && strcmp(base + nl, ".json") == 0;
    manifest *m = NULL;
    rt_error lerr = {0};
    if (manifest_load(paths[i], &m, &lerr) != RT_OK) {
      if (named_file) { /* NAME.json's own errors are worth reporting */
        if (err) *err = lerr;
        manifest_free(found);
        catalog_list_free(paths, n);
        return lerr.code ? lerr.code : RT_ERR_MANIFEST;
      }
      continue;
    }
    if (strcmp(manifest_name(m), name) == 0) {
      if (found) {
        rt_error_locate(err, paths[i], "name", 0, 0);
        s = rt_error_set(err, RT_ERR_MANIFEST,
                         "template %s is defined twice: in %s and in %s; rename one (or leave "
                         "one folder out of the template path)",
                         name, found_at, paths[i]);
        manifest_free(m);
        manifest_free(found);
        catalog_list_free(paths, n);
        return s;
      }
      found = m;
      found_at = manifest_path(m);
      continue;
    }
    if (k < sizeof list) {
      int w = snprintf(list + k, sizeof list - k, "%s%s", k ? ", " : "", manifest_name(m));
      if (w > 0) k += (size_t)w;
    }
    manifest_free(m);
  }
  catalog_list_free(paths, n);
  if (found) {
    *out = found;
    return RT_OK;
  }
  rt_error_set(err, RT_ERR_NOT_FOUND, "no template named %s in %s; templates are: %s", name, path,
               k ? list : "(none)");
  rt_error_locate(err, name, NULL, 0, 0);
  return RT_ERR_NOT_FOUND;
}
