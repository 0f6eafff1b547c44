/* compile.h — one CUDA C++ source text to a cubin with NVRTC, and the resource facts ptxas
 * reports for its kernel, without a GPU.
 *
 * The text is complete: a template's `#define NAME value` prefix, `#line 1` and the template
 * source (manifest_source_prefix builds the prefix).  It is compiled for one real architecture
 * (sm_75, sm_80, sm_86, sm_89, sm_90, sm_90a) with -std=c++17, -default-device and
 * --ptxas-options=-v and --no-cache (a hit in the compute cache NVRTC shares with the driver
 * would skip ptxas and its report); NVRTC 13 finds no headers on its own (not even
 * <cuda_fp16.h>), so the toolkit's include folder and its cccl/ folder (<cuda/barrier>,
 * <cuda/pipeline>) are passed, plus the caller's folders (the template's own, for shared
 * headers).  The toolkit folder is $CUDA_HOME/include, else $CUDA_PATH/include, else the one
 * rooftune was built against.
 *
 * The kernel is named by `entry`: an extern "C" name ("gemm_simt") or a C++ name expression
 * ("gemm<128, 64>", "ns::kern"); it goes through nvrtcAddNameExpression, so both work, and the
 * result carries the lowered (mangled) name to load from the cubin.
 *
 * A compile error is data: the result's status is RT_ERR_COMPILE and the log says why.  The
 * ptxas report is parsed by compile_parse_ptxas, a pure function over the log text.
 *
 * Precompiled headers (opt.pch): NVRTC's automatic PCH refuses to build a header set that is
 * followed by a #line directive inside the header region, and the #define prefix differs per
 * configuration, so as written a template never gets a PCH.  With pch set, the text compiled is
 * the source's `#include <...>` lines (system headers only, in order), then a declaration that
 * ends the header region, then the unchanged text: the PCH covers the system headers, is the same
 * for every configuration of a template, and NVRTC keeps it in its in-process PCH heap, so it
 * pays from the second compile in a process on.  A source without system includes compiles as
 * if pch were off (nothing to precompile; the GEMM templates use inline PTX and include only a
 * header of their own, which may read the configuration's macros and so cannot be shared).
 * Measured (bench/bench_compile.c, 2-core machine, NVRTC 13.0, 9 configurations, 1 worker): a
 * template that includes <cuda/barrier> and <cuda/pipeline> took 10.4 s without PCH and 2.9 s
 * with it (3.5x); one that includes only <cuda_fp16.h> gained 0.78 s -> 0.57 s.  In one process
 * the heavy-header compile went from 0.83 s to 0.15 s once the PCH existed (creating it: 1.4 s).
 * Explicit PCH files (-create-pch / -use-pch), which could be shared between processes, do not
 * pay: the file is 134 MB and a compile that reads it took 3.9 s against 2.3 s without PCH.
 */
#ifndef ROOFTUNE_COMPILE_H
#define ROOFTUNE_COMPILE_H

#include <stddef.h>

#include "core/status.h"

#define COMPILE_MAX_INCLUDES 8
#define COMPILE_MAX_EXTRA    8

typedef struct compile_options {
  const char *arch;  /* "sm_80", "sm_86", "sm_89", "sm_90" or "sm_90a" */
  const char *entry; /* kernel name or C++ name expression; NULL: the first kernel */
  const char *include_dirs[COMPILE_MAX_INCLUDES]; /* extra -I folders (the template's own) */
  int include_count;                              /* entries used in include_dirs */
  const char *extra[COMPILE_MAX_EXTRA];           /* more NVRTC options, e.g. "-maxrregcount=128" */
  int extra_count;                                /* entries used in extra */
  int want_ptx;                                   /* 1: keep the PTX as well as the cubin */
  int pch;             /* 1: precompile the source's system headers (see above) */
  const char *pch_dir; /* with pch: the folder NVRTC keeps its PCH file in (-pch-dir); NULL:
                           * its own /tmp/__nvrtc_auto_pch_PID_N, which only a normal exit of
                           * the process removes.  Not part of the cache key. */
} compile_options;

/* What ptxas -v says about one kernel. */
typedef struct ptxas_report {
  int found;        /* 1 when the kernel's lines were in the log */
  int registers;    /* per thread */
  int smem_static;  /* bytes of static __shared__ ("smem") */
  int spill_stores; /* bytes of spill stores */
  int spill_loads;  /* bytes of spill loads */
  int stack_bytes;  /* stack frame bytes */
  int cmem0;        /* bytes of constant bank 0 (kernel parameters); 0 when not printed */
  int barriers;     /* named barriers used; 0 when not printed */
} ptxas_report;

typedef struct compile_result {
  int status;             /* RT_OK, RT_ERR_COMPILE, RT_ERR_NVRTC, RT_ERR_CRASH, RT_ERR_TIMEOUT */
  char message[256];      /* one line on a failure (the first error, the signal); "" on success */
  char *log;              /* NVRTC's whole log, NUL-terminated, never NULL after a compile */
  unsigned char *cubin;   /* the cubin; NULL on failure */
  size_t cubin_size;      /* its bytes */
  char *ptx;              /* the PTX when want_ptx, else NULL */
  char lowered_name[256]; /* the kernel's symbol in the cubin */
  ptxas_report report;    /* parsed from the log */
  double seconds;         /* wall time of this compile; 0 for a cache hit */
  int cache_hit;          /* 1 when the result came from the cubin cache */
} compile_result;

/* "sm_75, sm_80, sm_86, sm_89, sm_90, sm_90a": the targets rooftune compiles for. */
const char *compile_arch_list(void);
/* 1 when arch is one of those. */
int compile_arch_valid(const char *arch);
/* The toolkit include folder handed to NVRTC (see above). */
const char *compile_cuda_include_dir(void);

/* Compiles `source` (named `name` in messages, e.g. "gemm_mma.cu") into *out, which the caller
 * frees with compile_result_free.  Returns out->status; err gets the same one-line message.
 * Bad options (unknown arch) return RT_ERR_INVALID without compiling. */
rt_status compile_source(const char *source, const char *name, const compile_options *opt,
                         compile_result *out, rt_error *err);
void compile_result_free(compile_result *r);
/* Deep copy (for handing a result on while keeping one). */
rt_status compile_result_copy(compile_result *dst, const compile_result *src);

/* The NVRTC option list compile_source uses: *argc strings into argv (each a malloc'd copy in
 * one block owned by *storage; free(*storage) releases all of it). */
rt_status compile_build_options(const compile_options *opt, const char ***argv, int *argc,
                                char **storage, rt_error *err);

/* Digest of everything but the source and the files it includes that decides the output:
 * NVRTC's version, the option list (the toolkit's include folders among them), the entry and
 * want_ptx.  It reads no file.  Compute it once per run. */
rt_status compile_options_digest(const compile_options *opt, unsigned char digest[32],
                                 rt_error *err);

/* What compile_key looked at: the #include lines followed, the places tried in vain, the files
 * found and the bytes of those it read. */
typedef struct compile_deps_stats {
  int includes;
  int misses;
  int files;
  long long bytes;
  /* set by the caller (kept by compile_key): called with each file found, or NULL */
  void (*found)(void *ctx, const char *path, int toolkit);
  void *ctx;
} compile_deps_stats;

/* The cubin cache's key of one compile (content addressed): the options digest, the program's
 * name (its folder is where NVRTC starts a quoted include of the main text: the process's
 * working folder for a bare name like "gemm_mma.cu"; __FILE__), the text, and every include
 * lookup as NVRTC makes it (NVRTC 13 reports no dependencies itself: -M, -MD, -MF and
 * --dependency-output are unknown options).  An `#include "x"` is looked for in the including
 * file's folder, then in the -I folders in order (the toolkit's, its cccl/, the caller's
 * include_dirs, -I/--include-path in extra); an `#include <x>` in the -I folders only; only the
 * including file's own folder, never those of the files that included it (measured with
 * NVRTC's -fdevice-time-trace, which names the headers it opened; test_compile_deps holds this
 * scan to that list).  Each place tried is keyed: a miss by its path, the file found by its
 * path and the SHA-256 of its bytes (then its own includes, each file once), a header of the
 * toolkit by its path, size and modification time (not read: it is NVRTC's release).  Every
 * #include line counts, whatever #if it sits in, so a key is never short of a file a
 * configuration reads, and a header that appears, moves or changes moves the key (a compile
 * error from a missing header is keyed by the miss and never served once the file is there).
 * Only regular files are read: a FIFO, a device or a link to one that a lookup finds is
 * refused by its path (RT_ERR_IO) before NVRTC would block on it, and an #include whose name is
 * a macro is refused (RT_ERR_UNSUPPORTED).  stats may be NULL.  On an error key is zeroed. */
rt_status compile_key(const unsigned char options_digest[32], const compile_options *opt,
                      const char *name, const char *source, unsigned char key[32],
                      compile_deps_stats *stats, rt_error *err);

/* Parses a ptxas -v log for kernel `entry` (its lowered name; NULL: the first kernel in the
 * log).  Returns RT_OK and report->found = 1, or RT_ERR_NOT_FOUND when the kernel is absent. */
rt_status compile_parse_ptxas(const char *log, const char *entry, ptxas_report *report);

#endif
