// The register-tiled loop shared by assign.cu (direct differences) and screen.cu (dot products):
// a block of 256 threads owns 128 points and walks over all anchors in tiles of 128; each thread
// accumulates 8 points × 8 anchors. Points and anchors are staged through shared memory in chunks
// of 16 dimensions, double-buffered: while the block computes on one stage, the next chunk is
// already loading into registers and is stored into the other stage, so each chunk costs one
// barrier. Thread (ty, tx) owns points ty*4+{0..3}, 64+ty*4+{0..3} of the block and anchors
// tx*4+{0..3}, 64+tx*4+{0..3} of each tile (16-byte shared loads, broadcast across the warp).
#pragma once
#include "common.cuh"

#define TL_THREADS 256
#define TL_P 128  // points per block
#define TL_A 128  // anchors per tile
#define TL_K 16   // dimensions per chunk
#define TL_PAD 4  // shared row padding (keeps 16-byte alignment, spreads banks)

/** Local row index (0..127) of a thread's p-th point (or a-th anchor) within its block (tile). */
__device__ __forceinline__ int tl_local(int lane16, int p) { return p < 4 ? lane16 * 4 + p : 64 + lane16 * 4 + (p - 4); }

// DOT = false: acc += (x − c)²; DOT = true: acc += x·c. The block's points are q = p0 + local,
// valid when q < n; their row of X is q, or rowOf(q) when LISTED (the fallback list). fold(a0, acc)
// runs after each complete anchor tile starting at anchor a0 and must leave acc zeroed.
template <bool DOT, bool LISTED, typename T, typename RowOf, typename Fold>
__device__ __forceinline__ void tile_loop(const T *__restrict__ X, const float *__restrict__ C, int n, int d, int m,
                                          long long p0, RowOf rowOf, Fold fold) {
  __shared__ __align__(16) float Xs[2][TL_K][TL_P + TL_PAD];
  __shared__ __align__(16) float Cs[2][TL_K][TL_A + TL_PAD];
  const int tid = threadIdx.x, tx = tid & 15, ty = tid >> 4;
  const int kChunks = (d + TL_K - 1) / TL_K;
  const int steps = kChunks * ((m + TL_A - 1) / TL_A);

  // Staging: thread loads dimension tx of rows ty + 16r (r = 0..7) of the chunk. Addresses are
  // one base pointer plus a constant stride (16 rows), validity a bit mask computed once for the
  // points and once per tile for the anchors: the fetch costs a few instructions per element
  // (the compiler's per-element 64-bit address arithmetic had cost a quarter of the issue slots).
  const size_t stride = (size_t)16 * d;
  const T *xbase = X + (size_t)(p0 + ty) * d + tx;  // LIST: unused, rows come from rowOf
  unsigned xmask = 0;
#pragma unroll
  for (int r = 0; r < 8; r++) xmask |= (p0 + ty + 16 * r < n ? 1u : 0u) << r;
  float xr[8], cr[8];
  auto fetch = [&](int a0, int k0) {
    const bool kin = k0 + tx < d;
    const float *cq = C + (size_t)(a0 + ty) * d + k0 + tx;
#pragma unroll
    for (int r = 0; r < 8; r++) {
      if (LISTED) {
        const long long q = p0 + ty + 16 * r;
        xr[r] = (kin && (xmask >> r & 1u)) ? load_f32(X, (size_t)rowOf(q) * d + k0 + tx) : 0.f;
      } else {
        xr[r] = (kin && (xmask >> r & 1u)) ? load_f32(xbase, k0 + r * stride) : 0.f;
      }
      cr[r] = (kin && a0 + ty + 16 * r < m) ? __ldg(cq + r * stride) : 0.f;
    }
  };
  auto stash = [&](int s) {
#pragma unroll
    for (int r = 0; r < 8; r++) {
      Xs[s][tx][ty + 16 * r] = xr[r];
      Cs[s][tx][ty + 16 * r] = cr[r];
    }
  };
  float acc[8][8];
#pragma unroll
  for (int p = 0; p < 8; p++)
#pragma unroll
    for (int a = 0; a < 8; a++) acc[p][a] = 0.f;

  // (a0, k0) of the current chunk and (na0, nk0) of the next, advanced without divisions.
  int a0 = 0, k0 = 0;
  fetch(0, 0);
  stash(0);
  __syncthreads();
  for (int step = 0; step < steps; step++) {
    const int s = step & 1;
    const bool lastChunk = k0 + TL_K >= d;
    const int na0 = lastChunk ? a0 + TL_A : a0, nk0 = lastChunk ? 0 : k0 + TL_K;
    if (step + 1 < steps) fetch(na0, nk0);  // global loads in flight during the math below
#pragma unroll
    for (int k = 0; k < TL_K; k++) {
      const float4 xa = *reinterpret_cast<const float4 *>(&Xs[s][k][ty * 4]);
      const float4 xb = *reinterpret_cast<const float4 *>(&Xs[s][k][64 + ty * 4]);
      const float4 ca = *reinterpret_cast<const float4 *>(&Cs[s][k][tx * 4]);
      const float4 cb = *reinterpret_cast<const float4 *>(&Cs[s][k][64 + tx * 4]);
      const float xv[8] = {xa.x, xa.y, xa.z, xa.w, xb.x, xb.y, xb.z, xb.w};
      const float cv[8] = {ca.x, ca.y, ca.z, ca.w, cb.x, cb.y, cb.z, cb.w};
#pragma unroll
      for (int p = 0; p < 8; p++)
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
    if (lastChunk) fold(a0, acc);
    // The other stage was last read before the previous barrier: safe to overwrite now.
    if (step + 1 < steps) stash(s ^ 1);
    __syncthreads();
    a0 = na0;
    k0 = nk0;
  }
}
