/* toolkit.c — db_toolkit_string (db.h): the toolkit identity a run records.  Apart from db.c
 * because it asks NVRTC for its version: librooftune reads databases with db.c and links no
 * NVRTC, so it states its toolkit from build-time constants instead (runtime/lookup.c). */
#include <stdio.h>

#include "db/db.h"
#include "compile/toolkit.h"

rt_status db_toolkit_string(char *buf, size_t size, rt_error *err) {
  toolkit_info tk;
  rt_status s = toolkit_query(&tk, err);
  if (s) return s;
  snprintf(buf, size, "cuda %d.%d, nvrtc %d.%d, cublaslt %zu", tk.cuda_major, tk.cuda_minor,
           tk.nvrtc_major, tk.nvrtc_minor, tk.cublaslt_version);
  return RT_OK;
}
