/* test_cudnn_loader.c — driver/cudnn.c: the loader finds this machine's cuDNN 9 and
 * reports its version (or says where it looked when there is none); a wrong $ROOFTUNE_LIBCUDNN
 * is an error naming it; loaded from a folder that is on no loader path (a folder of links made
 * here, run with LD_LIBRARY_PATH unset), cuDNN's sub-libraries come from that folder too; and
 * every constant cudnn.h declares has the value of the installed cuDNN header, when there is
 * one.  Each case runs in a fresh process (this binary again), since the loader answers once.
 * Skips (77) only when cuDNN is absent, after checking the message that says so. */
#if defined(__has_include)
#if __has_include(<cudnn.h>)
/* stages: kernels */
#include <cudnn.h> /* first: cudnn.h then declares nothing of its own, and the values compare */
#define HAVE_CUDNN_HEADER 1
#endif
#endif

#include <dirent.h>
#include <link.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include "kernels/attention.h"
#include "kernels/attention_cudnn.h"
#include "driver/cudnn.h"
#include "test.h"

extern char **environ;

/* Runs this binary with `mode` and `arg`, ROOFTUNE_LIBCUDNN set to libcudnn (NULL: unset) and
 * LD_LIBRARY_PATH unset; returns its exit status. */
static int run_self(const char *mode, const char *arg, const char *libcudnn) {
  pid_t pid = fork();
  if (pid == 0) {
    if (libcudnn)
      setenv("ROOFTUNE_LIBCUDNN", libcudnn, 1);
    else
      unsetenv("ROOFTUNE_LIBCUDNN");
    unsetenv("LD_LIBRARY_PATH");
    char *args[] = {(char *)"/proc/self/exe", (char *)mode, (char *)(arg ? arg : ""), NULL};
    execve("/proc/self/exe", args, environ);
    _exit(127);
  }
  int status = 0;
  waitpid(pid, &status, 0);
  return WIFEXITED(status) ? WEXITSTATUS(status) : 128;
}

/* The default search: found (version 9, a path), or the message that lists where it looked. */
static int case_default(void) {
  rt_error err;
  rt_error_clear(&err);
  rt_status st = cudnn_load(&err);
  if (st != RT_OK) {
    CHECK_INT(st, RT_ERR_UNSUPPORTED);
    CHECK_CONTAINS(err.text, "cuDNN not found (looked in ");
    CHECK_CONTAINS(err.text, "the loader's default paths");
    CHECK_CONTAINS(err.text, "ROOFTUNE_LIBCUDNN");
    printf("no cuDNN here: %s\n", err.text);
    return test_failures ? 1 : 77;
  }
  char v[32];
  cudnn_version_text(dnn.version, v, sizeof v);
  printf("cuDNN %s (cudart %zu) at %s\n", v, dnn.cudnnGetCudartVersion(), dnn.path);
  CHECK(dnn.version >= 90000 && dnn.version < 100000);
  CHECK_INT(dnn.version, (long long)dnn.cudnnGetVersion());
  CHECK(dnn.path[0] == '/');
  CHECK(access(dnn.path, R_OK) == 0);
  /* a second call gives the same answer without loading again */
  void *h = dnn.handle;
  CHECK_INT(cudnn_load(&err), RT_OK);
  CHECK(dnn.handle == h);
  /* cuDNN's statuses become rooftune's, with cuDNN's name */
  CHECK_INT(cudnn_check(CUDNN_STATUS_SUCCESS, "x", &err), RT_OK);
  CHECK_INT(cudnn_check(CUDNN_STATUS_NOT_SUPPORTED, "build it", &err), RT_ERR_UNSUPPORTED);
  CHECK_CONTAINS(err.text, "build it: CUDNN_STATUS_NOT_SUPPORTED");
  CHECK_INT(cudnn_check(3001, "match it", &err), RT_ERR_UNSUPPORTED); /* ..._GRAPH_PATTERN */
  CHECK_INT(cudnn_check(CUDNN_STATUS_BAD_PARAM, "set it", &err), RT_ERR_INTERNAL);
  CHECK_INT(cudnn_check(CUDNN_STATUS_EXECUTION_FAILED, "run it", &err), RT_ERR_LAUNCH);
  /* the file the parent links in the farm case */
  FILE *f = fopen(getenv("RT_TEST_OUT"), "w");
  if (f) {
    fprintf(f, "%s\n", dnn.path);
    fclose(f);
  }
  return test_done();
}

/* The folders after the loader's: $CUDA_HOME's first, the user site's wheel folder among them
 * ($PYTHONUSERBASE, set by the parent, decides where python3 says it is). */
static int case_folders(const char *userbase) {
  char f[16][1024];
  int n = cudnn_search_folders(f, 16);
  for (int i = 0; i < n; i++) printf("  search %s\n", f[i]);
  CHECK(n >= 3);
  if (n >= 2) {
    CHECK_STR(f[0], "/nonexistent-cuda/lib64");
    CHECK_STR(f[1], "/nonexistent-cuda/lib");
  }
  int cuda = 0, wheel = 0;
  for (int i = 0; i < n; i++) {
    cuda |= !strcmp(f[i], "/usr/local/cuda/lib64");
    wheel |= !strncmp(f[i], userbase, strlen(userbase)) &&
             strstr(f[i], "/site-packages/nvidia/cudnn/lib") != NULL;
  }
  CHECK(cuda);
  if (system("python3 -c 'import site' 2>/dev/null") == 0)
    CHECK(wheel);
  else
    printf("no python3 on PATH: the wheels' folders are not checked\n");
  return test_done();
}

/* $ROOFTUNE_LIBCUDNN names what is loaded, and nothing else is tried when it is wrong. */
static int case_wrong(const char *expect) {
  rt_error err;
  rt_error_clear(&err);
  CHECK_INT(cudnn_load(&err), RT_ERR_UNSUPPORTED);
  CHECK_CONTAINS(err.text, "cuDNN not found: ROOFTUNE_LIBCUDNN=");
  CHECK_CONTAINS(err.text, expect);
  CHECK_CONTAINS(err.text, "or unset it");
  CHECK(dnn.handle == NULL);
  CHECK_INT(cudnn_load(&err), RT_ERR_UNSUPPORTED); /* the same answer again */
  return test_done();
}

static int saw_graph_lib;

static int loaded_from(struct dl_phdr_info *info, size_t size, void *data) {
  (void)size;
  const char *folder = data;
  const char *name = info->dlpi_name, *base = strrchr(name, '/');
  base = base ? base + 1 : name;
  if (strncmp(base, "libcudnn", 8) != 0) return 0;
  printf("  loaded %s\n", name);
  CHECK(strncmp(name, folder, strlen(folder)) == 0 && name[strlen(folder)] == '/');
  saw_graph_lib |= !strcmp(base, "libcudnn_graph.so.9");
  return 0;
}

/* Loaded from FOLDER (on no loader path): the sub-libraries come from FOLDER too, once the graph
 * is built and an engine finalized (which open libcudnn_graph and the engine libraries). */
static int case_farm(const char *folder) {
  rt_error err;
  rt_error_clear(&err);
  CHECK_INT(cudnn_load(&err), RT_OK);
  if (err.text[0]) fprintf(stderr, "  %s\n", err.text);
  char want[1100];
  snprintf(want, sizeof want, "%s/libcudnn.so.9", folder);
  CHECK_STR(dnn.path, want);
  problem p;
  CHECK_INT(attention_family.parse_shape(&attention_family, "2x8x129x128", "bf16", NULL, &p, &err),
            RT_OK);
  attn_cudnn_graph *g = NULL;
  CHECK_INT(attn_cudnn_graph_build(&p, NULL, &g, &err), RT_OK);
  if (g) {
    cudnnBackendDescriptor_t e = NULL;
    void *graph = attn_cudnn_graph_desc(g);
    int64_t index = 0;
    CHECK_INT(dnn.cudnnBackendCreateDescriptor(CUDNN_BACKEND_ENGINE_DESCRIPTOR, &e), 0);
    dnn.cudnnBackendSetAttribute(e, CUDNN_ATTR_ENGINE_OPERATION_GRAPH,
                                 CUDNN_TYPE_BACKEND_DESCRIPTOR, 1, &graph);
    dnn.cudnnBackendSetAttribute(e, CUDNN_ATTR_ENGINE_GLOBAL_INDEX, CUDNN_TYPE_INT64, 1, &index);
    dnn.cudnnBackendFinalize(e); /* may be unsupported without a GPU: it has loaded the engines */
    dnn.cudnnBackendDestroyDescriptor(e);
    attn_cudnn_graph_free(g);
  } else {
    fprintf(stderr, "  %s\n", err.text);
  }
  dl_iterate_phdr(loaded_from, (void *)folder);
  CHECK(saw_graph_lib);
  return test_done();
}

#ifdef HAVE_CUDNN_HEADER
#pragma GCC diagnostic push
#pragma GCC diagnostic ignored "-Wdeprecated-declarations"
static void compare_constants(void) {
  int n = 0;
#define CMP(name, value)             \
  CHECK_INT((long long)name, value); \
  n++;
  CUDNN_CONSTANTS(CMP)
#undef CMP
#define CMP_KNOB(name, value)                          \
  CHECK_INT((long long)CUDNN_KNOB_TYPE_##name, value); \
  n++;
  CUDNN_KNOB_TYPES(CMP_KNOB)
#undef CMP_KNOB
  printf("%d constants of cudnn.h agree with the installed cuDNN %d.%d.%d header\n", n, CUDNN_MAJOR,
         CUDNN_MINOR, CUDNN_PATCHLEVEL);
}
#pragma GCC diagnostic pop
#endif

/* Links every libcudnn*.so.9 of the folder of `lib` into `farm`. */
static int make_farm(const char *lib, const char *farm) {
  char folder[1024];
  snprintf(folder, sizeof folder, "%s", lib);
  char *slash = strrchr(folder, '/');
  if (!slash) return -1;
  *slash = 0;
  DIR *d = opendir(folder);
  if (!d) return -1;
  int n = 0;
  struct dirent *e;
  while ((e = readdir(d))) {
    size_t len = strlen(e->d_name);
    if (strncmp(e->d_name, "libcudnn", 8) || len < 5 || strcmp(e->d_name + len - 5, ".so.9"))
      continue;
    char from[2100], to[2100];
    snprintf(from, sizeof from, "%s/%s", folder, e->d_name);
    snprintf(to, sizeof to, "%s/%s", farm, e->d_name);
    if (symlink(from, to) == 0) n++;
  }
  closedir(d);
  return n;
}

int main(int argc, char **argv) {
  if (argc == 3 && !strcmp(argv[1], "--default")) return case_default();
  if (argc == 3 && !strcmp(argv[1], "--wrong")) return case_wrong(argv[2]);
  if (argc == 3 && !strcmp(argv[1], "--farm")) return case_farm(argv[2]);
  if (argc == 3 && !strcmp(argv[1], "--folders")) return case_folders(argv[2]);

#ifdef HAVE_CUDNN_HEADER
  compare_constants();
#else
  printf("no cudnn.h here: the constants are not compared\n");
#endif
  char tmp[] = "/tmp/rooftune-cudnn-XXXXXX";
  CHECK(mkdtemp(tmp) != NULL);
  char out[200], farm[200];
  snprintf(out, sizeof out, "%s/found", tmp);
  snprintf(farm, sizeof farm, "%s/farm", tmp);
  setenv("RT_TEST_OUT", out, 1);

  CHECK_INT(run_self("--wrong", "/nonexistent/libcudnn.so.9", "/nonexistent/libcudnn.so.9"), 0);
  char in_tmp[260];
  snprintf(in_tmp, sizeof in_tmp, "%s/libcudnn.so.9", tmp);
  CHECK_INT(run_self("--wrong", in_tmp, tmp), 0); /* a folder without it: its file is named */

  setenv("CUDA_HOME", "/nonexistent-cuda", 1);
  setenv("PYTHONUSERBASE", tmp, 1);
  CHECK_INT(run_self("--folders", tmp, NULL), 0);
  unsetenv("CUDA_HOME");
  unsetenv("PYTHONUSERBASE");

  int found = run_self("--default", "", NULL);
  CHECK(found == 0 || found == 77);
  if (found == 0) {
    char lib[1100] = "";
    FILE *f = fopen(out, "r");
    CHECK(f != NULL);
    if (f) {
      if (!fgets(lib, sizeof lib, f)) lib[0] = 0;
      lib[strcspn(lib, "\n")] = 0;
      fclose(f);
    }
    CHECK(mkdir(farm, 0700) == 0);
    int links = make_farm(lib, farm);
    CHECK(links >= 2);
    printf("linked %d libraries into %s\n", links, farm);
    CHECK_INT(run_self("--farm", farm, farm), 0);
  }
  /* clean up the links and the folder */
  DIR *d = opendir(farm);
  if (d) {
    struct dirent *e;
    while ((e = readdir(d))) {
      char p[520];
      snprintf(p, sizeof p, "%s/%s", farm, e->d_name);
      if (e->d_name[0] != '.') unlink(p);
    }
    closedir(d);
    rmdir(farm);
  }
  unlink(out);
  rmdir(tmp);
  if (found == 77 && !test_failures)
    test_skip("no cuDNN on this machine (the message saying so was checked)");
  return test_done();
}
