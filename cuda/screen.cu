// screen: a faster assign that stays exact. The direct form Σ (x − c)² costs two instructions per
// element (subtract, fused multiply-add); the expansion ‖x‖² + ‖c‖² − 2 x·c costs one, but its
// rounding error is far larger (SPEC §3.5: never use it for the final assignment). So the
// expansion only *screens*: per point it finds the three most promising anchors and the
// fourth-best approximate distance a4. With the rounding bound B (below) of the expansion in f32,
// if a4 − a2 > 2B no anchor outside the three can be among the true top-2, and the exact kernel
// then decides among the three candidates with direct differences. Points that fail the test (near
// ties, or data far from the origin such as test-cuda's) go to a list that assign_list
// (assign.cu) finishes with the full direct pass. The outputs equal the direct pass's.
//
// Bound: with u = 2^-24 and γ = d·u / (1 − d·u), the f32 dot product, the two squared norms and
// the final additions are each off by at most γ·(‖x‖ + ‖c‖)²-sized terms; the f32 direct
// distance that decides differs from the real one by at most γ·(‖x‖ + ‖c‖)² too. Summing them
// with slack: B = (2γ + 8u)·(‖x‖ + max‖c‖)².
#include "tile.cuh"
#include "top.cuh"

#define SC_THREADS TL_THREADS

// Squared norm of each point (once per engine) — sequential f32, covered by the bound.
template <typename T>
__device__ void point_norms(const T *X, int n, int d, float *xx) {
  const long long i = (long long)blockIdx.x * blockDim.x + threadIdx.x;
  if (i >= n) return;
  float s = 0.f;
  for (int k = 0; k < d; k++) {
    const float v = load_f32(X, (size_t)i * d + k);
    s = fmaf(v, v, s);
  }
  xx[i] = s;
}
extern "C" __global__ void point_norms_f32(const float *X, int n, int d, float *xx) { point_norms(X, n, d, xx); }
extern "C" __global__ void point_norms_f16(const __half *X, int n, int d, float *xx) { point_norms(X, n, d, xx); }

// One block: cc[j] = ‖c_j‖², *ccMax = max_j cc[j]; also resets the fallback list length.
extern "C" __global__ void __launch_bounds__(1024) anchor_norms(const float *C, int m, int d, float *cc, float *ccMax,
                                                                 unsigned *fallbackCount) {
  __shared__ float shm[32];
  float best = 0.f;
  for (int j = threadIdx.x; j < m; j += blockDim.x) {
    float s = 0.f;
    for (int k = 0; k < d; k++) {
      const float v = C[(size_t)j * d + k];
      s = fmaf(v, v, s);
    }
    cc[j] = s;
    best = fmaxf(best, s);
  }
  for (int o = 16; o > 0; o >>= 1) best = fmaxf(best, __shfl_xor_sync(0xffffffffu, best, o));
  if ((threadIdx.x & 31) == 0) shm[threadIdx.x >> 5] = best;
  __syncthreads();
  if (threadIdx.x == 0) {
    float b = 0.f;
    for (int w = 0; w < (int)(blockDim.x >> 5); w++) b = fmaxf(b, shm[w]);
    *ccMax = b;
    *fallbackCount = 0;
  }
}

// The tiling of assign.cu (cuda/tile.cuh), accumulating x·c instead of (x − c)².
template <typename T, int PP>
__device__ void screen_top2(const T *__restrict__ X, const float *__restrict__ C, const float *__restrict__ xx,
                            const float *__restrict__ cc, int n, int d, int m,
                            unsigned *__restrict__ J1, unsigned *__restrict__ J2, unsigned *__restrict__ J3,
                            float *__restrict__ A2, float *__restrict__ A4) {
  const int tx = threadIdx.x & 15, ty = threadIdx.x >> 4;
  const long long p0 = (long long)blockIdx.x * (16 * PP);
  float xn[PP], b1[PP], b2[PP], b3[PP], b4[PP];
  unsigned i1[PP], i2[PP], i3[PP];
#pragma unroll
  for (int p = 0; p < PP; p++) {
    const long long i = p0 + tl_local(ty, p);
    xn[p] = i < n ? xx[i] : 0.f;
    b1[p] = b2[p] = b3[p] = b4[p] = __int_as_float(0x7f800000);
    i1[p] = i2[p] = i3[p] = NONE;
  }
  tile_loop<true, PP>(X, C, n, d, m, p0, [](long long q) { return q; }, [&](int a0, float (&acc)[PP][8]) {
#pragma unroll
    for (int a = 0; a < 8; a++) {
      const int j = a0 + tl_local(tx, a);
      if (j < m) {
        const float cj = __ldg(cc + j);
#pragma unroll
        for (int p = 0; p < PP; p++)
          push4((xn[p] + cj) - 2.f * acc[p][a], (unsigned)j, b1[p], i1[p], b2[p], i2[p], b3[p], i3[p], b4[p]);
      }
#pragma unroll
      for (int p = 0; p < PP; p++) acc[p][a] = 0.f;
    }
  });
  // Merge across the 16 threads that share each point.
#pragma unroll
  for (int p = 0; p < PP; p++) {
#pragma unroll
    for (int o = 8; o > 0; o >>= 1) merge4_xor(o, b1[p], i1[p], b2[p], i2[p], b3[p], i3[p], b4[p]);
  }
  if (tx == 0) {
#pragma unroll
    for (int p = 0; p < PP; p++) {
      const long long i = p0 + tl_local(ty, p);
      if (i < n) {
        J1[i] = i1[p];
        J2[i] = i2[p];
        J3[i] = i3[p];
        A2[i] = b2[p];
        A4[i] = b4[p];
      }
    }
  }
}

// PP = 4 (SC_P = 64 points per block, two blocks per SM), as assign.cu: docs/cuda.md.
#define SC_PP 4
#define SC_P 64  // points per block: 16·SC_PP
static_assert(SC_P == 16 * SC_PP, "SC_P is the block's points");
#define SCREEN_ARGS(T) const T *X, const float *C, const float *xx, const float *cc, int n, int d, int m, \
                       unsigned *J1, unsigned *J2, unsigned *J3, float *A2, float *A4
extern "C" __global__ void __launch_bounds__(SC_THREADS, 2) screen_top2_f32(SCREEN_ARGS(float)) {
  screen_top2<float, SC_PP>(X, C, xx, cc, n, d, m, J1, J2, J3, A2, A4);
}
extern "C" __global__ void __launch_bounds__(SC_THREADS, 2) screen_top2_f16(SCREEN_ARGS(__half)) {
  screen_top2<__half, SC_PP>(X, C, xx, cc, n, d, m, J1, J2, J3, A2, A4);
}

// One warp per point: when the screen's margin holds, the exact (direct) distances to the three
// candidates give the top-2 (ties: lower index); otherwise the point joins the fallback list.
// In: J1/J2/J3 candidates, D1 = a2, D2 = a4 (from screen_top2 or screen_tc). Out: J1, D1, J2, D2
// exact. bcoef: B = bcoef·(‖x‖ + max‖c‖)², the bound of the screen that ran (the host computes it,
// screenBound() in src/backend/cuda/numerics.ts: (2γ + 8u) for screen_top2, more for screen_tc).
template <typename T>
__device__ void screen_exact(const T *X, const float *C, const float *xx, const float *ccMax, float bcoef, int n, int d,
                             unsigned *J1, float *D1, unsigned *J2, float *D2, const unsigned *J3,
                             unsigned *list, unsigned *count) {
  const int lane = threadIdx.x & 31;
  const long long warps = (long long)gridDim.x * (blockDim.x >> 5);
  const float cmax = sqrtf(*ccMax);
  for (long long i = (long long)blockIdx.x * (blockDim.x >> 5) + (threadIdx.x >> 5); i < n; i += warps) {
    const float a2 = D1[i], a4 = D2[i];
    const float r = sqrtf(xx[i]) + cmax;
    const float B = bcoef * r * r;
    if (!(a4 - a2 > 2.f * B)) {  // also catches NaN
      if (lane == 0) list[atomicAdd(count, 1u)] = (unsigned)i;
      continue;
    }
    const unsigned cand[3] = {J1[i], J2[i], J3[i]};
    float e1 = __int_as_float(0x7f800000), e2 = e1;
    unsigned k1 = NONE, k2 = NONE;
#pragma unroll
    for (int c = 0; c < 3; c++)
      if (cand[c] != NONE) top2_push(warp_dist(X, d, i, C + (size_t)cand[c] * d, lane), cand[c], e1, k1, e2, k2);
    if (lane == 0) {
      J1[i] = k1; D1[i] = e1; J2[i] = k2; D2[i] = e2;
    }
  }
}
#define EXACT_ARGS(T) const T *X, const float *C, const float *xx, const float *ccMax, float bcoef, int n, int d, \
                      unsigned *J1, float *D1, unsigned *J2, float *D2, const unsigned *J3, unsigned *list, unsigned *count
extern "C" __global__ void __launch_bounds__(256) screen_exact_f32(EXACT_ARGS(float)) {
  screen_exact(X, C, xx, ccMax, bcoef, n, d, J1, D1, J2, D2, J3, list, count);
}
extern "C" __global__ void __launch_bounds__(256) screen_exact_f16(EXACT_ARGS(__half)) {
  screen_exact(X, C, xx, ccMax, bcoef, n, d, J1, D1, J2, D2, J3, list, count);
}
