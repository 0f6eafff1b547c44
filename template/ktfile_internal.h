/* ktfile_internal.h — what ktfile.c and ktfile_counters.c share; not for use outside them. */
#ifndef ROOFTUNE_KTFILE_INTERNAL_H
#define ROOFTUNE_KTFILE_INTERNAL_H

#include <jansson.h>

#include "template/ktfile.h"

/* Reads one KTT ComputationResult's counters (ProfilingData.Counters through the metric table)
 * and static facts (CompilationData, LocalSize, GlobalSize: in blocks when grid_in_blocks,
 * else in threads) into ctr and facts (zeroed first; ctr->measured 0 and
 * facts->threads_per_block 0 when the result records none).  RT_ERR_PARSE naming `what`
 * ("Results[12]") and the field for a value that is not what KTT writes. */
rt_status ktfile_ktt_record(const json_t *comp, const char *what, int grid_in_blocks,
                            hw_counters *ctr, static_facts *facts, rt_error *err);

#endif
