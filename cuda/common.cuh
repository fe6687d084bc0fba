// Shared helpers of every kernel family: loading one element of the vectors as f32 whatever
// their storage (f16 stays f16 in device memory and is widened in registers).
#pragma once
#include <cuda_fp16.h>
#include <stdint.h>

__device__ __forceinline__ float load_f32(const float *p, size_t i) { return __ldg(p + i); }
__device__ __forceinline__ float load_f32(const __half *p, size_t i) { return __half2float(p[i]); }
// Elements k .. k + 3 of a row as f32 in one load: 16 bytes of f32, or 8 of f16 (p + k aligned).
__device__ __forceinline__ float4 load4(const float *p, int k) { return __ldg(reinterpret_cast<const float4 *>(p + k)); }
__device__ __forceinline__ float4 load4(const __half *p, int k) {
  const uint2 u = __ldg(reinterpret_cast<const uint2 *>(p + k));
  const float2 a = __half22float2(*reinterpret_cast<const __half2 *>(&u.x));
  const float2 b = __half22float2(*reinterpret_cast<const __half2 *>(&u.y));
  return make_float4(a.x, a.y, b.x, b.y);
}

// Squared distance between row i of X (n×d) and one anchor c (d floats), direct differences.
// The lanes of one warp split the dimensions; the result is the same on every lane.
template <typename T>
__device__ __forceinline__ float warp_dist(const T *X, int d, long long i, const float *c, int lane) {
  float s = 0.f;
  const size_t base = (size_t)i * d;
  for (int k = lane; k < d; k += 32) {
    float t = load_f32(X, base + k) - c[k];
    s = fmaf(t, t, s);
  }
  for (int o = 16; o > 0; o >>= 1) s += __shfl_xor_sync(0xffffffffu, s, o);
  return s;
}
