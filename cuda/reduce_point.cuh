// reduce_point.cuh: what one point contributes to the statistics of reduce.cu: its soft share of
// the runner-up and Huber weight (shares_of), fixed-point terms, the farthest-point key, the
// nearest anchor's tallies, and the per-block energy and changed partials.
#pragma once
#include "common.cuh"

#define RD_THREADS 256
#define NONE 0xffffffffu
// Soft shares below this are dropped (w2 = 0, w1 = 1). The fixed-point sums resolve weights
// down to ~1e-13 (n = 10^6), so an anchor supported only by shares of e^-30 would get a mean
// made of rounding; shares this small move no f32 anchor that has real support anyway.
#define MIN_SHARE 9.5367431640625e-07  // 2^-20

__device__ __forceinline__ double robust(double dist, double H) {
  return dist <= H ? 1.0 : sqrt(H / dist);
}

__device__ __forceinline__ void add_fixed(long long *p, double v) {
  atomicAdd(reinterpret_cast<unsigned long long *>(p), (unsigned long long)__double2ll_rn(v));
}

// One point's weights in the sums: wa for its nearest anchor a, wb for the runner-up b (0 when
// the soft share is below MIN_SHARE or there is no temperature). wa > 0 always (w2 <= 1/2).
struct Shares {
  double wa, wb;
};
__device__ __forceinline__ Shares shares_of(unsigned a, unsigned b, float da, float db, const double *__restrict__ H,
                                            double temperature) {
  double w2 = 0.0;
  if (temperature > 0.0 && b != NONE) w2 = 1.0 / (1.0 + exp(((double)db - (double)da) / temperature));
  if (w2 < MIN_SHARE) w2 = 0.0;
  return {(1.0 - w2) * robust(da, H[a]), w2 > 0.0 ? w2 * robust(db, H[b]) : 0.0};
}

// A point's farthest-point key: the largest distance wins; among equal distances the lowest index
// (stored inverted). `row` is its index in the whole data.
__device__ __forceinline__ unsigned long long far_key(float da, unsigned row) {
  return ((unsigned long long)__float_as_uint(da) << 32) | (unsigned long long)(NONE - row);
}

// The nearest anchor's statistics of one point: count, sse (e: its distance in fixed point), farthest.
__device__ __forceinline__ void tally_nearest(unsigned a, float da, long long e, unsigned row, unsigned *count,
                                              long long *sse, unsigned long long *far) {
  atomicAdd(count + a, 1u);
  atomicAdd(reinterpret_cast<unsigned long long *>(sse + a), (unsigned long long)e);
  atomicMax(far + a, far_key(da, row));
}

// A block's energy and changed count into partial[2·block], [2·block + 1] (every thread calls it).
__device__ __forceinline__ void block_partials(long long energy, long long changed, long long *partial) {
  __shared__ long long shE[RD_THREADS / 32], shC[RD_THREADS / 32];
  for (int o = 16; o > 0; o >>= 1) {
    energy += __shfl_xor_sync(0xffffffffu, energy, o);
    changed += __shfl_xor_sync(0xffffffffu, changed, o);
  }
  const int lane = threadIdx.x & 31, warp = threadIdx.x >> 5;
  if (lane == 0) {
    shE[warp] = energy;
    shC[warp] = changed;
  }
  __syncthreads();
  if (threadIdx.x == 0) {
    long long e = 0, c = 0;
    for (int w = 0; w < RD_THREADS / 32; w++) {
      e += shE[w];
      c += shC[w];
    }
    partial[2 * blockIdx.x] = e;
    partial[2 * blockIdx.x + 1] = c;
  }
}
