// transpose_reference.cu — the transpose family's reference: one thread per element,
// out[c][r] = in[r][c], no shared memory.  Candidates must reproduce it exactly.
#if defined(RT_DTYPE_f32)
typedef unsigned int elem;
#else
typedef unsigned short elem;  // f16 and bf16 move as 16-bit words
#endif

extern "C" __global__ void transpose_reference(const elem *in, elem *out, int rows, int cols) {
  long long c = (long long)blockIdx.x * blockDim.x + threadIdx.x;
  long long r = (long long)blockIdx.y * blockDim.y + threadIdx.y;
  if (r < rows && c < cols) out[c * rows + r] = in[r * cols + c];
}
