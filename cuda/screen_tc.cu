// screen_tc: the screen of screen.cu on tensor cores. Same inputs and outputs as screen_top2 (per
// point the three most promising anchors J1..J3, the second and fourth approximate distances a2,
// a4), so screen_exact and the fallback list (assign_list) still make every assignment exactly
// that of the direct pass; only the dot products x·c come from mma.sync TF32 instructions
// instead of f32 FMAs, and the bound B that screen_exact applies is larger.
//
// Precision ("3xTF32"): TF32 keeps 11 significant bits. Each value v is split v = hi + lo + e with
// hi = tf32(v), lo = tf32(v − hi) (v − hi is exact in f32) and |e| <= 2^-22·|v|; then
// x·c ≈ Σ hi·hi' + hi·lo' + lo·hi'. Products of 11-bit significands are exact in f32; the dropped
// lo·lo' and e terms are below 3·2^-22·|x_k c_k| per element. f16 vectors are exact in TF32 (lo = 0)
// so their lo·hi' product is skipped. The host's screenBound() (src/backend/cuda/numerics.ts) turns
// this into B, allowing each mma a generous accumulation error (tensor cores align and truncate
// rather than round).
//
// Layout: a block of 256 threads (8 warps) owns 128 points and walks over all anchors in tiles of
// 128; dimensions come in chunks of 16, staged through registers into double-buffered shared
// memory as in tile.cuh (row-major with a stride of 20 floats, so every fragment load below hits
// 32 distinct banks). Warp w computes points 32·(w & 3) .. +32 against anchors 64·(w >> 2) .. +64
// of each tile: 2 × 8 mma tiles of 16 × 8. A thread holds 4 points × 16 anchors of the results and
// keeps a running best-3 list for each of its 4 points; at the end the 4 lanes that share a point,
// then the 2 warps that share it, merge their lists.
#include "common.cuh"
#include "top.cuh"

#define TC_THREADS 256
#define TC_P 128  // points per block
#define TC_A 128  // anchors per tile

__device__ __forceinline__ unsigned to_tf32(float v) {
  unsigned r;
  asm("cvt.rna.tf32.f32 %0, %1;" : "=r"(r) : "f"(v));
  return r;
}

// v ≈ hi + lo, both TF32 (see the top of the file).
__device__ __forceinline__ void split_tf32(float v, unsigned &hi, unsigned &lo) {
  hi = to_tf32(v);
  lo = to_tf32(v - __uint_as_float(hi));
}

// acc (16×8, f32) += a (16×8, row-major) · b (8×8, column-major), TF32 inputs. Fragments: with
// g = lane / 4 and t = lane % 4, a = rows g, g+8 × columns t, t+4 as {(g,t), (g+8,t), (g,t+4),
// (g+8,t+4)}; b = rows t, t+4 of column g; acc = {(g,2t), (g,2t+1), (g+8,2t), (g+8,2t+1)}.
__device__ __forceinline__ void mma_tf32(float (&acc)[4], const unsigned (&a)[4], const unsigned (&b)[2]) {
  asm("mma.sync.aligned.m16n8k8.row.col.f32.tf32.tf32.f32 {%0,%1,%2,%3}, {%4,%5,%6,%7}, {%8,%9}, {%0,%1,%2,%3};"
      : "+f"(acc[0]), "+f"(acc[1]), "+f"(acc[2]), "+f"(acc[3])
      : "r"(a[0]), "r"(a[1]), "r"(a[2]), "r"(a[3]), "r"(b[0]), "r"(b[1]));
}

// Local row (of the block's 128 points) of a thread's p-th point, p = 2·mt + h.
__device__ __forceinline__ int tc_row(int wp, int g, int p) { return wp + 16 * (p >> 1) + g + 8 * (p & 1); }

// SPLIT_X = false for f16 vectors (exact in TF32: no lo part). The chunks sit in shared memory as
// f32 and each warp splits the values it loads: measured faster (docs/cuda.md, the variants table)
// than splitting once when staging (hi and lo arrays, chunks of 8 dimensions to stay within 48 KB),
// which doubles the shared loads and the barriers.
template <typename T, bool SPLIT_X>
__device__ void screen_tc(const T *__restrict__ X, const float *__restrict__ C, const float *__restrict__ xx,
                          const float *__restrict__ cc, int n, int d, int m,
                          unsigned *__restrict__ J1, unsigned *__restrict__ J2, unsigned *__restrict__ J3,
                          float *__restrict__ A2, float *__restrict__ A4) {
  constexpr int K = 16;                        // dimensions per chunk
  constexpr int LD = 20;                       // row stride in words: fragment loads hit 32 distinct banks
  constexpr int ARR = TC_P * LD;               // words per array per stage
  constexpr int ROWS = TC_P * K / TC_THREADS;  // rows each thread stages per chunk, points and anchors
  __shared__ __align__(16) unsigned smem[4 * ARR];  // 2 stages × [X, C]
  const int tid = threadIdx.x, warp = tid >> 5, lane = tid & 31;
  const int g = lane >> 2, t = lane & 3;
  const int wp = (warp & 3) * 32;   // the warp's first point within the block
  const int wa = (warp >> 2) * 64;  // the warp's first anchor within each tile
  const long long p0 = (long long)blockIdx.x * TC_P;
  const int kChunks = (d + K - 1) / K;
  const int steps = kChunks * ((m + TC_A - 1) / TC_A);

  float xn[4], b1[4], b2[4], b3[4], b4[4];
  unsigned i1[4], i2[4], i3[4];
#pragma unroll
  for (int p = 0; p < 4; p++) {
    const long long i = p0 + tc_row(wp, g, p);
    xn[p] = i < n ? xx[i] : 0.f;
    b1[p] = b2[p] = b3[p] = b4[p] = __int_as_float(0x7f800000);
    i1[p] = i2[p] = i3[p] = NONE;
  }

  // Staging: thread loads dimension sk of rows sr + (256/K)·r (r < ROWS) of the chunk, points and
  // anchors; stash() stores them into stage s.
  const int sk = tid % K, sr = tid / K;
  float xr[ROWS], cr[ROWS];
  auto fetch = [&](int step) {
    const int a0 = (step / kChunks) * TC_A;
    const int k = (step % kChunks) * K + sk;
    const bool kin = k < d;
#pragma unroll
    for (int r = 0; r < ROWS; r++) {
      const int row = sr + (TC_THREADS / K) * r;
      const long long q = p0 + row;
      xr[r] = (kin && q < n) ? load_f32(X, (size_t)q * d + k) : 0.f;
      const int j = a0 + row;
      cr[r] = (kin && j < m) ? __ldg(C + (size_t)j * d + k) : 0.f;
    }
  };
  auto stash = [&](int s) {
    unsigned *st = smem + s * 2 * ARR;
#pragma unroll
    for (int r = 0; r < ROWS; r++) {
      const int e = (sr + (TC_THREADS / K) * r) * LD + sk;
      st[e] = __float_as_uint(xr[r]);
      st[ARR + e] = __float_as_uint(cr[r]);
    }
  };

  float acc[2][8][4];
#pragma unroll
  for (int mt = 0; mt < 2; mt++)
#pragma unroll
    for (int nt = 0; nt < 8; nt++)
#pragma unroll
      for (int e = 0; e < 4; e++) acc[mt][nt][e] = 0.f;

  fetch(0);
  stash(0);
  __syncthreads();
  for (int step = 0; step < steps; step++) {
    const int s = step & 1;
    if (step + 1 < steps) fetch(step + 1);  // global loads in flight during the math below
    const unsigned *xs = smem + s * 2 * ARR, *cs = xs + ARR;
#pragma unroll
    for (int k8 = 0; k8 < K; k8 += 8) {
      // Fragments (mma_tf32's layout): A rows g, g+8 of each 16-point slab, B anchors g of each 8.
      unsigned ah[2][4], al[2][4], bh[8][2], bl[8][2];
#pragma unroll
      for (int mt = 0; mt < 2; mt++) {
        const int e0 = (wp + 16 * mt + g) * LD + k8 + t;
        const int es[4] = {e0, e0 + 8 * LD, e0 + 4, e0 + 8 * LD + 4};
#pragma unroll
        for (int q = 0; q < 4; q++) {
          if (SPLIT_X) {
            split_tf32(__uint_as_float(xs[es[q]]), ah[mt][q], al[mt][q]);
          } else {
            ah[mt][q] = to_tf32(__uint_as_float(xs[es[q]]));
          }
        }
      }
#pragma unroll
      for (int nt = 0; nt < 8; nt++) {
        const int e0 = (wa + 8 * nt + g) * LD + k8 + t;
#pragma unroll
        for (int q = 0; q < 2; q++) split_tf32(__uint_as_float(cs[e0 + 4 * q]), bh[nt][q], bl[nt][q]);
      }
      // One product kind at a time over all 16 tiles, so consecutive mma are independent.
#pragma unroll
      for (int mt = 0; mt < 2; mt++)
#pragma unroll
        for (int nt = 0; nt < 8; nt++) mma_tf32(acc[mt][nt], ah[mt], bl[nt]);
      if (SPLIT_X) {
#pragma unroll
        for (int mt = 0; mt < 2; mt++)
#pragma unroll
          for (int nt = 0; nt < 8; nt++) mma_tf32(acc[mt][nt], al[mt], bh[nt]);
      }
#pragma unroll
      for (int mt = 0; mt < 2; mt++)
#pragma unroll
        for (int nt = 0; nt < 8; nt++) mma_tf32(acc[mt][nt], ah[mt], bh[nt]);
    }
    if (step % kChunks == kChunks - 1) {
      // A tile of anchors is complete: approximate distances into the running lists.
      const int a0 = (step / kChunks) * TC_A;
#pragma unroll
      for (int nt = 0; nt < 8; nt++) {
#pragma unroll
        for (int e = 0; e < 2; e++) {
          const int j = a0 + wa + 8 * nt + 2 * t + e;
          if (j < m) {
            const float cj = __ldg(cc + j);
#pragma unroll
            for (int p = 0; p < 4; p++)
              push4((xn[p] + cj) - 2.f * acc[p >> 1][nt][2 * (p & 1) + e], (unsigned)j, b1[p], i1[p], b2[p], i2[p],
                    b3[p], i3[p], b4[p]);
          }
        }
#pragma unroll
        for (int mt = 0; mt < 2; mt++)
#pragma unroll
          for (int e = 0; e < 4; e++) acc[mt][nt][e] = 0.f;
      }
    }
    // The other stage was last read before the previous barrier: safe to overwrite now.
    if (step + 1 < steps) stash(s ^ 1);
    __syncthreads();
  }

  // Merge the lists of the 4 lanes that share each point (they hold different anchors).
#pragma unroll
  for (int p = 0; p < 4; p++) {
#pragma unroll
    for (int o = 1; o < 4; o <<= 1) merge4_xor(o, b1[p], i1[p], b2[p], i2[p], b3[p], i3[p], b4[p]);
  }
  // Then the two warps that share each point, through shared memory (free since the last barrier).
  float *mf = reinterpret_cast<float *>(smem);  // 128 points × (a1, a2, a3, a4)
  unsigned *mi = smem + 4 * TC_P;                // 128 points × (j1, j2, j3)
  if (wa != 0 && t == 0) {
#pragma unroll
    for (int p = 0; p < 4; p++) {
      const int l = tc_row(wp, g, p);
      mf[4 * l] = b1[p]; mf[4 * l + 1] = b2[p]; mf[4 * l + 2] = b3[p]; mf[4 * l + 3] = b4[p];
      mi[3 * l] = i1[p]; mi[3 * l + 1] = i2[p]; mi[3 * l + 2] = i3[p];
    }
  }
  __syncthreads();
  if (wa == 0 && t == 0) {
#pragma unroll
    for (int p = 0; p < 4; p++) {
      const int l = tc_row(wp, g, p);
      merge4(mf[4 * l], mi[3 * l], mf[4 * l + 1], mi[3 * l + 1], mf[4 * l + 2], mi[3 * l + 2], mf[4 * l + 3],
             b1[p], i1[p], b2[p], i2[p], b3[p], i3[p], b4[p]);
      const long long i = p0 + l;
      if (i < n) {
        J1[i] = i1[p]; J2[i] = i2[p]; J3[i] = i3[p];
        A2[i] = b2[p]; A4[i] = b4[p];
      }
    }
  }
}

#define TC_ARGS(T) const T *X, const float *C, const float *xx, const float *cc, int n, int d, int m, \
                   unsigned *J1, unsigned *J2, unsigned *J3, float *A2, float *A4
extern "C" __global__ void __launch_bounds__(TC_THREADS, 1) screen_tc_f32(TC_ARGS(float)) {
  screen_tc<float, true>(X, C, xx, cc, n, d, m, J1, J2, J3, A2, A4);
}
extern "C" __global__ void __launch_bounds__(TC_THREADS, 1) screen_tc_f16(TC_ARGS(__half)) {
  screen_tc<__half, false>(X, C, xx, cc, n, d, m, J1, J2, J3, A2, A4);
}
