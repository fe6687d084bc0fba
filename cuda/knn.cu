// knn: exact brute-force k nearest neighbours (squared L2, f32), the GPU's ExactKnn
// (src/backend/cuda/knn.ts). Distances by direct differences Σ (q − x)², never the expansion
// ‖q‖² − 2q·x + ‖x‖² (docs/algorithm.md: exact far from the origin too). Nothing nq × nb is ever written.
//   knn_scan:  block (query group g = blockIdx.x, base chunk c = blockIdx.y). KN_Q queries × the
//              chunk's rows, KN_B rows per tile, the dimensions staged in shared memory KN_DK at a
//              time. Warp w owns queries 4w..4w+3 of the group; lane l computes their distances to
//              rows l, l+32, l+64, l+96 of the tile (a 4 × 4 register tile), so the distances a
//              warp computes are exactly those its own lists need: no distance tile in shared
//              memory. Each query's running top-k (k <= KN_MAXK) lives in the warp's registers,
//              sorted by (distance, id), position p at lane p % 32, slot p / 32; a candidate enters
//              only if it is strictly below the k-th distance (ids grow through the scan, so an
//              equal distance keeps the lower id), which after the first rows is rare. The chunk's
//              list is written to part[(q · chunks + c) · k + p] (missing: +∞, id −1).
//   knn_merge: one warp per query merges the chunks' lists (same registers, comparison by
//              (distance, id)) into its final k.
// Summation order: per (query, row) one thread, k = 0..d−1 in order, fmaf(t, t, s).
#include "common.cuh"

#define KN_THREADS 256
#define KN_Q 32      // queries per block (8 warps × 4)
#define KN_QW 4      // queries per warp
#define KN_B 128     // base rows per tile (4 per lane)
#define KN_DK 16     // dimensions per shared-memory stage
#define KN_SLOTS 4   // list entries per lane: k <= 32 · KN_SLOTS
#define KN_MAXK 128
#define FULL 0xffffffffu

// (da, ia) before (db, ib): lower distance, then lower id (ids compared unsigned: −1 goes last).
__device__ __forceinline__ bool kn_before(float da, int ia, float db, int ib) {
  return da < db || (da == db && (unsigned)ia < (unsigned)ib);
}

// The entry at position k − 1 of a warp's list (the same on every lane).
__device__ __forceinline__ void kn_kth(const float (&ld)[KN_SLOTS], const int (&li)[KN_SLOTS], int k, float &td, int &ti) {
  const int s = (k - 1) >> 5, lane = (k - 1) & 31;
  float vd = ld[0];
  int vi = li[0];
#pragma unroll
  for (int t = 1; t < KN_SLOTS; t++)
    if (s == t) { vd = ld[t]; vi = li[t]; }
  td = __shfl_sync(FULL, vd, lane);
  ti = __shfl_sync(FULL, vi, lane);
}

// Insert (v, id) into a warp's sorted list (every lane calls it with the same v, id): entries
// before it stay, the rest move one position up (the last falls off).
__device__ __forceinline__ void kn_insert(float (&ld)[KN_SLOTS], int (&li)[KN_SLOTS], float v, int id, int lane) {
  int pos = 0;
#pragma unroll
  for (int s = 0; s < KN_SLOTS; s++) pos += __popc(__ballot_sync(FULL, kn_before(ld[s], li[s], v, id)));
#pragma unroll
  for (int s = KN_SLOTS - 1; s >= 0; s--) {
    float pd = __shfl_up_sync(FULL, ld[s], 1);
    int pi = __shfl_up_sync(FULL, li[s], 1);
    if (s > 0) {
      const float wd = __shfl_sync(FULL, ld[s > 0 ? s - 1 : 0], 31);
      const int wi = __shfl_sync(FULL, li[s > 0 ? s - 1 : 0], 31);
      if (lane == 0) { pd = wd; pi = wi; }
    }
    const int p = lane + 32 * s;
    if (p == pos) { ld[s] = v; li[s] = id; }
    else if (p > pos) { ld[s] = pd; li[s] = pi; }
  }
}

// Offer the warp's candidates (each lane one: ok, v, id) to a list whose k-th entry is (td, ti);
// they enter in lane order, each re-tested against the k-th as it is then. SCAN: the ids grow
// with the lane and through the scan, so a candidate must be strictly below the k-th distance
// (as the CPU's: an equal distance keeps the lower id, and +∞ or NaN never enters); the merge
// compares (distance, id).
template <bool SCAN>
__device__ __forceinline__ bool kn_better(float v, int id, float td, int ti) {
  return SCAN ? v < td : kn_before(v, id, td, ti);
}

template <bool SCAN>
__device__ __forceinline__ void kn_offer(float (&ld)[KN_SLOTS], int (&li)[KN_SLOTS], float &td, int &ti, int k,
                                         bool ok, float v, int id, int lane) {
  unsigned want = __ballot_sync(FULL, ok && kn_better<SCAN>(v, id, td, ti));
  while (want) {
    const int src = __ffs(want) - 1;
    want &= want - 1;
    const float cv = __shfl_sync(FULL, v, src);
    const int ci = __shfl_sync(FULL, id, src);
    if (kn_better<SCAN>(cv, ci, td, ti)) {
      kn_insert(ld, li, cv, ci, lane);
      kn_kth(ld, li, k, td, ti);
    }
  }
}

// QT: the queries transposed, d × nqPad (column q = query q; nqPad a multiple of KN_Q, padding 0).
// X: nb × d base rows. Chunk c covers rows [c · chunkRows, min(nb, (c + 1) · chunkRows)).
extern "C" __global__ void __launch_bounds__(KN_THREADS, 2)
knn_scan(const float *QT, int nqPad, int nq, const float *X, int nb, int d, int k, int chunkRows, float *partD, int *partI) {
  __shared__ __align__(16) float qs[KN_DK][KN_Q];
  __shared__ float xs[KN_DK][KN_B + 1];
  const int tid = threadIdx.x, lane = tid & 31, warp = tid >> 5;
  const int q0 = blockIdx.x * KN_Q, c = blockIdx.y, chunks = gridDim.y;
  const long long r0 = (long long)c * chunkRows, r1 = min((long long)nb, r0 + chunkRows);

  float ld[KN_QW][KN_SLOTS];
  int li[KN_QW][KN_SLOTS];
  float td[KN_QW];
  int ti[KN_QW];
#pragma unroll
  for (int i = 0; i < KN_QW; i++) {
#pragma unroll
    for (int s = 0; s < KN_SLOTS; s++) { ld[i][s] = __int_as_float(0x7f800000); li[i][s] = -1; }
    td[i] = __int_as_float(0x7f800000);
    ti[i] = -1;
  }

  for (long long b0 = r0; b0 < r1; b0 += KN_B) {
    float acc[KN_QW][4];
#pragma unroll
    for (int i = 0; i < KN_QW; i++)
#pragma unroll
      for (int j = 0; j < 4; j++) acc[i][j] = 0.f;
    for (int k0 = 0; k0 < d; k0 += KN_DK) {
      // Stage KN_DK dimensions of the group's queries and of the tile's rows (zeros past d and past r1).
      for (int e = tid; e < KN_DK * KN_Q; e += KN_THREADS) {
        const int kk = e / KN_Q, q = e % KN_Q;
        qs[kk][q] = k0 + kk < d ? QT[(size_t)(k0 + kk) * nqPad + q0 + q] : 0.f;
      }
      for (int e = tid; e < KN_DK * KN_B; e += KN_THREADS) {
        const int row = e / KN_DK, kk = e % KN_DK;
        const long long r = b0 + row;
        xs[kk][row] = r < r1 && k0 + kk < d ? __ldg(X + (size_t)r * d + k0 + kk) : 0.f;
      }
      __syncthreads();
#pragma unroll
      for (int kk = 0; kk < KN_DK; kk++) {
        const float4 q4 = *reinterpret_cast<const float4 *>(&qs[kk][warp * KN_QW]);
        const float qv[4] = {q4.x, q4.y, q4.z, q4.w};
#pragma unroll
        for (int j = 0; j < 4; j++) {
          const float xv = xs[kk][lane + 32 * j];
#pragma unroll
          for (int i = 0; i < KN_QW; i++) {
            const float t = qv[i] - xv;
            acc[i][j] = fmaf(t, t, acc[i][j]);
          }
        }
      }
      __syncthreads();
    }
    // Rows in id order: j outer, lanes inner.
#pragma unroll
    for (int j = 0; j < 4; j++) {
      const long long r = b0 + lane + 32 * j;
#pragma unroll
      for (int i = 0; i < KN_QW; i++) kn_offer<true>(ld[i], li[i], td[i], ti[i], k, r < r1, acc[i][j], (int)r, lane);
    }
  }

#pragma unroll
  for (int i = 0; i < KN_QW; i++) {
    const int q = q0 + warp * KN_QW + i;
    if (q >= nq) continue;
    const size_t out = ((size_t)q * chunks + c) * k;
#pragma unroll
    for (int s = 0; s < KN_SLOTS; s++) {
      const int p = lane + 32 * s;
      if (p < k) { partD[out + p] = ld[i][s]; partI[out + p] = li[i][s]; }
    }
  }
}

// One warp per query: the chunks' lists (chunks × k entries, from knn_scan) merged into its k.
extern "C" __global__ void __launch_bounds__(KN_THREADS)
knn_merge(const float *partD, const int *partI, int nq, int chunks, int k, float *outD, int *outI) {
  const int lane = threadIdx.x & 31;
  const int q = blockIdx.x * (KN_THREADS / 32) + (threadIdx.x >> 5);
  if (q >= nq) return;  // whole warps leave together
  float ld[KN_SLOTS];
  int li[KN_SLOTS];
#pragma unroll
  for (int s = 0; s < KN_SLOTS; s++) { ld[s] = __int_as_float(0x7f800000); li[s] = -1; }
  float td = ld[0];
  int ti = -1;
  const size_t base = (size_t)q * chunks * k, count = (size_t)chunks * k;
  for (size_t e0 = 0; e0 < count; e0 += 32) {
    const size_t e = e0 + lane;
    const bool in = e < count;
    const float v = in ? partD[base + e] : 0.f;
    const int id = in ? partI[base + e] : -1;
    kn_offer<false>(ld, li, td, ti, k, in && id >= 0, v, id, lane);
  }
#pragma unroll
  for (int s = 0; s < KN_SLOTS; s++) {
    const int p = lane + 32 * s;
    if (p < k) { outD[(size_t)q * k + p] = ld[s]; outI[(size_t)q * k + p] = li[s]; }
  }
}
