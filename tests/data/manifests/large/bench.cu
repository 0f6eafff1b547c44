// stand-in source for the large synthetic manifest (bench_space, tests/long)
extern "C" __global__ void bench() {}
