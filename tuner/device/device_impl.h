/* device_impl.h — private to the device implementations (device.c, device_model.c,
 * device_cuda.c, device_replay.c): the device record and the table of operations each kind
 * fills in, which device.c dispatches through.  Not part of the public interface. */
#ifndef ROOFTUNE_DEVICE_IMPL_H
#define ROOFTUNE_DEVICE_IMPL_H

#include "tuner/device/device.h"

struct worker;
struct ktfile;

/* One device kind.  Optional operations are NULL where the kind has none. */
typedef struct device_ops {
  device_kind kind; /* its prefix, syntax, capabilities and timing (device.h) */
  /* Checks the text after the prefix ("h200", "FILE", "", ":1") without opening anything:
   * RT_ERR_INVALID saying what is accepted, unlocated.  NULL: any text. */
  rt_status (*check)(const char *arg, rt_error *err);
  /* The spec-table GPU the text after the prefix names (model); NULL: none. */
  const gpu_spec *(*gpu)(const char *arg);
  /* Opens the device named by the text after the prefix, which check accepted. */
  rt_status (*open)(device *d, const char *arg, rt_error *err);
  void (*close)(device *d); /* optional */
  rt_status (*begin)(device *d, const family_ops *fam, const struct problem *p,
                     const family_reference *ref, rt_error *err); /* optional */
  rt_status (*evaluate)(device *d, const device_candidate *c, candidate_result *r, rt_error *err);
  rt_status (*library_list)(device *d, int max, char ids[][256], int *count,
                            rt_error *err); /* optional */
  rt_status (*measure_ceilings)(device *d, const char *dtype, roofline_ceilings *out,
                                rt_error *err);            /* optional */
  void (*identity)(const device *d, device_identity *out); /* optional: pseudo */
  rt_status (*profile)(device *d, const device_candidate *c, hw_counters *out,
                       rt_error *err); /* optional */
  int (*restarts)(const device *d);    /* optional */
} device_ops;

extern const device_ops device_model_ops, device_replay_ops, device_cuda_ops, device_sim_ops;

struct device {
  const device_ops *ops;  /* its kind */
  char label[600];        /* "model:h200", "replay:FILE", "NVIDIA H200" */
  char arch[16];          /* compile target "sm_90"; "" for replay */
  const gpu_spec *spec;   /* the spec-table entry (model) or match (cuda); may be NULL */
  int sm_count;           /* multiprocessors; 0 unknown */
  roofline_ceilings ceil; /* the roofs for diagnosis */
  int have_ceil;          /* ceil is set */
  device_options opt;     /* with defaults filled in */
  char family[16];        /* the problem's family, from device_begin */
  /* cuda */
  int ordinal;           /* GPU index */
  struct worker *worker; /* the measuring child process */
  int l2_bytes;          /* L2 size, for the flush buffer */
  int library_max;       /* the max the library candidates were listed with */
  /* replay */
  struct ktfile *kf; /* the recorded file */
  /* sim */
  struct sim_state *sim; /* the family's inputs and reference on the sim (device_sim.c) */
};

#endif
