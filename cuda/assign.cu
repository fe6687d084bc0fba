// assign: for every point its nearest anchor j1 (distance d1) and runner-up j2 (d2), by direct
// differences Σ_k (x_ik − c_jk)² in f32 (docs/algorithm.md: never the norm expansion). No n×m matrix:
// the minimum is fused into the distance loop.
//
// The tiling (cuda/tile.cuh): 64 points per block against anchor tiles of 128, 4×8 per thread,
// double-buffered 16-dimension chunks. Each thread keeps a running top-2 of its 4 points over its
// anchors; the 16 threads that share points merge their top-2s with warp shuffles at the end.
// Ties: the pair (distance, index) is compared lexicographically, so the lowest index wins.
#include "tile.cuh"
#include "top.cuh"


#define AS_THREADS TL_THREADS

// LIST: the block's points are list[p0 ..] (the screen's fallback list, *listCount long) instead
// of p0 .., so the same kernel finishes the points the screen could not decide (screen.cu).
template <typename T, bool LIST, int PP>
__device__ void assign_top2(const T *__restrict__ X, const float *__restrict__ C, int n, int d, int m,
                            unsigned *__restrict__ outJ1, float *__restrict__ outD1,
                            unsigned *__restrict__ outJ2, float *__restrict__ outD2,
                            const unsigned *__restrict__ list, const unsigned *__restrict__ listCount) {
  const int tx = threadIdx.x & 15, ty = threadIdx.x >> 4;
  const long long p0 = (long long)blockIdx.x * (16 * PP);
  if (LIST) {
    n = (int)*listCount;  // points in the list; blocks past it have nothing to do
    if (p0 >= n) return;
  }
  // Row of X (and of the outputs) of the block's q-th point.
  auto rowOf = [&](long long q) -> long long { return LIST ? (long long)list[q] : q; };

  float b1[PP], b2[PP];
  unsigned i1[PP], i2[PP];
#pragma unroll
  for (int p = 0; p < PP; p++) {
    b1[p] = b2[p] = __int_as_float(0x7f800000);
    i1[p] = i2[p] = 0xffffffffu;
  }
  tile_loop<false, PP>(X, C, n, d, m, p0, rowOf, [&](int a0, float (&acc)[PP][8]) {
#pragma unroll
    for (int a = 0; a < 8; a++) {
      const int j = a0 + tl_local(tx, a);
      if (j < m) {
#pragma unroll
        for (int p = 0; p < PP; p++) top2_push(acc[p][a], (unsigned)j, b1[p], i1[p], b2[p], i2[p]);
      }
#pragma unroll
      for (int p = 0; p < PP; p++) acc[p][a] = 0.f;
    }
  });

  // Merge the top-2s of the 16 threads (same ty, lanes of one half-warp) that share each point.
#pragma unroll
  for (int p = 0; p < PP; p++) {
#pragma unroll
    for (int o = 8; o > 0; o >>= 1) top2_merge_xor(o, b1[p], i1[p], b2[p], i2[p]);
  }
  if (tx == 0) {
#pragma unroll
    for (int p = 0; p < PP; p++) {
      const long long q = p0 + tl_local(ty, p);
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

// One build: PP = 4 points per thread, 64 points per block (AS_P), about 115 registers so two
// blocks (16 warps) fit on an SM (tile.cuh). docs/cuda.md has the measurements that chose it over
// PP = 8 (one block per SM) for both the full pass and the fallback list.
#define AS_PP 4
#define AS_P 64  // points per block: 16·AS_PP
static_assert(AS_P == 16 * AS_PP, "AS_P is the block's points");
#define ASSIGN_ARGS(T) const T *X, const float *C, int n, int d, int m, unsigned *j1, float *d1, unsigned *j2, float *d2
extern "C" __global__ void __launch_bounds__(AS_THREADS, 2) assign_top2_f32(ASSIGN_ARGS(float)) {
  assign_top2<float, false, AS_PP>(X, C, n, d, m, j1, d1, j2, d2, nullptr, nullptr);
}
extern "C" __global__ void __launch_bounds__(AS_THREADS, 2) assign_top2_f16(ASSIGN_ARGS(__half)) {
  assign_top2<__half, false, AS_PP>(X, C, n, d, m, j1, d1, j2, d2, nullptr, nullptr);
}
// The screen's fallback: the same exact pass over the listed points only (a few % of n, so the
// smaller blocks of this build spread them over more of the GPU).
extern "C" __global__ void __launch_bounds__(AS_THREADS, 2)
assign_list_f32(ASSIGN_ARGS(float), const unsigned *list, const unsigned *count) {
  assign_top2<float, true, AS_PP>(X, C, n, d, m, j1, d1, j2, d2, list, count);
}
extern "C" __global__ void __launch_bounds__(AS_THREADS, 2)
assign_list_f16(ASSIGN_ARGS(__half), const unsigned *list, const unsigned *count) {
  assign_top2<__half, true, AS_PP>(X, C, n, d, m, j1, d1, j2, d2, list, count);
}
