/* recorded.h — a configuration another tuner recorded (replay:FILE), diagnosed as a GPU run is.
 *
 * A KTT recording carries, per configuration, the counters Nsight Compute measured and what the
 * compiler and launch gave (ktfile.h): that is what a run on the GPU gives rooftune's diagnosis,
 * measured on the recorded GPU.  recorded_diagnose() completes the static facts (occupancy, its
 * limiter and the resident blocks, from the registers, shared memory and block on the recorded
 * GPU's architecture) and diagnoses the configuration with a measured basis: the roofline
 * position from the measured DRAM and L2 bytes, occupancy measured, waves from the recorded grid,
 * against the spec table's ceilings for the recorded GPU.  A foreign kernel has no family to
 * count its FLOPs: its fp32 instructions are counted as fused multiply-adds (2 FLOPs each, an
 * upper bound; exact for a kernel that only does FFMA, such as the recorded convolution) and it
 * is held against the fp32 SIMT roof; a configuration of rooftune's own export (the counters a GPU
 * run read, the problem's FLOPs, its precision) against its precision's path.  Roles for its levers are guessed from its parameter
 * names unless the caller has a manifest's.
 */
#ifndef ROOFTUNE_RECORDED_H
#define ROOFTUNE_RECORDED_H

#include "core/result.h"
#include "core/status.h"
#include "model/gpu_spec.h"
#include "template/ktfile.h"
#include "template/roles.h"
#include "template/space.h"

/* Diagnoses r (configuration idx of space sp, as ktfile_result filled it: time, counters and
 * facts) on GPU gpu: fills r->facts' occupancy fields, r->flops (unless the caller set it from a
 * cost formula) and r->dram_bytes (measured), and r->diag.  Leaves r alone (RT_OK) when it failed or carries no counters.  roles NULL: guessed
 * from sp's parameter names.  RT_ERR_INVALID when gpu is NULL or its architecture is unknown. */
rt_status recorded_diagnose(candidate_result *r, const gpu_spec *gpu, const param_roles *roles,
                            const space *sp, size_t idx, rt_error *err);

/* The features (features.h) of a recorded configuration from its compile facts on gpu's
 * architecture (occupancy computed here when the facts lack it), NaN where the recording has
 * none; its roofline bound from executed_flops and dram_bytes (a manifest's cost formulas) on
 * the fp32 SIMT roof and the copy bandwidth, NaN when both are 0 (a recording alone has no cost
 * formula).  out: FEATURE_COUNT values. */
void recorded_features(const static_facts *facts, const gpu_spec *gpu, double executed_flops,
                       double dram_bytes, double *out);

/* How far above the fastest GPU of the spec table a recorded rate may be before it is no
 * measurement (the table holds datasheet peaks; a newer GPU may beat them). */
#define RECORDED_RATE_MARGIN 4

/* The counters of every timed configuration of kf within what a GPU can count: DRAM, L2 and
 * local bytes a second, and fp32 FLOPs a second, at most RECORDED_RATE_MARGIN x the fastest
 * GPU's peaks (percentages over 100 are refused by the loader).  RT_ERR_PARSE naming the counter,
 * the file and the row (KTT's Results[i]) and configuration otherwise. */
rt_status recorded_check_counters(const ktfile *kf, rt_error *err);

#endif
