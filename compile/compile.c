/* compile.c — NVRTC to cubin, the ptxas report parser and the options digest (see compile.h;
 * the key's include lookups are compile_deps.c's). */
#include "compile/compile.h"

#include <ctype.h>
#include <nvrtc.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>

#include "core/sha256.h"
#include "core/util.h"

#ifndef ROOFTUNE_CUDA_INCLUDE_DIR
#define ROOFTUNE_CUDA_INCLUDE_DIR "/usr/local/cuda/include"
#endif

/* sm_75: the Turing GPUs public recordings were made on (replay compiles their kernels again) */
static const char *const compile_archs[] = {"sm_75", "sm_80", "sm_86", "sm_89", "sm_90", "sm_90a"};

const char *compile_arch_list(void) { return "sm_75, sm_80, sm_86, sm_89, sm_90, sm_90a"; }

int compile_arch_valid(const char *arch) {
  if (!arch) return 0;
  for (size_t i = 0; i < sizeof compile_archs / sizeof compile_archs[0]; i++)
    if (strcmp(arch, compile_archs[i]) == 0) return 1;
  return 0;
}

static int compile_is_dir(const char *path) {
  struct stat st;
  return stat(path, &st) == 0 && S_ISDIR(st.st_mode);
}

const char *compile_cuda_include_dir(void) {
  static char dir[1024];
  if (dir[0]) return dir;
  const char *envs[] = {"CUDA_HOME", "CUDA_PATH"};
  for (int i = 0; i < 2; i++) {
    const char *e = getenv(envs[i]);
    if (e && *e) {
      char cand[1024];
      snprintf(cand, sizeof cand, "%s/include", e);
      char probe[1100];
      snprintf(probe, sizeof probe, "%s/cuda_fp16.h", cand);
      struct stat st;
      if (stat(probe, &st) == 0) {
        snprintf(dir, sizeof dir, "%s", cand);
        return dir;
      }
    }
  }
  snprintf(dir, sizeof dir, "%s", ROOFTUNE_CUDA_INCLUDE_DIR);
  return dir;
}

/* ---------------------------------------------------------------- options */

rt_status compile_build_options(const compile_options *opt, const char ***argv_out, int *argc_out,
                                char **storage, rt_error *err) {
  *argv_out = NULL;
  *argc_out = 0;
  *storage = NULL;
  if (!compile_arch_valid(opt->arch))
    return rt_error_set(err, RT_ERR_INVALID, "unknown architecture '%s'; valid: %s",
                        opt->arch ? opt->arch : "(none)", compile_arch_list());
  if (opt->include_count < 0 || opt->include_count > COMPILE_MAX_INCLUDES || opt->extra_count < 0 ||
      opt->extra_count > COMPILE_MAX_EXTRA)
    return rt_error_set(err, RT_ERR_INVALID, "too many include folders or extra options");

  const char *cuda = compile_cuda_include_dir();
  char cccl[1100];
  snprintf(cccl, sizeof cccl, "%s/cccl", cuda);
  int have_cccl = compile_is_dir(cccl);

  /* every option as one text, joined by NULs, then pointers into it */
  char *texts[32];
  int n = 0;
  char buf[1200];
#define COMPILE_ADD(...)                    \
  do {                                      \
    snprintf(buf, sizeof buf, __VA_ARGS__); \
    texts[n++] = strdup(buf);               \
  } while (0)
  COMPILE_ADD("-arch=%s", opt->arch);
  COMPILE_ADD("-std=c++17");
  COMPILE_ADD("-default-device");
  COMPILE_ADD("--ptxas-options=-v");
  /* NVRTC (12.9+) shares the driver's compute cache where a driver is loaded: a hit skips ptxas,
   * and with it the -v report that registers, shared memory and spills are read from (seen on
   * an H200: the second compile of one source had an empty log).  rooftune's cubin cache keeps
   * the report with the cubin instead.  Older NVRTCs have no cache and no such option. */
  int nv_major = 0, nv_minor = 0;
  nvrtcVersion(&nv_major, &nv_minor);
  if (nv_major * 100 + nv_minor >= 1209) COMPILE_ADD("--no-cache");
  COMPILE_ADD("-I%s", cuda);
  if (have_cccl) COMPILE_ADD("-I%s", cccl);
  for (int i = 0; i < opt->include_count; i++) COMPILE_ADD("-I%s", opt->include_dirs[i]);
  if (opt->pch) {
    COMPILE_ADD("-pch");
    if (opt->pch_dir) COMPILE_ADD("-pch-dir=%s", opt->pch_dir);
    COMPILE_ADD("-pch-messages=false");
    COMPILE_ADD("-pch-verbose=false");
    COMPILE_ADD("-diag-suppress=20283"); /* "PCH creation disabled because #line ..." */
  }
  for (int i = 0; i < opt->extra_count; i++) COMPILE_ADD("%s", opt->extra[i]);
#undef COMPILE_ADD
  size_t total = 0;
  for (int i = 0; i < n; i++) {
    if (!texts[i]) {
      for (int j = 0; j < n; j++) free(texts[j]);
      return rt_error_set(err, RT_ERR_NOMEM, "out of memory building NVRTC options");
    }
    total += strlen(texts[i]) + 1;
  }
  char *block = malloc(total + sizeof(char *) * (size_t)(n + 1));
  if (!block) {
    for (int j = 0; j < n; j++) free(texts[j]);
    return rt_error_set(err, RT_ERR_NOMEM, "out of memory building NVRTC options");
  }
  const char **argv = (const char **)(void *)block;
  char *p = block + sizeof(char *) * (size_t)(n + 1);
  for (int i = 0; i < n; i++) {
    size_t len = strlen(texts[i]) + 1;
    memcpy(p, texts[i], len);
    argv[i] = p;
    p += len;
    free(texts[i]);
  }
  argv[n] = NULL;
  *argv_out = argv;
  *argc_out = n;
  *storage = block;
  return RT_OK;
}

/* ---------------------------------------------------------------- key */

static void compile_hash_str(sha256_ctx *c, const char *s) {
  s = s ? s : "";
  sha256_update(c, s, strlen(s) + 1);
}

rt_status compile_options_digest(const compile_options *opt, unsigned char digest[32],
                                 rt_error *err) {
  const char **argv;
  int argc;
  char *storage;
  compile_options keyed = *opt;
  keyed.pch_dir = NULL; /* where the PCH lives changes no output */
  rt_status s = compile_build_options(&keyed, &argv, &argc, &storage, err);
  if (s) return s;
  sha256_ctx c;
  sha256_init(&c);
  compile_hash_str(&c, "rooftune-compile-2"); /* 2: the headers are compile_key's */
  int major = 0, minor = 0;
  nvrtcVersion(&major, &minor);
  char v[32];
  snprintf(v, sizeof v, "nvrtc %d.%d", major, minor);
  compile_hash_str(&c, v);
  for (int i = 0; i < argc; i++) compile_hash_str(&c, argv[i]);
  free(storage);
  compile_hash_str(&c, opt->entry ? opt->entry : "(first kernel)");
  compile_hash_str(&c, opt->want_ptx ? "ptx" : "no ptx");
  sha256_final(&c, digest);
  return RT_OK;
}

/* ---------------------------------------------------------------- ptxas report */

/* The value before `what` in a comma-separated ptxas line: "Used 40 registers, used 1 barriers,
 * 256 bytes smem" with what = "registers" gives 40.  -1 when absent. */
static long compile_ptxas_field(const char *line, const char *end, const char *what) {
  size_t wl = strlen(what);
  for (const char *p = line; p + wl <= end; p++) {
    if (strncmp(p, what, wl) != 0) continue;
    if (p > line && !isspace((unsigned char)p[-1])) continue;
    const char *after = p + wl;
    if (after < end && (isalnum((unsigned char)*after) || *after == '_')) continue;
    /* walk back over spaces, "bytes ", then the number */
    const char *q = p;
    while (q > line && isspace((unsigned char)q[-1])) q--;
    if (q - line >= 5 && strncmp(q - 5, "bytes", 5) == 0 && strcmp(what, "bytes") != 0) {
      q -= 5;
      while (q > line && isspace((unsigned char)q[-1])) q--;
    }
    const char *digits_end = q;
    while (q > line && isdigit((unsigned char)q[-1])) q--;
    if (q == digits_end) continue;
    return strtol(q, NULL, 10);
  }
  return -1;
}

/* Finds the next line; returns its end (the '\n' or the NUL). */
static const char *compile_line_end(const char *p) {
  const char *e = strchr(p, '\n');
  return e ? e : p + strlen(p);
}

/* The quoted name in "Compiling entry function 'NAME' for 'sm_90'" into buf. */
static int compile_quoted(const char *p, const char *end, char *buf, size_t size) {
  const char *a = memchr(p, '\'', (size_t)(end - p));
  if (!a) return 0;
  const char *b = memchr(a + 1, '\'', (size_t)(end - a - 1));
  if (!b || (size_t)(b - a - 1) >= size) return 0;
  memcpy(buf, a + 1, (size_t)(b - a - 1));
  buf[b - a - 1] = 0;
  return 1;
}

rt_status compile_parse_ptxas(const char *log, const char *entry, ptxas_report *r) {
  memset(r, 0, sizeof *r);
  if (!log) return RT_ERR_NOT_FOUND;
  static const char compiling[] = "Compiling entry function";
  static const char props[] = "Function properties for";
  char name[512] = "";
  int in_entry = 0, in_props = 0;
  for (const char *p = log; *p;) {
    const char *end = compile_line_end(p);
    const char *hit;
    if ((hit = strstr(p, compiling)) && hit < end) {
      if (in_entry) break; /* the next kernel starts: ours is complete */
      char n[512];
      if (compile_quoted(hit, end, n, sizeof n) && (!entry || strcmp(n, entry) == 0)) {
        in_entry = 1;
        snprintf(name, sizeof name, "%s", n);
      }
    } else if (in_entry && (hit = strstr(p, props)) && hit < end) {
      const char *nm = hit + sizeof props - 1;
      while (*nm == ' ') nm++;
      in_props = (size_t)(end - nm) == strlen(name) && strncmp(nm, name, strlen(name)) == 0;
    } else if (in_entry && in_props && strstr(p, "stack frame") && strstr(p, "stack frame") < end) {
      long v;
      if ((v = compile_ptxas_field(p, end, "stack frame")) >= 0) r->stack_bytes = (int)v;
      if ((v = compile_ptxas_field(p, end, "spill stores")) >= 0) r->spill_stores = (int)v;
      if ((v = compile_ptxas_field(p, end, "spill loads")) >= 0) r->spill_loads = (int)v;
      in_props = 0;
    } else if (in_entry && (hit = strstr(p, "Used ")) && hit < end && strstr(p, "registers") &&
               strstr(p, "registers") < end) {
      long v;
      r->found = 1;
      if ((v = compile_ptxas_field(hit, end, "registers")) >= 0) r->registers = (int)v;
      if ((v = compile_ptxas_field(hit, end, "barriers")) >= 0) r->barriers = (int)v;
      if ((v = compile_ptxas_field(hit, end, "smem")) >= 0) r->smem_static = (int)v;
      if ((v = compile_ptxas_field(hit, end, "cmem[0]")) >= 0) r->cmem0 = (int)v;
    }
    p = *end ? end + 1 : end;
  }
  return r->found ? RT_OK : RT_ERR_NOT_FOUND;
}

/* ---------------------------------------------------------------- compile */

/* The text NVRTC sees with pch: the system includes, a declaration ending the header region,
 * then the source unchanged.  *found = the number of system includes (0: nothing to precompile). */
static char *compile_pch_text(const char *source, int *found) {
  *found = 0;
  size_t n = strlen(source);
  char *out = malloc(2 * n + 128);
  if (!out) return NULL;
  size_t used = 0;
  for (const char *p = source; *p;) {
    const char *end = compile_line_end(p);
    const char *q = p;
    while (q < end && (*q == ' ' || *q == '\t')) q++;
    if (q < end && *q == '#') {
      q++;
      while (q < end && (*q == ' ' || *q == '\t')) q++;
      if ((size_t)(end - q) > 7 && strncmp(q, "include", 7) == 0) {
        const char *r = q + 7;
        while (r < end && (*r == ' ' || *r == '\t')) r++;
        if (r < end && *r == '<') {
          ++*found;
          memcpy(out + used, p, (size_t)(end - p));
          used += (size_t)(end - p);
          out[used++] = '\n';
        }
      }
    }
    p = *end ? end + 1 : end;
  }
  static const char stop[] = "typedef int rooftune_pch_header_stop_;\n";
  memcpy(out + used, stop, sizeof stop - 1);
  used += sizeof stop - 1;
  memcpy(out + used, source, n + 1);
  return out;
}

/* The first line of the log that says "error", for the one-line message. */
static void compile_first_error(const char *log, char *buf, size_t size) {
  for (const char *p = log; p && *p;) {
    const char *end = compile_line_end(p);
    const char *e = strstr(p, "error");
    if (e && e < end) {
      size_t len = (size_t)(end - p);
      if (len >= size) len = size - 1;
      memcpy(buf, p, len);
      buf[len] = 0;
      return;
    }
    p = *end ? end + 1 : end;
  }
  snprintf(buf, size, "compilation failed (see the log)");
}

void compile_result_free(compile_result *r) {
  if (!r) return;
  free(r->log);
  free(r->cubin);
  free(r->ptx);
  memset(r, 0, sizeof *r);
}

rt_status compile_result_copy(compile_result *dst, const compile_result *src) {
  *dst = *src;
  dst->log = src->log ? strdup(src->log) : strdup("");
  dst->ptx = src->ptx ? strdup(src->ptx) : NULL;
  dst->cubin = NULL;
  if (src->cubin) {
    dst->cubin = malloc(src->cubin_size ? src->cubin_size : 1);
    if (dst->cubin) memcpy(dst->cubin, src->cubin, src->cubin_size);
  }
  if (!dst->log || (src->ptx && !dst->ptx) || (src->cubin && !dst->cubin)) {
    compile_result_free(dst);
    return RT_ERR_NOMEM;
  }
  return RT_OK;
}

static rt_status compile_fail(compile_result *out, rt_error *err, rt_status code, const char *fmt,
                              const char *detail) {
  out->status = code;
  snprintf(out->message, sizeof out->message, fmt, detail);
  if (!out->log) out->log = strdup("");
  return rt_error_set(err, code, "%s", out->message);
}

rt_status compile_source(const char *source, const char *name, const compile_options *opt,
                         compile_result *out, rt_error *err) {
  memset(out, 0, sizeof *out);
  /* pch: only when the source has system headers to precompile */
  char *pch_text = NULL;
  compile_options plain;
  if (opt->pch) {
    int found = 0;
    if (!(pch_text = compile_pch_text(source, &found))) {
      out->log = strdup("");
      return compile_fail(out, err, RT_ERR_NOMEM, "%s", "out of memory");
    }
    if (!found) {
      free(pch_text);
      pch_text = NULL;
      plain = *opt;
      plain.pch = 0;
      opt = &plain;
    }
  }
  const char **argv;
  int argc;
  char *storage;
  rt_status s = compile_build_options(opt, &argv, &argc, &storage, err);
  if (s) {
    free(pch_text);
    out->status = s;
    const char *why = err ? err->text : "bad compile options";
    size_t len = strnlen(why, sizeof out->message - 1);
    memcpy(out->message, why, len);
    out->message[len] = 0;
    out->log = strdup("");
    return s;
  }
  nvrtcProgram prog = NULL;
  nvrtcResult r = nvrtcCreateProgram(&prog, pch_text ? pch_text : source, name ? name : "kernel.cu",
                                     0, NULL, NULL);
  free(pch_text);
  if (r != NVRTC_SUCCESS) {
    free(storage);
    return compile_fail(out, err, RT_ERR_NVRTC, "nvrtcCreateProgram: %s", nvrtcGetErrorString(r));
  }
  if (opt->entry && (r = nvrtcAddNameExpression(prog, opt->entry)) != NVRTC_SUCCESS) {
    nvrtcDestroyProgram(&prog);
    free(storage);
    return compile_fail(out, err, RT_ERR_NVRTC, "nvrtcAddNameExpression: %s",
                        nvrtcGetErrorString(r));
  }
  double t0 = rt_now_s();
  nvrtcResult cr = nvrtcCompileProgram(prog, argc, argv);
  out->seconds = rt_now_s() - t0;
  free(storage);

  size_t log_size = 0;
  if (nvrtcGetProgramLogSize(prog, &log_size) == NVRTC_SUCCESS && log_size > 0 &&
      (out->log = malloc(log_size + 1))) {
    if (nvrtcGetProgramLog(prog, out->log) != NVRTC_SUCCESS) out->log[0] = 0;
    out->log[log_size] = 0;
  }
  if (!out->log) out->log = strdup("");

  if (cr == NVRTC_ERROR_COMPILATION) {
    char first[256];
    compile_first_error(out->log, first, sizeof first);
    nvrtcDestroyProgram(&prog);
    return compile_fail(out, err, RT_ERR_COMPILE, "%s", first);
  }
  if (cr != NVRTC_SUCCESS) {
    nvrtcDestroyProgram(&prog);
    return compile_fail(out, err, RT_ERR_NVRTC, "nvrtcCompileProgram: %s", nvrtcGetErrorString(cr));
  }

  if (opt->entry) {
    const char *lowered = NULL;
    if (nvrtcGetLoweredName(prog, opt->entry, &lowered) == NVRTC_SUCCESS && lowered)
      snprintf(out->lowered_name, sizeof out->lowered_name, "%s", lowered);
    else
      snprintf(out->lowered_name, sizeof out->lowered_name, "%s", opt->entry);
  }
  size_t cubin_size = 0;
  if ((r = nvrtcGetCUBINSize(prog, &cubin_size)) != NVRTC_SUCCESS || cubin_size == 0) {
    nvrtcDestroyProgram(&prog);
    return compile_fail(out, err, RT_ERR_NVRTC, "no cubin: %s",
                        r != NVRTC_SUCCESS ? nvrtcGetErrorString(r) : "empty");
  }
  out->cubin = malloc(cubin_size);
  if (!out->cubin || nvrtcGetCUBIN(prog, (char *)out->cubin) != NVRTC_SUCCESS) {
    nvrtcDestroyProgram(&prog);
    return compile_fail(out, err, RT_ERR_NVRTC, "%s", "could not read the cubin");
  }
  out->cubin_size = cubin_size;
  if (opt->want_ptx) {
    size_t ptx_size = 0;
    if (nvrtcGetPTXSize(prog, &ptx_size) == NVRTC_SUCCESS && ptx_size > 0 &&
        (out->ptx = malloc(ptx_size + 1))) {
      if (nvrtcGetPTX(prog, out->ptx) != NVRTC_SUCCESS) out->ptx[0] = 0;
      out->ptx[ptx_size] = 0;
    }
  }
  nvrtcDestroyProgram(&prog);

  if (compile_parse_ptxas(out->log, out->lowered_name[0] ? out->lowered_name : NULL,
                          &out->report) != RT_OK) {
    char what[200];
    snprintf(what, sizeof what, "'%.120s' is not a kernel in the compiled code (no ptxas entry)",
             opt->entry ? opt->entry : "(first kernel)");
    free(out->cubin);
    free(out->ptx);
    out->cubin = NULL;
    out->cubin_size = 0;
    out->ptx = NULL;
    return compile_fail(out, err, RT_ERR_COMPILE, "%s", what);
  }
  if (!out->lowered_name[0]) {
    /* no entry named: the first kernel of the log */
    const char *hit = strstr(out->log, "Compiling entry function");
    if (hit)
      compile_quoted(hit, compile_line_end(hit), out->lowered_name, sizeof out->lowered_name);
  }
  out->status = RT_OK;
  return RT_OK;
}
