// test_cupti_abi.cpp — rooftune declares the CUPTI structures it uses in C
// (driver/cupti_api.h, because CUPTI's host header needs C++); this test, compiled as C++
// against the toolkit's real headers, checks that every structure has the real one's size,
// every field its offset and size, every *_SIZE the real *_STRUCT_SIZE, and the enum values
// rooftune passes the real ones.  It needs no GPU and no libcupti: everything is compile-time
// layout, checked at run time so each mismatch is reported by name.
#include <cupti.h>
#include <cupti_profiler_host.h>
#include <cupti_profiler_target.h>
#include <cupti_range_profiler.h>
#include <cupti_target.h>

#include <cstddef>
#include <cstdio>

#include "driver/cupti_api.h"

static int failures = 0, checks = 0;

static void check(bool ok, const char *what, size_t got, size_t want) {
  checks++;
  if (!ok) {
    failures++;
    std::printf("FAIL %s: rooftune %zu, CUPTI %zu\n", what, got, want);
  }
}

#define SAME_SIZE(ours, real) check(sizeof(ours) == sizeof(real), "sizeof " #ours, sizeof(ours), sizeof(real))
#define SAME_FIELD(ours, real, field)                                                          \
  do {                                                                                         \
    check(offsetof(ours, field) == offsetof(real, field), "offsetof " #ours "." #field,       \
          offsetof(ours, field), offsetof(real, field));                                      \
    check(sizeof(((ours *)0)->field) == sizeof(((real *)0)->field), "sizeof " #ours "." #field, \
          sizeof(((ours *)0)->field), sizeof(((real *)0)->field));                             \
  } while (0)
#define SAME_STRUCT_SIZE(ours, real) check(ours == real, #ours, (size_t)(ours), (size_t)(real))
#define SAME_VALUE(ours, real) check((long)(ours) == (long)(real), #ours, (size_t)(ours), (size_t)(real))

int main() {
  SAME_SIZE(rt_cupti_init_params, CUpti_Profiler_Initialize_Params);
  SAME_FIELD(rt_cupti_init_params, CUpti_Profiler_Initialize_Params, structSize);
  SAME_FIELD(rt_cupti_init_params, CUpti_Profiler_Initialize_Params, pPriv);
  SAME_STRUCT_SIZE(RT_CUPTI_INIT_SIZE, CUpti_Profiler_Initialize_Params_STRUCT_SIZE);

  SAME_SIZE(rt_cupti_chip_params, CUpti_Device_GetChipName_Params);
  SAME_FIELD(rt_cupti_chip_params, CUpti_Device_GetChipName_Params, deviceIndex);
  SAME_FIELD(rt_cupti_chip_params, CUpti_Device_GetChipName_Params, pChipName);
  SAME_STRUCT_SIZE(RT_CUPTI_CHIP_SIZE, CUpti_Device_GetChipName_Params_STRUCT_SIZE);

  SAME_SIZE(rt_cupti_availability_params, CUpti_Profiler_GetCounterAvailability_Params);
  SAME_FIELD(rt_cupti_availability_params, CUpti_Profiler_GetCounterAvailability_Params, ctx);
  SAME_FIELD(rt_cupti_availability_params, CUpti_Profiler_GetCounterAvailability_Params, counterAvailabilityImageSize);
  SAME_FIELD(rt_cupti_availability_params, CUpti_Profiler_GetCounterAvailability_Params, pCounterAvailabilityImage);
  SAME_STRUCT_SIZE(RT_CUPTI_AVAILABILITY_SIZE, CUpti_Profiler_GetCounterAvailability_Params_STRUCT_SIZE);

  SAME_SIZE(rt_cupti_host_init_params, CUpti_Profiler_Host_Initialize_Params);
  SAME_FIELD(rt_cupti_host_init_params, CUpti_Profiler_Host_Initialize_Params, profilerType);
  SAME_FIELD(rt_cupti_host_init_params, CUpti_Profiler_Host_Initialize_Params, pChipName);
  SAME_FIELD(rt_cupti_host_init_params, CUpti_Profiler_Host_Initialize_Params, pCounterAvailabilityImage);
  SAME_FIELD(rt_cupti_host_init_params, CUpti_Profiler_Host_Initialize_Params, pHostObject);
  SAME_STRUCT_SIZE(RT_CUPTI_HOST_INIT_SIZE, CUpti_Profiler_Host_Initialize_Params_STRUCT_SIZE);

  SAME_SIZE(rt_cupti_host_deinit_params, CUpti_Profiler_Host_Deinitialize_Params);
  SAME_FIELD(rt_cupti_host_deinit_params, CUpti_Profiler_Host_Deinitialize_Params, pHostObject);
  SAME_STRUCT_SIZE(RT_CUPTI_HOST_DEINIT_SIZE, CUpti_Profiler_Host_Deinitialize_Params_STRUCT_SIZE);

  SAME_SIZE(rt_cupti_chips_params, CUpti_Profiler_Host_GetSupportedChips_Params);
  SAME_FIELD(rt_cupti_chips_params, CUpti_Profiler_Host_GetSupportedChips_Params, numChips);
  SAME_FIELD(rt_cupti_chips_params, CUpti_Profiler_Host_GetSupportedChips_Params, ppChipNames);
  SAME_STRUCT_SIZE(RT_CUPTI_CHIPS_SIZE, CUpti_Profiler_Host_GetSupportedChips_Params_STRUCT_SIZE);

  SAME_SIZE(rt_cupti_base_metrics_params, CUpti_Profiler_Host_GetBaseMetrics_Params);
  SAME_FIELD(rt_cupti_base_metrics_params, CUpti_Profiler_Host_GetBaseMetrics_Params, pHostObject);
  SAME_FIELD(rt_cupti_base_metrics_params, CUpti_Profiler_Host_GetBaseMetrics_Params, metricType);
  SAME_FIELD(rt_cupti_base_metrics_params, CUpti_Profiler_Host_GetBaseMetrics_Params, ppMetricNames);
  SAME_FIELD(rt_cupti_base_metrics_params, CUpti_Profiler_Host_GetBaseMetrics_Params, numMetrics);
  SAME_STRUCT_SIZE(RT_CUPTI_BASE_METRICS_SIZE, CUpti_Profiler_Host_GetBaseMetrics_Params_STRUCT_SIZE);

  SAME_SIZE(rt_cupti_add_metrics_params, CUpti_Profiler_Host_ConfigAddMetrics_Params);
  SAME_FIELD(rt_cupti_add_metrics_params, CUpti_Profiler_Host_ConfigAddMetrics_Params, pHostObject);
  SAME_FIELD(rt_cupti_add_metrics_params, CUpti_Profiler_Host_ConfigAddMetrics_Params, ppMetricNames);
  SAME_FIELD(rt_cupti_add_metrics_params, CUpti_Profiler_Host_ConfigAddMetrics_Params, numMetrics);
  SAME_STRUCT_SIZE(RT_CUPTI_ADD_METRICS_SIZE, CUpti_Profiler_Host_ConfigAddMetrics_Params_STRUCT_SIZE);

  SAME_SIZE(rt_cupti_config_size_params, CUpti_Profiler_Host_GetConfigImageSize_Params);
  SAME_FIELD(rt_cupti_config_size_params, CUpti_Profiler_Host_GetConfigImageSize_Params, pHostObject);
  SAME_FIELD(rt_cupti_config_size_params, CUpti_Profiler_Host_GetConfigImageSize_Params, configImageSize);
  SAME_STRUCT_SIZE(RT_CUPTI_CONFIG_SIZE_SIZE, CUpti_Profiler_Host_GetConfigImageSize_Params_STRUCT_SIZE);

  SAME_SIZE(rt_cupti_config_params, CUpti_Profiler_Host_GetConfigImage_Params);
  SAME_FIELD(rt_cupti_config_params, CUpti_Profiler_Host_GetConfigImage_Params, configImageSize);
  SAME_FIELD(rt_cupti_config_params, CUpti_Profiler_Host_GetConfigImage_Params, pConfigImage);
  SAME_STRUCT_SIZE(RT_CUPTI_CONFIG_SIZE, CUpti_Profiler_Host_GetConfigImage_Params_STRUCT_SIZE);

  SAME_SIZE(rt_cupti_passes_params, CUpti_Profiler_Host_GetNumOfPasses_Params);
  SAME_FIELD(rt_cupti_passes_params, CUpti_Profiler_Host_GetNumOfPasses_Params, configImageSize);
  SAME_FIELD(rt_cupti_passes_params, CUpti_Profiler_Host_GetNumOfPasses_Params, pConfigImage);
  SAME_FIELD(rt_cupti_passes_params, CUpti_Profiler_Host_GetNumOfPasses_Params, numOfPasses);
  SAME_STRUCT_SIZE(RT_CUPTI_PASSES_SIZE, CUpti_Profiler_Host_GetNumOfPasses_Params_STRUCT_SIZE);

  SAME_SIZE(rt_cupti_evaluate_params, CUpti_Profiler_Host_EvaluateToGpuValues_Params);
  SAME_FIELD(rt_cupti_evaluate_params, CUpti_Profiler_Host_EvaluateToGpuValues_Params, pHostObject);
  SAME_FIELD(rt_cupti_evaluate_params, CUpti_Profiler_Host_EvaluateToGpuValues_Params, pCounterDataImage);
  SAME_FIELD(rt_cupti_evaluate_params, CUpti_Profiler_Host_EvaluateToGpuValues_Params, counterDataImageSize);
  SAME_FIELD(rt_cupti_evaluate_params, CUpti_Profiler_Host_EvaluateToGpuValues_Params, rangeIndex);
  SAME_FIELD(rt_cupti_evaluate_params, CUpti_Profiler_Host_EvaluateToGpuValues_Params, ppMetricNames);
  SAME_FIELD(rt_cupti_evaluate_params, CUpti_Profiler_Host_EvaluateToGpuValues_Params, numMetrics);
  SAME_FIELD(rt_cupti_evaluate_params, CUpti_Profiler_Host_EvaluateToGpuValues_Params, pMetricValues);
  SAME_STRUCT_SIZE(RT_CUPTI_EVALUATE_SIZE, CUpti_Profiler_Host_EvaluateToGpuValues_Params_STRUCT_SIZE);

  SAME_SIZE(rt_cupti_enable_params, CUpti_RangeProfiler_Enable_Params);
  SAME_FIELD(rt_cupti_enable_params, CUpti_RangeProfiler_Enable_Params, ctx);
  SAME_FIELD(rt_cupti_enable_params, CUpti_RangeProfiler_Enable_Params, pRangeProfilerObject);
  SAME_STRUCT_SIZE(RT_CUPTI_ENABLE_SIZE, CUpti_RangeProfiler_Enable_Params_STRUCT_SIZE);

  SAME_SIZE(rt_cupti_object_params, CUpti_RangeProfiler_Disable_Params);
  SAME_SIZE(rt_cupti_object_params, CUpti_RangeProfiler_Start_Params);
  SAME_SIZE(rt_cupti_object_params, CUpti_RangeProfiler_PopRange_Params);
  SAME_FIELD(rt_cupti_object_params, CUpti_RangeProfiler_Disable_Params, pRangeProfilerObject);
  SAME_FIELD(rt_cupti_object_params, CUpti_RangeProfiler_Start_Params, pRangeProfilerObject);
  SAME_FIELD(rt_cupti_object_params, CUpti_RangeProfiler_PopRange_Params, pRangeProfilerObject);
  SAME_STRUCT_SIZE(RT_CUPTI_OBJECT_SIZE, CUpti_RangeProfiler_Disable_Params_STRUCT_SIZE);
  SAME_STRUCT_SIZE(RT_CUPTI_OBJECT_SIZE, CUpti_RangeProfiler_Start_Params_STRUCT_SIZE);
  SAME_STRUCT_SIZE(RT_CUPTI_OBJECT_SIZE, CUpti_RangeProfiler_PopRange_Params_STRUCT_SIZE);

  SAME_SIZE(rt_cupti_push_params, CUpti_RangeProfiler_PushRange_Params);
  SAME_FIELD(rt_cupti_push_params, CUpti_RangeProfiler_PushRange_Params, pRangeName);
  SAME_STRUCT_SIZE(RT_CUPTI_PUSH_SIZE, CUpti_RangeProfiler_PushRange_Params_STRUCT_SIZE);

  SAME_SIZE(rt_cupti_stop_params, CUpti_RangeProfiler_Stop_Params);
  SAME_FIELD(rt_cupti_stop_params, CUpti_RangeProfiler_Stop_Params, passIndex);
  SAME_FIELD(rt_cupti_stop_params, CUpti_RangeProfiler_Stop_Params, targetNestingLevel);
  SAME_FIELD(rt_cupti_stop_params, CUpti_RangeProfiler_Stop_Params, isAllPassSubmitted);
  SAME_STRUCT_SIZE(RT_CUPTI_STOP_SIZE, CUpti_RangeProfiler_Stop_Params_STRUCT_SIZE);

  SAME_SIZE(rt_cupti_set_config_params, CUpti_RangeProfiler_SetConfig_Params);
  SAME_FIELD(rt_cupti_set_config_params, CUpti_RangeProfiler_SetConfig_Params, pRangeProfilerObject);
  SAME_FIELD(rt_cupti_set_config_params, CUpti_RangeProfiler_SetConfig_Params, configSize);
  SAME_FIELD(rt_cupti_set_config_params, CUpti_RangeProfiler_SetConfig_Params, pConfig);
  SAME_FIELD(rt_cupti_set_config_params, CUpti_RangeProfiler_SetConfig_Params, counterDataImageSize);
  SAME_FIELD(rt_cupti_set_config_params, CUpti_RangeProfiler_SetConfig_Params, pCounterDataImage);
  SAME_FIELD(rt_cupti_set_config_params, CUpti_RangeProfiler_SetConfig_Params, range);
  SAME_FIELD(rt_cupti_set_config_params, CUpti_RangeProfiler_SetConfig_Params, replayMode);
  SAME_FIELD(rt_cupti_set_config_params, CUpti_RangeProfiler_SetConfig_Params, maxRangesPerPass);
  SAME_FIELD(rt_cupti_set_config_params, CUpti_RangeProfiler_SetConfig_Params, numNestingLevels);
  SAME_FIELD(rt_cupti_set_config_params, CUpti_RangeProfiler_SetConfig_Params, minNestingLevel);
  SAME_FIELD(rt_cupti_set_config_params, CUpti_RangeProfiler_SetConfig_Params, passIndex);
  SAME_FIELD(rt_cupti_set_config_params, CUpti_RangeProfiler_SetConfig_Params, targetNestingLevel);
  SAME_STRUCT_SIZE(RT_CUPTI_SET_CONFIG_SIZE, CUpti_RangeProfiler_SetConfig_Params_STRUCT_SIZE);

  SAME_SIZE(rt_cupti_decode_params, CUpti_RangeProfiler_DecodeData_Params);
  SAME_FIELD(rt_cupti_decode_params, CUpti_RangeProfiler_DecodeData_Params, numOfRangeDropped);
  SAME_STRUCT_SIZE(RT_CUPTI_DECODE_SIZE, CUpti_RangeProfiler_DecodeData_Params_STRUCT_SIZE);

  SAME_SIZE(rt_cupti_data_size_params, CUpti_RangeProfiler_GetCounterDataSize_Params);
  SAME_FIELD(rt_cupti_data_size_params, CUpti_RangeProfiler_GetCounterDataSize_Params, pMetricNames);
  SAME_FIELD(rt_cupti_data_size_params, CUpti_RangeProfiler_GetCounterDataSize_Params, numMetrics);
  SAME_FIELD(rt_cupti_data_size_params, CUpti_RangeProfiler_GetCounterDataSize_Params, maxNumOfRanges);
  SAME_FIELD(rt_cupti_data_size_params, CUpti_RangeProfiler_GetCounterDataSize_Params, maxNumRangeTreeNodes);
  SAME_FIELD(rt_cupti_data_size_params, CUpti_RangeProfiler_GetCounterDataSize_Params, counterDataSize);
  SAME_STRUCT_SIZE(RT_CUPTI_DATA_SIZE_SIZE, CUpti_RangeProfiler_GetCounterDataSize_Params_STRUCT_SIZE);

  SAME_SIZE(rt_cupti_data_init_params, CUpti_RangeProfiler_CounterDataImage_Initialize_Params);
  SAME_FIELD(rt_cupti_data_init_params, CUpti_RangeProfiler_CounterDataImage_Initialize_Params, counterDataSize);
  SAME_FIELD(rt_cupti_data_init_params, CUpti_RangeProfiler_CounterDataImage_Initialize_Params, pCounterData);
  SAME_STRUCT_SIZE(RT_CUPTI_DATA_INIT_SIZE, CUpti_RangeProfiler_CounterDataImage_Initialize_Params_STRUCT_SIZE);

  SAME_SIZE(rt_cupti_data_info_params, CUpti_RangeProfiler_GetCounterDataInfo_Params);
  SAME_FIELD(rt_cupti_data_info_params, CUpti_RangeProfiler_GetCounterDataInfo_Params, pCounterDataImage);
  SAME_FIELD(rt_cupti_data_info_params, CUpti_RangeProfiler_GetCounterDataInfo_Params, counterDataImageSize);
  SAME_FIELD(rt_cupti_data_info_params, CUpti_RangeProfiler_GetCounterDataInfo_Params, numTotalRanges);
  SAME_STRUCT_SIZE(RT_CUPTI_DATA_INFO_SIZE, CUpti_RangeProfiler_GetCounterDataInfo_Params_STRUCT_SIZE);

  SAME_VALUE(RT_CUPTI_SUCCESS, CUPTI_SUCCESS);
  SAME_VALUE(RT_CUPTI_ERROR_INVALID_PARAMETER, CUPTI_ERROR_INVALID_PARAMETER);
  SAME_VALUE(RT_CUPTI_ERROR_NOT_INITIALIZED, CUPTI_ERROR_NOT_INITIALIZED);
  SAME_VALUE(RT_CUPTI_ERROR_NOT_SUPPORTED, CUPTI_ERROR_NOT_SUPPORTED);
  SAME_VALUE(RT_CUPTI_ERROR_INSUFFICIENT_PRIVILEGES, CUPTI_ERROR_INSUFFICIENT_PRIVILEGES);
  SAME_VALUE(RT_CUPTI_ERROR_UNKNOWN, CUPTI_ERROR_UNKNOWN);
  SAME_VALUE(RT_CUPTI_METRIC_COUNTER, CUPTI_METRIC_TYPE_COUNTER);
  SAME_VALUE(RT_CUPTI_METRIC_RATIO, CUPTI_METRIC_TYPE_RATIO);
  SAME_VALUE(RT_CUPTI_METRIC_THROUGHPUT, CUPTI_METRIC_TYPE_THROUGHPUT);
  SAME_VALUE(RT_CUPTI_PROFILER_RANGE, CUPTI_PROFILER_TYPE_RANGE_PROFILER);
  SAME_VALUE(RT_CUPTI_AUTO_RANGE, CUPTI_AutoRange);
  SAME_VALUE(RT_CUPTI_USER_RANGE, CUPTI_UserRange);
  SAME_VALUE(RT_CUPTI_KERNEL_REPLAY, CUPTI_KernelReplay);
  SAME_VALUE(RT_CUPTI_USER_REPLAY, CUPTI_UserReplay);
  SAME_SIZE(rt_cupti_result, CUptiResult);

  // the entry points: rooftune's pointer types take the same parameter types as CUPTI's
#define SAME_FN(name, args)                                                                    \
  {                                                                                            \
    rt_cupti_result(*ours) args = nullptr;                                                     \
    (void)ours;                                                                                \
    checks++;                                                                                  \
  }
  RT_CUPTI_FUNCS(SAME_FN)
#undef SAME_FN

  std::printf("%d of %d layout checks against CUPTI %d's headers failed\n", failures, checks, CUPTI_API_VERSION);
  return failures ? 1 : 0;
}
