/* device_impl.h — private to device.c, device_cuda.c and device_replay.c: the device record
 * and the per-kind functions device.c dispatches to.  Not part of the public interface. */
#ifndef ROOFTUNE_DEVICE_IMPL_H
#define ROOFTUNE_DEVICE_IMPL_H

#include "tuner/device/device.h"

struct worker;
struct ktfile;

struct device {
  device_kind kind;       /* cuda, model, replay */
  timing_kind timing;     /* measured, predicted, replayed */
  char label[600];        /* "model:h200", "replay:FILE", "NVIDIA H200" */
  char arch[16];          /* compile target "sm_90"; "" for replay */
  const gpu_spec *spec;   /* the spec-table entry (model) or match (cuda); may be NULL */
  int sm_count;           /* multiprocessors; 0 unknown */
  diag_ceilings ceil;     /* the roofs for diagnosis */
  int have_ceil;          /* ceil is set */
  device_options opt;     /* with defaults filled in */
  char family[16];        /* the problem's family, from device_begin */
  /* cuda */
  int ordinal;            /* GPU index */
  struct worker *worker;  /* the measuring child process */
  int l2_bytes;           /* L2 size, for the flush buffer */
  int library_max;        /* the max the library candidates were listed with */
  /* replay */
  struct ktfile *kf;      /* the recorded file */
};

rt_status device_cuda_open(device *d, rt_error *err);
void device_cuda_close(device *d);
rt_status device_cuda_begin(device *d, const char *family, const struct problem *p, rt_error *err);
rt_status device_cuda_evaluate(device *d, const device_candidate *c, candidate_result *r,
                               rt_error *err);
rt_status device_cuda_library_list(device *d, int max, char ids[][256], int *count, rt_error *err);
rt_status device_cuda_measure_ceilings(device *d, const char *dtype, diag_ceilings *out,
                                       rt_error *err);
int device_cuda_restarts(const device *d);

rt_status device_replay_open(device *d, const char *path, rt_error *err);
void device_replay_close(device *d);
rt_status device_replay_evaluate(device *d, const device_candidate *c, candidate_result *r,
                                 rt_error *err);

#endif
