// tiny_common.h — a shared header beside the test template, found through the template folder's
// include path (the compile cache hashes it too).
#pragma once

__device__ inline float to_float(float v) { return v; }
__device__ inline float to_float(__half v) { return __half2float(v); }

template <typename T>
__device__ inline float load_or_zero(const T *p, int r, int c, int rows, int cols) {
  return (r < rows && c < cols) ? to_float(p[(size_t)r * cols + c]) : 0.f;
}
