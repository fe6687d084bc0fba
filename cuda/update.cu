// update: the per-anchor steps around a reduce pass.
//   pass_begin: the Huber thresholds of the coming pass from the previous pass's statistics
//               (types.ts: H_j = h² · sse_j / count_j, +inf when disabled or empty; sse in fixed
//               point of scale eScale, reduce.cu), then zero the accumulators. Statistics of a pass
//               stay readable (Engine.stats) until the next one.
//   update_anchors: c_j ← c_j + s·(S_j / W_j − c_j) for every anchor with W_j > 0.
//   add_partials: another GPU's sums of the same pass (copied here: backend/cuda/peer.ts) added
//               into this one's: S, W, sse as int64 (wrapping, like the host's addInt64), count as
//               u32, far as the max. Integers: the order of the GPUs cannot change the result.
#include <stdint.h>

__device__ __forceinline__ double pos_inf() { return __longlong_as_double(0x7ff0000000000000LL); }

extern "C" __global__ void pass_begin(int m, int d, double huber, int hasPrev, double eScale, unsigned *count,
                                      long long *sse, unsigned long long *far, long long *W, long long *S, double *H) {
  const long long idx = (long long)blockIdx.x * blockDim.x + threadIdx.x;
  if (idx < m) {
    const unsigned c = count[idx];
    H[idx] = (huber > 0.0 && hasPrev && c > 0) ? huber * huber * ((double)sse[idx] / eScale) / (double)c : pos_inf();
    count[idx] = 0;
    sse[idx] = 0;
    far[idx] = 0ull;
    W[idx] = 0;
  }
  if (idx < (long long)m * d) S[idx] = 0;
}

extern "C" __global__ void update_anchors(float *C, const long long *S, const long long *W, int m, int d,
                                          double step, double sScale, double wScale) {
  const long long idx = (long long)blockIdx.x * blockDim.x + threadIdx.x;
  if (idx >= (long long)m * d) return;
  const long long w = W[idx / d];
  if (w <= 0) return;
  const double mean = ((double)S[idx] / sScale) / ((double)w / wScale);
  const double c = C[idx];
  C[idx] = (float)(c + step * (mean - c));
}

extern "C" __global__ void add_partials(unsigned long long *S, unsigned long long *W, unsigned long long *sse,
                                        unsigned long long *far, unsigned *count, const unsigned long long *S2,
                                        const unsigned long long *W2, const unsigned long long *sse2,
                                        const unsigned long long *far2, const unsigned *count2, int m, int d) {
  const long long idx = (long long)blockIdx.x * blockDim.x + threadIdx.x;
  if (idx < m) {
    W[idx] += W2[idx];
    sse[idx] += sse2[idx];
    count[idx] += count2[idx];
    if (far2[idx] > far[idx]) far[idx] = far2[idx]; // non-negative distances: unsigned order = signed order
  }
  if (idx < (long long)m * d) S[idx] += S2[idx];
}
