// The register-tiled loop shared by assign.cu (direct differences) and screen.cu (dot products):
// a block of 256 threads owns 16·PP points and walks over all anchors in tiles of 128; each thread
// accumulates PP points × 8 anchors. Points and anchors are staged through shared memory in chunks
// of 16 dimensions, double-buffered: while the block computes on one stage, the next chunk is
// already loading into registers and is stored into the other stage, so each chunk costs one
// barrier. Thread (ty, tx) owns points ty*4+{0..3} (and 64+ty*4+{0..3} when PP = 8) of the block
// and anchors tx*4+{0..3}, 64+tx*4+{0..3} of each tile (16-byte shared loads, broadcast across
// the warp). The kernels build PP = 4 (64 points per block, about 115 registers, two blocks of 8
// warps per SM); PP = 8 (128 points, one block per SM) is the layout docs/cuda.md compares it with.
#pragma once
#include "common.cuh"

#define TL_THREADS 256
#define TL_A 128  // anchors per tile
#define TL_K 16   // dimensions per chunk
#define TL_PAD 4  // shared row padding (keeps 16-byte alignment, spreads banks)

/** Local row index of a thread's p-th point (or a-th anchor) within its block (tile). */
__device__ __forceinline__ int tl_local(int lane16, int p) { return p < 4 ? lane16 * 4 + p : 64 + lane16 * 4 + (p - 4); }

// DOT = false: acc += (x − c)²; DOT = true: acc += x·c. rowOf(q) maps the block's q-th point
// (q = p0 + local) to its row of X; `valid` points are q < n. fold(a0, acc) runs after each
// complete anchor tile starting at anchor a0 and must leave acc zeroed for the next tile.
template <bool DOT, int PP, typename T, typename RowOf, typename Fold>
__device__ __forceinline__ void tile_loop(const T *__restrict__ X, const float *__restrict__ C, int n, int d, int m,
                                          long long p0, RowOf rowOf, Fold fold) {
  constexpr int P = 16 * PP;  // points per block
  __shared__ __align__(16) float Xs[2][TL_K][P + TL_PAD];
  __shared__ __align__(16) float Cs[2][TL_K][TL_A + TL_PAD];
  const int tid = threadIdx.x, tx = tid & 15, ty = tid >> 4;
  const int kChunks = (d + TL_K - 1) / TL_K;
  const int steps = kChunks * ((m + TL_A - 1) / TL_A);

  // Staging: thread loads dimension tx of point rows ty + 16r (r < PP) and anchor rows ty + 16r
  // (r < 8) of the chunk.
  float xr[PP], cr[8];
  auto fetch = [&](int step) {
    const int a0 = (step / kChunks) * TL_A;
    const int k = (step % kChunks) * TL_K + tx;
    const bool kin = k < d;
#pragma unroll
    for (int r = 0; r < 8; r++) {
      const int row = ty + 16 * r;
      if (r < PP) {
        const long long q = p0 + row;
        xr[r] = (kin && q < n) ? load_f32(X, (size_t)rowOf(q) * d + k) : 0.f;
      }
      const int j = a0 + row;
      cr[r] = (kin && j < m) ? __ldg(C + (size_t)j * d + k) : 0.f;
    }
  };
  auto stash = [&](int s) {
#pragma unroll
    for (int r = 0; r < 8; r++) {
      if (r < PP) Xs[s][tx][ty + 16 * r] = xr[r];
      Cs[s][tx][ty + 16 * r] = cr[r];
    }
  };

  float acc[PP][8];
#pragma unroll
  for (int p = 0; p < PP; p++)
#pragma unroll
    for (int a = 0; a < 8; a++) acc[p][a] = 0.f;

  fetch(0);
  stash(0);
  __syncthreads();
  for (int step = 0; step < steps; step++) {
    const int s = step & 1;
    if (step + 1 < steps) fetch(step + 1);  // global loads in flight during the math below
#pragma unroll
    for (int k = 0; k < TL_K; k++) {
      const float4 xa = *reinterpret_cast<const float4 *>(&Xs[s][k][ty * 4]);
      const float4 xb = PP == 8 ? *reinterpret_cast<const float4 *>(&Xs[s][k][64 + ty * 4]) : xa;
      const float4 ca = *reinterpret_cast<const float4 *>(&Cs[s][k][tx * 4]);
      const float4 cb = *reinterpret_cast<const float4 *>(&Cs[s][k][64 + tx * 4]);
      const float xv[8] = {xa.x, xa.y, xa.z, xa.w, xb.x, xb.y, xb.z, xb.w};
      const float cv[8] = {ca.x, ca.y, ca.z, ca.w, cb.x, cb.y, cb.z, cb.w};
#pragma unroll
      for (int p = 0; p < PP; p++)
#pragma unroll
        for (int a = 0; a < 8; a++) {
          if (DOT) {
            acc[p][a] = fmaf(xv[p], cv[a], acc[p][a]);
          } else {
            const float t = xv[p] - cv[a];
            acc[p][a] = fmaf(t, t, acc[p][a]);
          }
        }
    }
    if (step % kChunks == kChunks - 1) fold((step / kChunks) * TL_A, acc);
    // The other stage was last read before the previous barrier: safe to overwrite now.
    if (step + 1 < steps) stash(s ^ 1);
    __syncthreads();
  }
}
