// BUG 0: correct; BUG 1: the last element is left unwritten (stays poisoned); BUG 2: every
// element is off by one part in a thousand (over the f32 bound, inside the bf16 one)
#include "twice_common.h"
extern "C" __global__ void twice(const elem *x, elem *y, int n) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i >= n || (BUG == 1 && i == n - 1)) return;
  y[i] = e((BUG == 2 ? 2.002f : 2.0f) * f(x[i]));
}
