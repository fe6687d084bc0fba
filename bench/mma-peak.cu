// Peak rate of the mma.sync TF32 instruction that cuda/screen_tc.cu uses (m16n8k8, f32
// accumulate), to tell how far the tensor-core screen is from the hardware's limit.
// Build and run on the GPU machine (needs nvcc): nvcc -O3 -arch=sm_90 bench/mma-peak.cu -o /tmp/mma-peak && /tmp/mma-peak
#include <cstdio>
#include <cuda_runtime.h>

#define CHECK(x) do { cudaError_t e = (x); if (e != cudaSuccess) { printf("%s: %s\n", #x, cudaGetErrorString(e)); return 1; } } while (0)

__global__ void mma_loop(float *out, int iters) {
  unsigned a[4] = {threadIdx.x, threadIdx.x + 1, threadIdx.x + 2, threadIdx.x + 3}, b[2] = {threadIdx.x, 7};
  float acc[16][4] = {};
  for (int i = 0; i < iters; i++) {
#pragma unroll
    for (int t = 0; t < 16; t++)  // 16 independent accumulators, as in screen_tc's sweeps
      asm volatile("mma.sync.aligned.m16n8k8.row.col.f32.tf32.tf32.f32 {%0,%1,%2,%3}, {%4,%5,%6,%7}, {%8,%9}, {%0,%1,%2,%3};"
                   : "+f"(acc[t][0]), "+f"(acc[t][1]), "+f"(acc[t][2]), "+f"(acc[t][3])
                   : "r"(a[0]), "r"(a[1]), "r"(a[2]), "r"(a[3]), "r"(b[0]), "r"(b[1]));
  }
  float s = 0;
  for (int t = 0; t < 16; t++) s += acc[t][0] + acc[t][1] + acc[t][2] + acc[t][3];
  out[blockIdx.x * blockDim.x + threadIdx.x] = s;
}

int main() {
  int sms;
  CHECK(cudaDeviceGetAttribute(&sms, cudaDevAttrMultiProcessorCount, 0));
  float *out;
  CHECK(cudaMalloc(&out, sizeof(float) * sms * 8 * 1024));
  cudaEvent_t e0, e1;
  CHECK(cudaEventCreate(&e0));
  CHECK(cudaEventCreate(&e1));
  const int iters = 4096;
  for (int warps = 4; warps <= 16; warps *= 2) {  // 32 warps × ~150 registers do not fit
    mma_loop<<<sms, warps * 32>>>(out, 16);  // warm-up
    CHECK(cudaEventRecord(e0));
    mma_loop<<<sms, warps * 32>>>(out, iters);
    CHECK(cudaGetLastError());
    CHECK(cudaEventRecord(e1));
    CHECK(cudaEventSynchronize(e1));
    float ms;
    CHECK(cudaEventElapsedTime(&ms, e0, e1));
    const double flop = 2.0 * 16 * 8 * 8 * 16 * (double)iters * warps * sms;
    printf("mma.sync m16n8k8 tf32: %2d warps/SM  %.1f TFLOP/s\n", warps, flop / ms / 1e9);
  }
  return 0;
}
