extern "C" __global__ void beside() {}
