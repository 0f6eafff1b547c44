/* cudnn.h — cuDNN 9, loaded at run time.
 *
 * rooftune never links cuDNN and builds without its headers: cudnn_load() dlopen()s
 * libcudnn.so.9 on first use and fills the table `dnn` below, so a machine without cuDNN only
 * loses the cuDNN library candidates (the attention family's, kernels/attention_cudnn.h).  The
 * library is looked for, in order, in
 *   1. $ROOFTUNE_LIBCUDNN: the library file itself or the folder holding it (nothing else is
 *      tried when it is set, so a wrong value is an error, not a silent fallback),
 *   2. the loader's default paths (LD_LIBRARY_PATH, the ld.so cache),
 *   3. the CUDA toolkit's lib folders ($CUDA_HOME, $CUDA_PATH, /usr/local/cuda and the toolkit
 *      rooftune was built with),
 *   4. the nvidia/cudnn/lib folder of the Python wheel (nvidia-cudnn-cu12 / -cu13) in the
 *      site-packages of the python3 on PATH.
 * cuDNN's sub-libraries (libcudnn_graph, libcudnn_engines_*, libcudnn_heuristic) are opened by
 * libcudnn.so.9 itself, found beside it through its RUNPATH ($ORIGIN) even when that folder is
 * on no loader path.  Where dlopen's caller is not cuDNN (AddressSanitizer's interceptor) that
 * lookup fails, so when the library came from a folder of 1, 3 or 4 the loader opens the four
 * the graph API uses from that folder first (tests/unit/test_cudnn_loader.c checks both).
 *
 * Only the backend ("graph") API is used: descriptors created, attributes set, finalized and
 * executed.  Its constants are declared here (CUDNN_CONSTANTS, with the values of cuDNN 9's
 * cudnn_graph.h, which NVIDIA keeps stable within a major version) unless the official header
 * was included first; the loader test compares every value with the installed header when
 * there is one.  Enumerations travel as int.
 */
#ifndef ROOFTUNE_CUDNN_H
#define ROOFTUNE_CUDNN_H

#include <cuda.h>
#include <stddef.h>
#include <stdint.h>

#include "core/status.h"

/* The constants rooftune uses, X(NAME, VALUE). */
#define CUDNN_CONSTANTS(X)                                       \
  /* cudnnStatus_t */                                            \
  X(CUDNN_STATUS_SUCCESS, 0)                                     \
  X(CUDNN_STATUS_NOT_INITIALIZED, 1001)                          \
  X(CUDNN_STATUS_BAD_PARAM, 2000)                                \
  X(CUDNN_STATUS_NOT_SUPPORTED, 3000)                            \
  X(CUDNN_STATUS_INTERNAL_ERROR, 4000)                           \
  X(CUDNN_STATUS_EXECUTION_FAILED, 5000)                         \
  /* cudnnDataType_t */                                          \
  X(CUDNN_DATA_FLOAT, 0)                                         \
  X(CUDNN_DATA_HALF, 2)                                          \
  X(CUDNN_DATA_INT32, 4)                                         \
  X(CUDNN_DATA_BFLOAT16, 9)                                      \
  X(CUDNN_DATA_BOOLEAN, 11)                                      \
  /* cudnnPointwiseMode_t */                                     \
  X(CUDNN_POINTWISE_ADD, 0)                                      \
  X(CUDNN_POINTWISE_MUL, 1)                                      \
  X(CUDNN_POINTWISE_DIV, 6)                                      \
  X(CUDNN_POINTWISE_SUB, 9)                                      \
  X(CUDNN_POINTWISE_EXP, 13)                                     \
  X(CUDNN_POINTWISE_LOG, 15)                                     \
  X(CUDNN_POINTWISE_CMP_GE, 303)                                 \
  X(CUDNN_POINTWISE_CMP_LT, 304)                                 \
  X(CUDNN_POINTWISE_LOGICAL_AND, 400)                            \
  X(CUDNN_POINTWISE_GEN_INDEX, 501)                              \
  X(CUDNN_POINTWISE_BINARY_SELECT, 601)                          \
  /* cudnnReduceTensorOp_t */                                    \
  X(CUDNN_REDUCE_TENSOR_ADD, 0)                                  \
  X(CUDNN_REDUCE_TENSOR_MAX, 3)                                  \
  /* cudnnBackendHeurMode_t */                                   \
  X(CUDNN_HEUR_MODE_INSTANT, 0)                                  \
  X(CUDNN_HEUR_MODE_B, 1)                                        \
  X(CUDNN_HEUR_MODE_FALLBACK, 2)                                 \
  X(CUDNN_HEUR_MODE_A, 3)                                        \
  /* cudnnBackendAttributeType_t */                              \
  X(CUDNN_TYPE_HANDLE, 0)                                        \
  X(CUDNN_TYPE_DATA_TYPE, 1)                                     \
  X(CUDNN_TYPE_BOOLEAN, 2)                                       \
  X(CUDNN_TYPE_INT64, 3)                                         \
  X(CUDNN_TYPE_FLOAT, 4)                                         \
  X(CUDNN_TYPE_DOUBLE, 5)                                        \
  X(CUDNN_TYPE_VOID_PTR, 6)                                      \
  X(CUDNN_TYPE_HEUR_MODE, 8)                                     \
  X(CUDNN_TYPE_KNOB_TYPE, 9)                                     \
  X(CUDNN_TYPE_POINTWISE_MODE, 14)                               \
  X(CUDNN_TYPE_BACKEND_DESCRIPTOR, 15)                           \
  X(CUDNN_TYPE_REDUCTION_OPERATOR_TYPE, 18)                      \
  X(CUDNN_TYPE_INT32, 23)                                        \
  X(CUDNN_TYPE_CHAR, 24)                                         \
  /* cudnnBackendDescriptorType_t */                             \
  X(CUDNN_BACKEND_POINTWISE_DESCRIPTOR, 0)                       \
  X(CUDNN_BACKEND_ENGINE_DESCRIPTOR, 2)                          \
  X(CUDNN_BACKEND_ENGINECFG_DESCRIPTOR, 3)                       \
  X(CUDNN_BACKEND_ENGINEHEUR_DESCRIPTOR, 4)                      \
  X(CUDNN_BACKEND_EXECUTION_PLAN_DESCRIPTOR, 5)                  \
  X(CUDNN_BACKEND_KNOB_CHOICE_DESCRIPTOR, 7)                     \
  X(CUDNN_BACKEND_OPERATION_POINTWISE_DESCRIPTOR, 13)            \
  X(CUDNN_BACKEND_OPERATIONGRAPH_DESCRIPTOR, 15)                 \
  X(CUDNN_BACKEND_VARIANT_PACK_DESCRIPTOR, 16)                   \
  X(CUDNN_BACKEND_TENSOR_DESCRIPTOR, 17)                         \
  X(CUDNN_BACKEND_MATMUL_DESCRIPTOR, 18)                         \
  X(CUDNN_BACKEND_OPERATION_MATMUL_DESCRIPTOR, 19)               \
  X(CUDNN_BACKEND_REDUCTION_DESCRIPTOR, 21)                      \
  X(CUDNN_BACKEND_OPERATION_REDUCTION_DESCRIPTOR, 22)            \
  X(CUDNN_BACKEND_OPERATION_PAGED_CACHE_LOAD_DESCRIPTOR, 35)     \
  X(CUDNN_BACKEND_DEVICEPROP_DESCRIPTOR, 38)                     \
  /* cudnnBackendAttributeName_t */                              \
  X(CUDNN_ATTR_POINTWISE_MODE, 0)                                \
  X(CUDNN_ATTR_POINTWISE_MATH_PREC, 1)                           \
  X(CUDNN_ATTR_POINTWISE_AXIS, 9)                                \
  X(CUDNN_ATTR_ENGINEHEUR_MODE, 200)                             \
  X(CUDNN_ATTR_ENGINEHEUR_OPERATION_GRAPH, 201)                  \
  X(CUDNN_ATTR_ENGINEHEUR_RESULTS, 202)                          \
  X(CUDNN_ATTR_ENGINEHEUR_DEVICEPROP, 204)                       \
  X(CUDNN_ATTR_ENGINECFG_ENGINE, 300)                            \
  X(CUDNN_ATTR_ENGINECFG_KNOB_CHOICES, 302)                      \
  X(CUDNN_ATTR_EXECUTION_PLAN_HANDLE, 400)                       \
  X(CUDNN_ATTR_EXECUTION_PLAN_ENGINE_CONFIG, 401)                \
  X(CUDNN_ATTR_EXECUTION_PLAN_WORKSPACE_SIZE, 402)               \
  X(CUDNN_ATTR_EXECUTION_PLAN_DEVICEPROP, 407)                   \
  X(CUDNN_ATTR_KNOB_CHOICE_KNOB_TYPE, 600)                       \
  X(CUDNN_ATTR_KNOB_CHOICE_KNOB_VALUE, 601)                      \
  X(CUDNN_ATTR_OPERATION_POINTWISE_PW_DESCRIPTOR, 750)           \
  X(CUDNN_ATTR_OPERATION_POINTWISE_XDESC, 751)                   \
  X(CUDNN_ATTR_OPERATION_POINTWISE_BDESC, 752)                   \
  X(CUDNN_ATTR_OPERATION_POINTWISE_YDESC, 753)                   \
  X(CUDNN_ATTR_OPERATION_POINTWISE_ALPHA1, 754)                  \
  X(CUDNN_ATTR_OPERATION_POINTWISE_ALPHA2, 755)                  \
  X(CUDNN_ATTR_OPERATION_POINTWISE_TDESC, 758)                   \
  X(CUDNN_ATTR_OPERATIONGRAPH_HANDLE, 800)                       \
  X(CUDNN_ATTR_OPERATIONGRAPH_OPS, 801)                          \
  X(CUDNN_ATTR_OPERATIONGRAPH_ENGINE_GLOBAL_COUNT, 802)          \
  X(CUDNN_ATTR_TENSOR_BYTE_ALIGNMENT, 900)                       \
  X(CUDNN_ATTR_TENSOR_DATA_TYPE, 901)                            \
  X(CUDNN_ATTR_TENSOR_DIMENSIONS, 902)                           \
  X(CUDNN_ATTR_TENSOR_STRIDES, 903)                              \
  X(CUDNN_ATTR_TENSOR_UNIQUE_ID, 906)                            \
  X(CUDNN_ATTR_TENSOR_IS_VIRTUAL, 907)                           \
  X(CUDNN_ATTR_TENSOR_IS_BY_VALUE, 908)                          \
  X(CUDNN_ATTR_VARIANT_PACK_UNIQUE_IDS, 1000)                    \
  X(CUDNN_ATTR_VARIANT_PACK_DATA_POINTERS, 1001)                 \
  X(CUDNN_ATTR_VARIANT_PACK_WORKSPACE, 1003)                     \
  X(CUDNN_ATTR_ENGINE_OPERATION_GRAPH, 1300)                     \
  X(CUDNN_ATTR_ENGINE_GLOBAL_INDEX, 1301)                        \
  X(CUDNN_ATTR_ENGINE_DEVICEPROP, 1307)                          \
  X(CUDNN_ATTR_MATMUL_COMP_TYPE, 1500)                           \
  X(CUDNN_ATTR_OPERATION_MATMUL_ADESC, 1520)                     \
  X(CUDNN_ATTR_OPERATION_MATMUL_BDESC, 1521)                     \
  X(CUDNN_ATTR_OPERATION_MATMUL_CDESC, 1522)                     \
  X(CUDNN_ATTR_OPERATION_MATMUL_DESC, 1523)                      \
  X(CUDNN_ATTR_OPERATION_MATMUL_GEMM_M_OVERRIDE_DESC, 1525)      \
  X(CUDNN_ATTR_OPERATION_MATMUL_GEMM_N_OVERRIDE_DESC, 1526)      \
  X(CUDNN_ATTR_OPERATION_MATMUL_GEMM_K_OVERRIDE_DESC, 1527)      \
  X(CUDNN_ATTR_REDUCTION_OPERATOR, 1600)                         \
  X(CUDNN_ATTR_REDUCTION_COMP_TYPE, 1601)                        \
  X(CUDNN_ATTR_REDUCTION_IS_DETERMINISTIC, 1602)                 \
  X(CUDNN_ATTR_OPERATION_REDUCTION_XDESC, 1610)                  \
  X(CUDNN_ATTR_OPERATION_REDUCTION_YDESC, 1611)                  \
  X(CUDNN_ATTR_OPERATION_REDUCTION_DESC, 1612)                   \
  X(CUDNN_ATTR_OPERATION_PAGED_CACHE_LOAD_CONTAINER_DESC, 1950)  \
  X(CUDNN_ATTR_OPERATION_PAGED_CACHE_LOAD_YDESC, 1951)           \
  X(CUDNN_ATTR_OPERATION_PAGED_CACHE_LOAD_SEQUENCE_DESC, 1952)   \
  X(CUDNN_ATTR_OPERATION_PAGED_CACHE_LOAD_PAGE_TABLE_DESC, 1953) \
  X(CUDNN_ATTR_DEVICEPROP_DEVICE_ID, 2700)                       \
  X(CUDNN_ATTR_DEVICEPROP_HANDLE, 2701)                          \
  X(CUDNN_ATTR_DEVICEPROP_JSON_REPRESENTATION, 2702)             \
  /* cudnnBackendKnobType_t: the last one is the count */        \
  X(CUDNN_KNOB_TYPE_COUNTS, 44)

/* cudnnBackendKnobType_t's names (without CUDNN_KNOB_TYPE_), X(NAME, VALUE): the identity text
 * of a cuDNN candidate names its knobs by them (a table: several to a line, unformatted). */
// clang-format off
#define CUDNN_KNOB_TYPES(X)                                                                    \
  X(SPLIT_K, 0) X(SWIZZLE, 1) X(TILE_SIZE, 2) X(USE_TEX, 3) X(EDGE, 4) X(KBLOCK, 5)            \
  X(LDGA, 6) X(LDGB, 7) X(CHUNK_K, 8) X(SPLIT_H, 9) X(WINO_TILE, 10) X(MULTIPLY, 11)           \
  X(SPLIT_K_BUF, 12) X(TILEK, 13) X(STAGES, 14) X(REDUCTION_MODE, 15) X(CTA_SPLIT_K_MODE, 16)  \
  X(SPLIT_K_SLC, 17) X(IDX_MODE, 18) X(SLICED, 19) X(SPLIT_RS, 20) X(SINGLEBUFFER, 21)         \
  X(LDGC, 22) X(SPECFILT, 23) X(KERNEL_CFG, 24) X(WORKSPACE, 25) X(TILE_CGA, 26)               \
  X(TILE_CGA_M, 27) X(TILE_CGA_N, 28) X(BLOCK_SIZE, 29) X(OCCUPANCY, 30)                       \
  X(ARRAY_SIZE_PER_THREAD, 31) X(NUM_C_PER_BLOCK, 32) X(SPLIT_COLS, 33) X(TILE_ROWS, 34)       \
  X(TILE_COLS, 35) X(LOAD_SIZE, 36) X(CTA_COUNT, 37) X(STREAM_K, 38) X(SPLIT_P_SLC, 39)        \
  X(TILE_M, 40) X(TILE_N, 41) X(WARP_SPEC_CFG, 42) X(SWAP_AB, 43)
// clang-format on

#ifndef CUDNN_MAJOR /* the official header was not included: declare what we use */
typedef void *cudnnBackendDescriptor_t;
typedef struct cudnnContext *cudnnHandle_t;
enum {
#define CUDNN_CONSTANT_ENUM(name, value) name = value,
  CUDNN_CONSTANTS(CUDNN_CONSTANT_ENUM)
#undef CUDNN_CONSTANT_ENUM
};
#endif

/* The entry points, X(RETURN, NAME, ARGS), with cuDNN 9's signatures (enumerations as int). */
#define CUDNN_FUNCS(X)                                                                          \
  X(size_t, cudnnGetVersion, (void))                                                            \
  X(size_t, cudnnGetCudartVersion, (void))                                                      \
  X(const char *, cudnnGetErrorString, (int))                                                   \
  X(void, cudnnGetLastErrorString, (char *, size_t))                                            \
  X(int, cudnnCreate, (cudnnHandle_t *))                                                        \
  X(int, cudnnDestroy, (cudnnHandle_t))                                                         \
  X(int, cudnnSetStream, (cudnnHandle_t, CUstream))                                             \
  X(int, cudnnBackendCreateDescriptor, (int, cudnnBackendDescriptor_t *))                       \
  X(int, cudnnBackendDestroyDescriptor, (cudnnBackendDescriptor_t))                             \
  X(int, cudnnBackendFinalize, (cudnnBackendDescriptor_t))                                      \
  X(int, cudnnBackendSetAttribute, (cudnnBackendDescriptor_t, int, int, int64_t, const void *)) \
  X(int, cudnnBackendGetAttribute,                                                              \
    (cudnnBackendDescriptor_t const, int, int, int64_t, int64_t *, void *))                     \
  X(int, cudnnBackendExecute, (cudnnHandle_t, cudnnBackendDescriptor_t, cudnnBackendDescriptor_t))

typedef struct cudnn_lib {
#define CUDNN_FIELD(ret, name, args) ret(*name) args;
  CUDNN_FUNCS(CUDNN_FIELD)
#undef CUDNN_FIELD
  void *handle;    /* dlopen handle; NULL until loaded */
  char path[1024]; /* the file that was loaded */
  int version;     /* cudnnGetVersion(): 91900 for 9.19.0 */
} cudnn_lib;

/* The loaded table; valid after cudnn_load() returned RT_OK. */
extern cudnn_lib dnn;

/* Loads libcudnn.so.9 from the places above, once (later calls return the first answer).
 * RT_ERR_UNSUPPORTED "cuDNN not found (looked in ...)" when it is nowhere, or when the library
 * found lacks an entry point or is not cuDNN 9. */
rt_status cudnn_load(rt_error *err);

/* The folders searched after the loader's default paths, in order (at most max, no
 * duplicates): the toolkit's lib folders, then SITE/nvidia/cudnn/lib for every site-packages
 * folder of the python3 on PATH (its user site included).  Returns how many. */
int cudnn_search_folders(char (*out)[1024], int max);

/* Sets err from a cuDNN status: "WHAT: CUDNN_STATUS_... (cuDNN's last error message)".  A
 * CUDNN_STATUS_NOT_SUPPORTED* status is RT_ERR_UNSUPPORTED, any other RT_ERR_INTERNAL (a bad
 * parameter means rooftune built a wrong descriptor) or, for CUDNN_STATUS_EXECUTION_FAILED*,
 * RT_ERR_LAUNCH. */
rt_status cudnn_check(int status, const char *what, rt_error *err);

/* cuDNN's last error message (cudnnGetLastErrorString) flattened to one line in buf ("" when
 * cuDNN is not loaded or has nothing to say). */
void cudnn_last_error(char *buf, size_t size);

/* "9.19.0" for 91900 (major*10000 + minor*100 + patch, cuDNN 9's numbering). */
void cudnn_version_text(int version, char *buf, size_t size);

#endif
