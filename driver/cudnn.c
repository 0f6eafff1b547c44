/* cudnn.c — finds libcudnn.so.9, dlopen()s it and fills the function table (see cudnn.h). */
#include "driver/cudnn.h"

#include <dlfcn.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

cudnn_lib dnn;
static int load_tried;
static rt_status load_status = RT_OK;
static char load_text[768];

#define CUDNN_SONAME "libcudnn.so.9"

static const char *status_name(int s) {
  if (dnn.cudnnGetErrorString) return dnn.cudnnGetErrorString(s);
  return "CUDNN_STATUS_?";
}

void cudnn_last_error(char *buf, size_t size) {
  if (!size) return;
  buf[0] = 0;
  if (!dnn.cudnnGetLastErrorString) return;
  char raw[2048];
  raw[0] = 0;
  dnn.cudnnGetLastErrorString(raw, sizeof raw);
  raw[sizeof raw - 1] = 0;
  /* one line: newlines become "; ", repeated blanks and empty lines go */
  size_t n = 0;
  int pending = 0;
  for (const char *s = raw; *s && n + 3 < size; s++) {
    if (*s == '\n' || *s == '\r') {
      pending = n > 0;
      continue;
    }
    if (pending) {
      buf[n++] = ';';
      buf[n++] = ' ';
      pending = 0;
    }
    buf[n++] = *s;
  }
  buf[n] = 0;
  while (n && (buf[n - 1] == ' ' || buf[n - 1] == ';')) buf[--n] = 0;
}

rt_status cudnn_check(int status, const char *what, rt_error *err) {
  if (status == CUDNN_STATUS_SUCCESS) return RT_OK;
  char last[512];
  cudnn_last_error(last, sizeof last);
  int category = status / 1000 * 1000;
  rt_status code = category == CUDNN_STATUS_NOT_SUPPORTED || category == 1000 ? RT_ERR_UNSUPPORTED
                   : category == CUDNN_STATUS_EXECUTION_FAILED                ? RT_ERR_LAUNCH
                                                                              : RT_ERR_INTERNAL;
  if (last[0]) return rt_error_set(err, code, "%s: %s (%s)", what, status_name(status), last);
  return rt_error_set(err, code, "%s: %s", what, status_name(status));
}

void cudnn_version_text(int version, char *buf, size_t size) {
  snprintf(buf, size, "%d.%d.%d", version / 10000, version / 100 % 100, version % 100);
}

/* What was tried, for the message when nothing loads. */
typedef struct tried {
  char text[640];
  size_t n;
} tried;

static void note(tried *t, const char *fmt, const char *a, const char *b) {
  if (t->n + 4 >= sizeof t->text) return;
  int w = snprintf(t->text + t->n, sizeof t->text - t->n, "%s", t->n ? ", " : "");
  if (w > 0) t->n += (size_t)w;
  w = snprintf(t->text + t->n, sizeof t->text - t->n, fmt, a, b ? b : "");
  if (w > 0) t->n = t->n + (size_t)w < sizeof t->text ? t->n + (size_t)w : sizeof t->text - 1;
}

static int is_dir(const char *p) {
  struct stat st;
  return stat(p, &st) == 0 && S_ISDIR(st.st_mode);
}

/* cuDNN opens its sub-libraries by soname, found through libcudnn.so.9's RUNPATH ($ORIGIN).
 * That breaks where dlopen's caller is not libcudnn itself (AddressSanitizer's interceptor), so
 * before libcudnn.so.9 is opened from a folder the loader does not search, the sub-libraries the
 * graph API uses are opened from that folder: cuDNN's dlopen of the same soname finds them. */
static void open_siblings(const char *lib) {
  static const char *const subs[] = {"libcudnn_graph.so.9", "libcudnn_heuristic.so.9",
                                     "libcudnn_engines_precompiled.so.9",
                                     "libcudnn_engines_runtime_compiled.so.9"};
  char folder[1024];
  snprintf(folder, sizeof folder, "%s", lib);
  char *slash = strrchr(folder, '/');
  if (!slash) return;
  *slash = 0;
  for (size_t i = 0; i < sizeof subs / sizeof subs[0]; i++) {
    char path[1100];
    snprintf(path, sizeof path, "%.1000s/%s", folder, subs[i]);
    if (access(path, F_OK) == 0) dlopen(path, RTLD_LAZY | RTLD_LOCAL); /* kept open, like cuDNN */
  }
}

/* Tries FOLDER/libcudnn.so.9 when it exists; notes the folder (and why it failed). */
static void *try_folder(const char *folder, tried *t) {
  char path[1100];
  snprintf(path, sizeof path, "%.1000s/%s", folder, CUDNN_SONAME);
  if (access(path, F_OK) != 0) {
    note(t, "%s%s", folder, NULL);
    return NULL;
  }
  open_siblings(path);
  void *h = dlopen(path, RTLD_NOW | RTLD_LOCAL);
  if (!h) {
    const char *e = dlerror();
    note(t, "%s (%s)", path, e ? e : "dlopen failed");
    return NULL;
  }
  snprintf(dnn.path, sizeof dnn.path, "%.1000s", path);
  return h;
}

static int add_folder(char (*out)[1024], int n, int max, const char *a, const char *b) {
  if (n >= max) return n;
  char f[1024];
  snprintf(f, sizeof f, "%s%s", a, b);
  for (int i = 0; i < n; i++)
    if (!strcmp(out[i], f)) return n;
  snprintf(out[n], sizeof out[n], "%s", f);
  return n + 1;
}

int cudnn_search_folders(char (*out)[1024], int max) {
  int n = 0;
  /* the CUDA toolkit's lib folders: $CUDA_HOME, $CUDA_PATH, /usr/local/cuda, the build's */
  const char *roots[3] = {getenv("CUDA_HOME"), getenv("CUDA_PATH"), "/usr/local/cuda"};
  for (int i = 0; i < 3; i++) {
    if (!roots[i] || !*roots[i]) continue;
    n = add_folder(out, n, max, roots[i], "/lib64");
    n = add_folder(out, n, max, roots[i], "/lib");
  }
#ifdef ROOFTUNE_CUDA_LIB_DIR
  n = add_folder(out, n, max, ROOFTUNE_CUDA_LIB_DIR, "");
#endif
  /* NVIDIA's wheels (nvidia-cudnn-cu12 / -cu13) keep it in SITE/nvidia/cudnn/lib: ask the
   * python3 on PATH for its site-packages folders */
  FILE *f = popen(
      "python3 -c 'import site; print(\"\\n\".join(site.getsitepackages() + "
      "[site.getusersitepackages()]))' 2>/dev/null",
      "r");
  if (f) {
    char line[900];
    while (fgets(line, sizeof line, f)) {
      line[strcspn(line, "\r\n")] = 0;
      if (line[0]) n = add_folder(out, n, max, line, "/nvidia/cudnn/lib");
    }
    pclose(f);
  }
  return n;
}

static rt_status fail(rt_status code, rt_error *err) {
  load_status = code;
  return rt_error_set(err, load_status, "%s", load_text);
}

rt_status cudnn_load(rt_error *err) {
  if (load_tried) {
    if (load_status != RT_OK) rt_error_set(err, load_status, "%s", load_text);
    return load_status;
  }
  load_tried = 1;
  tried t = {.n = 0};
  t.text[0] = 0;
  void *h = NULL;
  const char *env = getenv("ROOFTUNE_LIBCUDNN");
  if (env && *env) {
    char path[1024];
    if (is_dir(env))
      snprintf(path, sizeof path, "%s/%s", env, CUDNN_SONAME);
    else
      snprintf(path, sizeof path, "%s", env);
    if (access(path, F_OK) == 0) open_siblings(path);
    h = dlopen(path, RTLD_NOW | RTLD_LOCAL);
    if (!h) {
      const char *e = dlerror();
      snprintf(load_text, sizeof load_text,
               "cuDNN not found: ROOFTUNE_LIBCUDNN=%s could not be loaded (%.300s); point it at "
               "libcudnn.so.9 or the folder holding it, or unset it",
               env, e ? e : "dlopen failed");
      return fail(RT_ERR_UNSUPPORTED, err);
    }
    snprintf(dnn.path, sizeof dnn.path, "%s", path);
  }
  if (!h) {
    h = dlopen(CUDNN_SONAME, RTLD_NOW | RTLD_LOCAL);
    if (h) {
      /* where the loader found it */
      Dl_info info;
      void *sym = dlsym(h, "cudnnGetVersion");
      if (sym && dladdr(sym, &info) && info.dli_fname)
        snprintf(dnn.path, sizeof dnn.path, "%s", info.dli_fname);
      else
        snprintf(dnn.path, sizeof dnn.path, "%s", CUDNN_SONAME);
    } else {
      note(&t, "%s%s", "the loader's default paths", NULL);
    }
  }
  if (!h) {
    char folders[16][1024];
    int n = cudnn_search_folders(folders, 16);
    for (int i = 0; i < n && !h; i++) h = try_folder(folders[i], &t);
    if (!h && n == 0) note(&t, "%s%s", "no CUDA toolkit or python3 site-packages", NULL);
  }
  if (!h) {
    snprintf(
        load_text, sizeof load_text,
        "cuDNN not found (looked in %.520s): install cuDNN 9 (the CUDA toolkit's, or pip install "
        "nvidia-cudnn-cu13) or set ROOFTUNE_LIBCUDNN to libcudnn.so.9",
        t.text);
    return fail(RT_ERR_UNSUPPORTED, err);
  }
#define CUDNN_DLSYM(ret, name, args)                                                              \
  *(void **)(&dnn.name) = dlsym(h, #name);                                                        \
  if (!dnn.name) {                                                                                \
    snprintf(load_text, sizeof load_text, "%.600s lacks %s: it is not cuDNN 9", dnn.path, #name); \
    dlclose(h);                                                                                   \
    memset(&dnn, 0, sizeof dnn);                                                                  \
    return fail(RT_ERR_UNSUPPORTED, err);                                                         \
  }
  CUDNN_FUNCS(CUDNN_DLSYM)
#undef CUDNN_DLSYM
  int version = (int)dnn.cudnnGetVersion();
  if (version < 90000 || version >= 100000) {
    char v[32];
    cudnn_version_text(version, v, sizeof v);
    snprintf(load_text, sizeof load_text, "%.600s is cuDNN %s: rooftune needs cuDNN 9", dnn.path,
             v);
    dlclose(h);
    memset(&dnn, 0, sizeof dnn);
    return fail(RT_ERR_UNSUPPORTED, err);
  }
  dnn.version = version;
  dnn.handle = h;
  return RT_OK;
}
