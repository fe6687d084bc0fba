// assign: for every point its nearest anchor j1 (distance d1) and runner-up j2 (d2), by direct
// differences Σ_k (x_ik − c_jk)² in f32 (SPEC §3.5: never the norm expansion). No n×m matrix:
// the minimum is fused into the distance loop.
//
// Register tiling: a block of 256 threads owns 128 points and walks over all anchors in tiles of
// 128; each thread accumulates 8 points × 8 anchors, with points and anchors staged through
// shared memory in chunks of 16 dimensions (the next chunk is fetched into registers while the
// current one is computed). Each thread keeps a running top-2 of its 8 points over its anchors;
// the 16 threads that share points merge their top-2s with warp shuffles at the end.
// Ties: the pair (distance, index) is compared lexicographically, so the lowest index wins.
#include "common.cuh"

#define AS_THREADS 256
#define AS_P 128  // points per block
#define AS_A 128  // anchors per tile
#define AS_K 16   // dimensions per chunk
#define AS_PAD 4  // shared row padding (keeps 16-byte alignment, spreads banks)

__device__ __forceinline__ bool lex_less(float da, unsigned ja, float db, unsigned jb) {
  return da < db || (da == db && ja < jb);
}

// Insert (d, j) into the top-2 (d1, j1) <= (d2, j2).
__device__ __forceinline__ void top2_push(float d, unsigned j, float &d1, unsigned &j1, float &d2, unsigned &j2) {
  if (lex_less(d, j, d1, j1)) {
    d2 = d1; j2 = j1; d1 = d; j1 = j;
  } else if (lex_less(d, j, d2, j2)) {
    d2 = d; j2 = j;
  }
}

// LIST: the block's points are list[p0 ..] (the screen's fallback list, *listCount long) instead
// of p0 .., so the same kernel finishes the points the screen could not decide (screen.cu).
template <typename T, bool LIST>
__device__ void assign_top2(const T *__restrict__ X, const float *__restrict__ C, int n, int d, int m,
                            unsigned *__restrict__ outJ1, float *__restrict__ outD1,
                            unsigned *__restrict__ outJ2, float *__restrict__ outD2,
                            const unsigned *__restrict__ list, const unsigned *__restrict__ listCount) {
  __shared__ __align__(16) float Xs[AS_K][AS_P + AS_PAD];
  __shared__ __align__(16) float Cs[AS_K][AS_A + AS_PAD];

  const int tid = threadIdx.x;
  const int tx = tid & 15;   // anchor group: anchors tx*4+{0..3} and 64+tx*4+{0..3} of a tile
  const int ty = tid >> 4;   // point group: points ty*4+{0..3} and 64+ty*4+{0..3} of the block
  const long long p0 = (long long)blockIdx.x * AS_P;
  if (LIST) {
    n = (int)*listCount;  // points in the list; blocks past it have nothing to do
    if (p0 >= n) return;
  }
  // Row of the block's r-th point in X (and in the outputs).
  auto rowOf = [&](long long r) -> long long { return LIST ? (long long)list[r] : r; };

  const int kChunks = (d + AS_K - 1) / AS_K;
  const int aTiles = (m + AS_A - 1) / AS_A;
  const int steps = kChunks * aTiles;

  // Staging: element e = tid + r*256 of a 128×16 chunk is (row ty + 16r, dim tx): each thread
  // always loads the same dimension offset, rows 16 apart.
  float xr[8], cr[8];
  auto fetch = [&](int step) {
    const int a0 = (step / kChunks) * AS_A;
    const int k = (step % kChunks) * AS_K + tx;
    const bool kin = k < d;
#pragma unroll
    for (int r = 0; r < 8; r++) {
      const int row = ty + 16 * r;
      const long long i = p0 + row;
      const int j = a0 + row;
      xr[r] = (kin && i < n) ? load_f32(X, (size_t)rowOf(i) * d + k) : 0.f;
      cr[r] = (kin && j < m) ? __ldg(C + (size_t)j * d + k) : 0.f;
    }
  };

  float acc[8][8];
  float b1[8], b2[8];
  unsigned i1[8], i2[8];
#pragma unroll
  for (int p = 0; p < 8; p++) {
    b1[p] = b2[p] = __int_as_float(0x7f800000);
    i1[p] = i2[p] = 0xffffffffu;
#pragma unroll
    for (int a = 0; a < 8; a++) acc[p][a] = 0.f;
  }

  fetch(0);
  for (int step = 0; step < steps; step++) {
    __syncthreads();
#pragma unroll
    for (int r = 0; r < 8; r++) {
      Xs[tx][ty + 16 * r] = xr[r];
      Cs[tx][ty + 16 * r] = cr[r];
    }
    __syncthreads();
    if (step + 1 < steps) fetch(step + 1);

#pragma unroll
    for (int k = 0; k < AS_K; k++) {
      const float4 xa = *reinterpret_cast<const float4 *>(&Xs[k][ty * 4]);
      const float4 xb = *reinterpret_cast<const float4 *>(&Xs[k][64 + ty * 4]);
      const float4 ca = *reinterpret_cast<const float4 *>(&Cs[k][tx * 4]);
      const float4 cb = *reinterpret_cast<const float4 *>(&Cs[k][64 + tx * 4]);
      const float xv[8] = {xa.x, xa.y, xa.z, xa.w, xb.x, xb.y, xb.z, xb.w};
      const float cv[8] = {ca.x, ca.y, ca.z, ca.w, cb.x, cb.y, cb.z, cb.w};
#pragma unroll
      for (int p = 0; p < 8; p++)
#pragma unroll
        for (int a = 0; a < 8; a++) {
          const float t = xv[p] - cv[a];
          acc[p][a] = fmaf(t, t, acc[p][a]);
        }
    }

    if (step % kChunks == kChunks - 1) {  // this anchor tile is complete: fold it into the top-2
      const int a0 = (step / kChunks) * AS_A;
#pragma unroll
      for (int a = 0; a < 8; a++) {
        const int j = a0 + (a < 4 ? tx * 4 + a : 64 + tx * 4 + (a - 4));
        if (j < m) {
#pragma unroll
          for (int p = 0; p < 8; p++) top2_push(acc[p][a], (unsigned)j, b1[p], i1[p], b2[p], i2[p]);
        }
#pragma unroll
        for (int p = 0; p < 8; p++) acc[p][a] = 0.f;
      }
    }
  }

  // Merge the top-2s of the 16 threads (same ty, lanes of one half-warp) that share each point.
#pragma unroll
  for (int p = 0; p < 8; p++) {
#pragma unroll
    for (int o = 8; o > 0; o >>= 1) {
      const float od1 = __shfl_xor_sync(0xffffffffu, b1[p], o);
      const unsigned oj1 = __shfl_xor_sync(0xffffffffu, i1[p], o);
      const float od2 = __shfl_xor_sync(0xffffffffu, b2[p], o);
      const unsigned oj2 = __shfl_xor_sync(0xffffffffu, i2[p], o);
      top2_push(od1, oj1, b1[p], i1[p], b2[p], i2[p]);
      top2_push(od2, oj2, b1[p], i1[p], b2[p], i2[p]);
    }
  }
  if (tx == 0) {
#pragma unroll
    for (int p = 0; p < 8; p++) {
      const long long q = p0 + (p < 4 ? ty * 4 + p : 64 + ty * 4 + (p - 4));
      if (q < n) {
        const long long i = rowOf(q);
        outJ1[i] = i1[p];
        outD1[i] = b1[p];
        outJ2[i] = i2[p];  // 0xffffffff when m == 1
        outD2[i] = b2[p];  // +inf when m == 1
      }
    }
  }
}

// Two builds of the same kernel: one block per SM with every register it wants (occ1), and two
// blocks per SM capped at 128 registers (a few spills outside the inner loop). occ1 measured
// faster on the H100 (docs/cuda.md); both stay so the choice can be re-measured on other cards.
#define ASSIGN_ARGS(T) const T *X, const float *C, int n, int d, int m, unsigned *j1, float *d1, unsigned *j2, float *d2
extern "C" __global__ void __launch_bounds__(AS_THREADS, 1) assign_top2_f32(ASSIGN_ARGS(float)) {
  assign_top2<float, false>(X, C, n, d, m, j1, d1, j2, d2, nullptr, nullptr);
}
extern "C" __global__ void __launch_bounds__(AS_THREADS, 1) assign_top2_f16(ASSIGN_ARGS(__half)) {
  assign_top2<__half, false>(X, C, n, d, m, j1, d1, j2, d2, nullptr, nullptr);
}
extern "C" __global__ void __launch_bounds__(AS_THREADS, 2) assign_top2_f32_occ2(ASSIGN_ARGS(float)) {
  assign_top2<float, false>(X, C, n, d, m, j1, d1, j2, d2, nullptr, nullptr);
}
extern "C" __global__ void __launch_bounds__(AS_THREADS, 2) assign_top2_f16_occ2(ASSIGN_ARGS(__half)) {
  assign_top2<__half, false>(X, C, n, d, m, j1, d1, j2, d2, nullptr, nullptr);
}
// The screen's fallback: the same exact pass over the listed points only.
extern "C" __global__ void __launch_bounds__(AS_THREADS, 1)
assign_list_f32(ASSIGN_ARGS(float), const unsigned *list, const unsigned *count) {
  assign_top2<float, true>(X, C, n, d, m, j1, d1, j2, d2, list, count);
}
extern "C" __global__ void __launch_bounds__(AS_THREADS, 1)
assign_list_f16(ASSIGN_ARGS(__half), const unsigned *list, const unsigned *count) {
  assign_top2<__half, true>(X, C, n, d, m, j1, d1, j2, d2, list, count);
}
