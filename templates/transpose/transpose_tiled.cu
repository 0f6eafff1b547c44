// transpose_tiled.cu — transpose through shared memory: a block of TILE x BLOCK_ROWS threads
// moves one TILE x TILE tile, reading rows of the input and writing rows of the output so both
// sides are coalesced; each thread handles TILE/BLOCK_ROWS elements.  PAD 1 adds a column to the
// shared tile so the column reads do not conflict on banks (PAD 0 shows what the conflicts cost).
// VEC 2 (16-bit dtypes) moves two elements per thread and access as one 32-bit word.
//
// Parameters (#defines from the manifest): TILE, BLOCK_ROWS, PAD, VEC.
#if defined(RT_DTYPE_f32)
typedef unsigned int elem;
#else
typedef unsigned short elem;
#endif

extern "C" __global__ void __launch_bounds__(TILE / VEC * BLOCK_ROWS)
    transpose_tiled(const elem *in, elem *out, int rows, int cols) {
  __shared__ elem tile[TILE][TILE + PAD];
  const int tx = threadIdx.x * VEC, ty = threadIdx.y;
  const long long c0 = (long long)blockIdx.x * TILE, r0 = (long long)blockIdx.y * TILE;
  for (int j = ty; j < TILE; j += BLOCK_ROWS) {
    const long long r = r0 + j;
#pragma unroll
    for (int v = 0; v < VEC; v++) {
      const long long c = c0 + tx + v;
      if (r < rows && c < cols) tile[j][tx + v] = in[r * cols + c];
    }
  }
  __syncthreads();
  for (int j = ty; j < TILE; j += BLOCK_ROWS) {
    const long long oc = c0 + j;  // a row of the output is a column of the input
#pragma unroll
    for (int v = 0; v < VEC; v++) {
      const long long orow = r0 + tx + v;
      if (oc < cols && orow < rows) out[oc * rows + orow] = tile[tx + v][j];
    }
  }
}
