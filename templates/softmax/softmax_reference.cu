// softmax_reference.cu — the softmax family's reference: y[r][c] = exp(x[r][c] - max_r) / sum_r,
// one thread per row, in double precision, three plain passes over the row.  Candidates are
// checked against what this writes; it is never tuned.
#include "softmax_common.h"

extern "C" __global__ void softmax_reference(const elem *x, elem *y, int rows, int cols) {
  int r = blockIdx.x * blockDim.x + threadIdx.x;
  if (r >= rows) return;
  const elem *xr = x + (size_t)r * cols;
  elem *yr = y + (size_t)r * cols;
  double m = -1e300;
  for (int c = 0; c < cols; c++) m = fmax(m, (double)to_float(xr[c]));
  double s = 0;
  for (int c = 0; c < cols; c++) s += exp((double)to_float(xr[c]) - m);
  for (int c = 0; c < cols; c++) yr[c] = from_float((float)(exp((double)to_float(xr[c]) - m) / s));
}
