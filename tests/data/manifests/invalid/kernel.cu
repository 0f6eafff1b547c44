// a stand-in template source: the manifest tests only need it to exist
extern "C" __global__ void kernel() {}
