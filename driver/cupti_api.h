/* cupti_api.h — the few CUPTI entry points and parameter structures rooftune uses, declared in C.
 *
 * CUPTI's own headers cannot be included from C: cupti_profiler_host.h includes <string>.  So
 * the structures the profiler host API (metric lists, configuration images, evaluation of a
 * counter data image) and the range profiler (collection on the GPU) take are declared here
 * again, field for field, under rt_ names, and the functions are reached through dlsym
 * (driver/cupti.c).  tests/unit/test_cupti_abi.cpp, compiled as C++ against the real
 * headers, checks every structure's size and every field's offset, and each *_SIZE against the
 * real *_STRUCT_SIZE, so a toolkit that changes one fails a test instead of corrupting memory.
 * Layouts are those of CUPTI 13 (CUDA 13.0; CUPTI_API_VERSION 130001); every structure starts
 * with structSize, which CUPTI reads to know which fields a caller has.
 */
#ifndef ROOFTUNE_CUPTI_API_H
#define ROOFTUNE_CUPTI_API_H

#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

typedef int rt_cupti_result; /* CUptiResult */
#define RT_CUPTI_SUCCESS                       0
#define RT_CUPTI_ERROR_INVALID_PARAMETER       1
#define RT_CUPTI_ERROR_NOT_INITIALIZED         15
#define RT_CUPTI_ERROR_NOT_SUPPORTED           27
#define RT_CUPTI_ERROR_INSUFFICIENT_PRIVILEGES 35
#define RT_CUPTI_ERROR_UNKNOWN                 999

/* CUpti_MetricType */
enum { RT_CUPTI_METRIC_COUNTER = 0, RT_CUPTI_METRIC_RATIO = 1, RT_CUPTI_METRIC_THROUGHPUT = 2 };
/* CUpti_ProfilerType */
enum { RT_CUPTI_PROFILER_RANGE = 0 };
/* CUpti_ProfilerRange */
enum { RT_CUPTI_AUTO_RANGE = 1, RT_CUPTI_USER_RANGE = 2 };
/* CUpti_ProfilerReplayMode */
enum { RT_CUPTI_KERNEL_REPLAY = 2, RT_CUPTI_USER_REPLAY = 3 };

/* The end of a structure's last field, as CUPTI_PROFILER_STRUCT_SIZE computes it. */
#define RT_CUPTI_SIZE(type, last) (offsetof(type, last) + sizeof(((type *)0)->last))

/* ---- cupti_profiler_target.h, cupti_target.h ---- */

typedef struct rt_cupti_init_params { /* CUpti_Profiler_Initialize_Params */
  size_t structSize;
  void *pPriv;
} rt_cupti_init_params;
#define RT_CUPTI_INIT_SIZE RT_CUPTI_SIZE(rt_cupti_init_params, pPriv)

typedef struct rt_cupti_chip_params { /* CUpti_Device_GetChipName_Params */
  size_t structSize;
  void *pPriv;
  size_t deviceIndex;
  const char *pChipName;
} rt_cupti_chip_params;
#define RT_CUPTI_CHIP_SIZE RT_CUPTI_SIZE(rt_cupti_chip_params, pChipName)

typedef struct rt_cupti_availability_params { /* CUpti_Profiler_GetCounterAvailability_Params */
  size_t structSize;
  void *pPriv;
  void *ctx; /* CUcontext */
  size_t counterAvailabilityImageSize;
  uint8_t *pCounterAvailabilityImage;
} rt_cupti_availability_params;
#define RT_CUPTI_AVAILABILITY_SIZE \
  RT_CUPTI_SIZE(rt_cupti_availability_params, pCounterAvailabilityImage)

/* ---- cupti_profiler_host.h ---- */

typedef struct rt_cupti_host_object rt_cupti_host_object; /* CUpti_Profiler_Host_Object */

typedef struct rt_cupti_host_init_params { /* CUpti_Profiler_Host_Initialize_Params */
  size_t structSize;
  void *pPriv;
  int profilerType; /* CUpti_ProfilerType */
  const char *pChipName;
  const uint8_t *pCounterAvailabilityImage; /* NULL: the chip's own list */
  rt_cupti_host_object *pHostObject;        /* out */
} rt_cupti_host_init_params;
#define RT_CUPTI_HOST_INIT_SIZE RT_CUPTI_SIZE(rt_cupti_host_init_params, pHostObject)

typedef struct rt_cupti_host_deinit_params { /* CUpti_Profiler_Host_Deinitialize_Params */
  size_t structSize;
  void *pPriv;
  rt_cupti_host_object *pHostObject;
} rt_cupti_host_deinit_params;
#define RT_CUPTI_HOST_DEINIT_SIZE RT_CUPTI_SIZE(rt_cupti_host_deinit_params, pHostObject)

typedef struct rt_cupti_chips_params { /* CUpti_Profiler_Host_GetSupportedChips_Params */
  size_t structSize;
  void *pPriv;
  size_t numChips;                /* out */
  const char *const *ppChipNames; /* out */
} rt_cupti_chips_params;
#define RT_CUPTI_CHIPS_SIZE RT_CUPTI_SIZE(rt_cupti_chips_params, ppChipNames)

typedef struct rt_cupti_base_metrics_params { /* CUpti_Profiler_Host_GetBaseMetrics_Params */
  size_t structSize;
  void *pPriv;
  rt_cupti_host_object *pHostObject;
  int metricType;             /* CUpti_MetricType */
  const char **ppMetricNames; /* out */
  size_t numMetrics;          /* out */
} rt_cupti_base_metrics_params;
#define RT_CUPTI_BASE_METRICS_SIZE RT_CUPTI_SIZE(rt_cupti_base_metrics_params, numMetrics)

typedef struct rt_cupti_add_metrics_params { /* CUpti_Profiler_Host_ConfigAddMetrics_Params */
  size_t structSize;
  void *pPriv;
  rt_cupti_host_object *pHostObject;
  const char **ppMetricNames;
  size_t numMetrics;
} rt_cupti_add_metrics_params;
#define RT_CUPTI_ADD_METRICS_SIZE RT_CUPTI_SIZE(rt_cupti_add_metrics_params, numMetrics)

typedef struct rt_cupti_config_size_params { /* CUpti_Profiler_Host_GetConfigImageSize_Params */
  size_t structSize;
  void *pPriv;
  rt_cupti_host_object *pHostObject;
  size_t configImageSize; /* out */
} rt_cupti_config_size_params;
#define RT_CUPTI_CONFIG_SIZE_SIZE RT_CUPTI_SIZE(rt_cupti_config_size_params, configImageSize)

typedef struct rt_cupti_config_params { /* CUpti_Profiler_Host_GetConfigImage_Params */
  size_t structSize;
  void *pPriv;
  rt_cupti_host_object *pHostObject;
  size_t configImageSize;
  uint8_t *pConfigImage; /* out: the caller's buffer of configImageSize bytes */
} rt_cupti_config_params;
#define RT_CUPTI_CONFIG_SIZE RT_CUPTI_SIZE(rt_cupti_config_params, pConfigImage)

typedef struct rt_cupti_passes_params { /* CUpti_Profiler_Host_GetNumOfPasses_Params */
  size_t structSize;
  void *pPriv;
  size_t configImageSize;
  uint8_t *pConfigImage;
  size_t numOfPasses; /* out */
} rt_cupti_passes_params;
#define RT_CUPTI_PASSES_SIZE RT_CUPTI_SIZE(rt_cupti_passes_params, numOfPasses)

typedef struct rt_cupti_evaluate_params { /* CUpti_Profiler_Host_EvaluateToGpuValues_Params */
  size_t structSize;
  void *pPriv;
  rt_cupti_host_object *pHostObject;
  const uint8_t *pCounterDataImage;
  size_t counterDataImageSize;
  size_t rangeIndex;
  const char **ppMetricNames;
  size_t numMetrics;
  double *pMetricValues; /* out: numMetrics values */
} rt_cupti_evaluate_params;
#define RT_CUPTI_EVALUATE_SIZE RT_CUPTI_SIZE(rt_cupti_evaluate_params, pMetricValues)

/* ---- cupti_range_profiler.h ---- */

typedef struct rt_cupti_range_object rt_cupti_range_object; /* CUpti_RangeProfiler_Object */

typedef struct rt_cupti_enable_params { /* CUpti_RangeProfiler_Enable_Params */
  size_t structSize;
  void *pPriv;
  void *ctx;                                   /* CUcontext */
  rt_cupti_range_object *pRangeProfilerObject; /* out */
} rt_cupti_enable_params;
#define RT_CUPTI_ENABLE_SIZE RT_CUPTI_SIZE(rt_cupti_enable_params, pRangeProfilerObject)

/* CUpti_RangeProfiler_Disable_Params, _Start_Params, _PopRange_Params: the object alone */
typedef struct rt_cupti_object_params {
  size_t structSize;
  void *pPriv;
  rt_cupti_range_object *pRangeProfilerObject;
} rt_cupti_object_params;
#define RT_CUPTI_OBJECT_SIZE RT_CUPTI_SIZE(rt_cupti_object_params, pRangeProfilerObject)

typedef struct rt_cupti_push_params { /* CUpti_RangeProfiler_PushRange_Params */
  size_t structSize;
  void *pPriv;
  rt_cupti_range_object *pRangeProfilerObject;
  const char *pRangeName;
} rt_cupti_push_params;
#define RT_CUPTI_PUSH_SIZE RT_CUPTI_SIZE(rt_cupti_push_params, pRangeName)

typedef struct rt_cupti_stop_params { /* CUpti_RangeProfiler_Stop_Params */
  size_t structSize;
  void *pPriv;
  rt_cupti_range_object *pRangeProfilerObject;
  size_t passIndex;           /* out */
  size_t targetNestingLevel;  /* out */
  uint8_t isAllPassSubmitted; /* out */
} rt_cupti_stop_params;
#define RT_CUPTI_STOP_SIZE RT_CUPTI_SIZE(rt_cupti_stop_params, isAllPassSubmitted)

typedef struct rt_cupti_set_config_params { /* CUpti_RangeProfiler_SetConfig_Params */
  size_t structSize;
  void *pPriv;
  rt_cupti_range_object *pRangeProfilerObject;
  size_t configSize;
  const uint8_t *pConfig;
  size_t counterDataImageSize;
  uint8_t *pCounterDataImage;
  int range;      /* CUpti_ProfilerRange */
  int replayMode; /* CUpti_ProfilerReplayMode */
  size_t maxRangesPerPass;
  uint16_t numNestingLevels;
  uint16_t minNestingLevel;
  size_t passIndex;
  uint16_t targetNestingLevel;
} rt_cupti_set_config_params;
#define RT_CUPTI_SET_CONFIG_SIZE RT_CUPTI_SIZE(rt_cupti_set_config_params, targetNestingLevel)

typedef struct rt_cupti_decode_params { /* CUpti_RangeProfiler_DecodeData_Params */
  size_t structSize;
  void *pPriv;
  rt_cupti_range_object *pRangeProfilerObject;
  size_t numOfRangeDropped; /* out */
} rt_cupti_decode_params;
#define RT_CUPTI_DECODE_SIZE RT_CUPTI_SIZE(rt_cupti_decode_params, numOfRangeDropped)

typedef struct rt_cupti_data_size_params { /* CUpti_RangeProfiler_GetCounterDataSize_Params */
  size_t structSize;
  void *pPriv;
  rt_cupti_range_object *pRangeProfilerObject;
  const char **pMetricNames;
  size_t numMetrics;
  size_t maxNumOfRanges;
  uint32_t maxNumRangeTreeNodes;
  size_t counterDataSize; /* out */
} rt_cupti_data_size_params;
#define RT_CUPTI_DATA_SIZE_SIZE RT_CUPTI_SIZE(rt_cupti_data_size_params, counterDataSize)

typedef struct
    rt_cupti_data_init_params { /* CUpti_RangeProfiler_CounterDataImage_Initialize_Params */
  size_t structSize;
  void *pPriv;
  rt_cupti_range_object *pRangeProfilerObject;
  size_t counterDataSize;
  uint8_t *pCounterData;
} rt_cupti_data_init_params;
#define RT_CUPTI_DATA_INIT_SIZE RT_CUPTI_SIZE(rt_cupti_data_init_params, pCounterData)

typedef struct rt_cupti_data_info_params { /* CUpti_RangeProfiler_GetCounterDataInfo_Params */
  size_t structSize;
  void *pPriv;
  const uint8_t *pCounterDataImage;
  size_t counterDataImageSize;
  size_t numTotalRanges; /* out */
} rt_cupti_data_info_params;
#define RT_CUPTI_DATA_INFO_SIZE RT_CUPTI_SIZE(rt_cupti_data_info_params, numTotalRanges)

/* Every entry point, with the real header's name and this file's parameter type. */
#define RT_CUPTI_FUNCS(X)                                                        \
  X(cuptiGetResultString, (rt_cupti_result, const char **))                      \
  X(cuptiProfilerInitialize, (rt_cupti_init_params *))                           \
  X(cuptiDeviceGetChipName, (rt_cupti_chip_params *))                            \
  X(cuptiProfilerGetCounterAvailability, (rt_cupti_availability_params *))       \
  X(cuptiProfilerHostInitialize, (rt_cupti_host_init_params *))                  \
  X(cuptiProfilerHostDeinitialize, (rt_cupti_host_deinit_params *))              \
  X(cuptiProfilerHostGetSupportedChips, (rt_cupti_chips_params *))               \
  X(cuptiProfilerHostGetBaseMetrics, (rt_cupti_base_metrics_params *))           \
  X(cuptiProfilerHostConfigAddMetrics, (rt_cupti_add_metrics_params *))          \
  X(cuptiProfilerHostGetConfigImageSize, (rt_cupti_config_size_params *))        \
  X(cuptiProfilerHostGetConfigImage, (rt_cupti_config_params *))                 \
  X(cuptiProfilerHostGetNumOfPasses, (rt_cupti_passes_params *))                 \
  X(cuptiProfilerHostEvaluateToGpuValues, (rt_cupti_evaluate_params *))          \
  X(cuptiRangeProfilerEnable, (rt_cupti_enable_params *))                        \
  X(cuptiRangeProfilerDisable, (rt_cupti_object_params *))                       \
  X(cuptiRangeProfilerSetConfig, (rt_cupti_set_config_params *))                 \
  X(cuptiRangeProfilerStart, (rt_cupti_object_params *))                         \
  X(cuptiRangeProfilerStop, (rt_cupti_stop_params *))                            \
  X(cuptiRangeProfilerPushRange, (rt_cupti_push_params *))                       \
  X(cuptiRangeProfilerPopRange, (rt_cupti_object_params *))                      \
  X(cuptiRangeProfilerDecodeData, (rt_cupti_decode_params *))                    \
  X(cuptiRangeProfilerGetCounterDataSize, (rt_cupti_data_size_params *))         \
  X(cuptiRangeProfilerCounterDataImageInitialize, (rt_cupti_data_init_params *)) \
  X(cuptiRangeProfilerGetCounterDataInfo, (rt_cupti_data_info_params *))

#ifdef __cplusplus
}
#endif

#endif
