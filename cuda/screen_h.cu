// screen_h: the exact assign through one fp16 tensor-core GEMM. Per pass:
//
//   prep_anchors   C -> Ch = fp16(s·(c − μ)) and ‖c''‖² (c'' = s·fl(c − μ)), the largest of them,
//                  and a flag when an anchor does not fit fp16 (then every point falls back).
//   screen_h       per point, the anchors with the smallest approximate distance
//                  a'' = ‖x''‖² + ‖c''‖² − 2·(xh·ch), packed as 32-bit keys (the distance's bits
//                  with the low bits replaced by the anchor index): the row's 8 (screen_h90 and
//                  screen_h90m: 16) and the smallest left out. The n × m matrix is never written:
//                  each thread keeps its rows' keys in registers.
//   exact_h        (exact.cuh) the candidates' distances by direct differences, Σ fmaf(x − c, x − c, ·)
//                  over k in order — the same f32 chain as the direct kernels (tile.cuh), so the
//                  same bits — and their top-2. The certificate: every anchor outside the list has
//                  a'' >= the left-out key's distance (truncated down), so a distance at least
//                  that minus B; when that exceeds the second exact distance, no outside anchor can
//                  be among the top-2 (nor tie with it). Otherwise the point is listed for
//                  collect_h / exact_collect, and what they cannot finish for the direct pass split
//                  over anchor slices (fallback_split, fallback_merge).
//
// So the assignments and distances are bit for bit those of the direct pass, whatever the
// rounding of the screen: μ (any fixed vector; the host uses the data's mean, so data far from the
// origin screen well) and s (a power of two that puts the values in fp16's range) only decide how
// many points fall back. The bound B and its derivation: src/backend/cuda/numerics.ts
// (screenHalfBound). Points are prepared once per engine (prep_points), anchors once per pass.
//
// GEMM layout: a block of 256 threads (8 warps) owns 128 points and walks over all anchors in
// tiles of 128, 32 dimensions (64 bytes a row) per step, in a 3-stage cp.async pipeline. Warp w
// computes points 32·(w & 3) .. +32 against anchors 64·(w >> 2) .. +64 of each tile with
// mma.sync m16n8k16 (f16 in, f32 accumulate): 2 × 8 tiles of 16 × 8, fragments by ldmatrix from
// shared rows whose 16-byte chunks are XOR-swizzled so that every ldmatrix is conflict-free.
// Each thread owns 4 point rows and keeps 5 keys per row; the 4 lanes that share rows, then the
// 2 warps, merge at the end.
#include "common.cuh"
#include "tile.cuh"
#include "top.cuh"
#include "keys.cuh"
#include "cp_async.cuh"
#include "exact.cuh"

#define SH_THREADS 256
#define SH_P 128     // points per block
#define SH_A 128     // anchors per tile
#define SH_K 32      // fp16 dimensions per pipeline step (64-byte rows)
#define SH_STAGES 3  // 3 × (128 + 128) rows × 64 bytes = 48 KB of static shared memory
#define FB_P 64      // listed points per chunk of fallback_split (tile.cuh with 4 points per thread)

// ---------------------------------------------------------------------------------------------
// Preparation: fp16 copies, scaled and centred, rows padded with zeros to dp (a multiple of 32).

// One warp per row: out[r] = fp16(s·fl(v − μ)) for k < d, 0 up to dp; norm[r] = Σ (s·fl(v − μ))²
// in f32. Rows >= rows (padding up to outRows): zeros, norm = padNorm.
template <typename T>
__device__ void prep_rows(const T *__restrict__ V, const float *__restrict__ mu, float s, int rows, int d, int dp,
                          int outRows, float padNorm, __half *__restrict__ out, float *__restrict__ norm,
                          unsigned *maxNorm, unsigned *overflow) {
  const int lane = threadIdx.x & 31;
  const long long warps = (long long)gridDim.x * (blockDim.x >> 5);
  for (long long r = (long long)blockIdx.x * (blockDim.x >> 5) + (threadIdx.x >> 5); r < outRows; r += warps) {
    float acc = 0.f;
    bool big = false;
    for (int k = lane; k < dp; k += 32) {
      float v = 0.f;
      if (r < rows && k < d) v = s * (load_f32(V, (size_t)r * d + k) - mu[k]);
      big |= !(fabsf(v) <= 65504.f);  // also NaN
      out[(size_t)r * dp + k] = __float2half_rn(v);
      acc = fmaf(v, v, acc);
    }
    for (int o = 16; o > 0; o >>= 1) acc += __shfl_xor_sync(0xffffffffu, acc, o);
    big = __any_sync(0xffffffffu, big);
    if (lane == 0) {
      if (r < rows) {
        norm[r] = acc;
        if (maxNorm) atomicMax(maxNorm, __float_as_uint(acc));  // non-negative floats order as integers
        if (big && overflow) *overflow = 1u;
      } else {
        norm[r] = padNorm;
      }
    }
  }
}

#define PREP_ARGS(T) const T *X, const float *mu, float s, int n, int d, int dp, int npad, __half *Xh, float *xn
extern "C" __global__ void __launch_bounds__(256) prep_points_f32(PREP_ARGS(float)) {
  prep_rows(X, mu, s, n, d, dp, npad, 0.f, Xh, xn, nullptr, nullptr);
}
extern "C" __global__ void __launch_bounds__(256) prep_points_f16(PREP_ARGS(__half)) {
  prep_rows(X, mu, s, n, d, dp, npad, 0.f, Xh, xn, nullptr, nullptr);
}
// The screen's scalars: [0] = max ‖c''‖² (as float bits), [1] = an anchor outside fp16, [2] = the
// length of exact_h's list, [3] unused, [4] = the length of exact_collect's list2 (the points the
// direct pass decides), [5] = how many of those are past fallback_split's cap. screen_reset zeroes
// [first .. 7]: all before a pass (first = 0), the lists' before each tile of a tiled pass (first = 2).
#define SH_SCALARS 8
extern "C" __global__ void __launch_bounds__(32) screen_reset(unsigned *scalars, int first) {
  if (threadIdx.x >= first && threadIdx.x < SH_SCALARS) scalars[threadIdx.x] = 0u;
}
// Padding anchors get ‖c''‖² = +inf: their keys sort after every real anchor's, so no j < m check
// is needed in the GEMM.
extern "C" __global__ void __launch_bounds__(256) prep_anchors(const float *C, const float *mu, float s, int m, int d,
                                                               int dp, int mpad, __half *Ch, float *cn,
                                                               unsigned *scalars) {
  prep_rows(C, mu, s, m, d, dp, mpad, __int_as_float(0x7f800000), Ch, cn, scalars, scalars + 1);
}

// ---------------------------------------------------------------------------------------------
// The GEMM with the keys in its epilogue.


__device__ __forceinline__ void ldmatrix_x4(unsigned (&r)[4], unsigned addr) {
  asm volatile("ldmatrix.sync.aligned.m8n8.x4.shared.b16 {%0,%1,%2,%3}, [%4];"
               : "=r"(r[0]), "=r"(r[1]), "=r"(r[2]), "=r"(r[3])
               : "r"(addr));
}

// acc (16×8 f32) += a (16×16 f16, row-major) · b (16×8 f16, column-major).
__device__ __forceinline__ void mma_f16(float (&acc)[4], const unsigned (&a)[4], unsigned b0, unsigned b1) {
  asm volatile("mma.sync.aligned.m16n8k16.row.col.f32.f16.f16.f32 {%0,%1,%2,%3}, {%4,%5,%6,%7}, {%8,%9}, {%0,%1,%2,%3};"
               : "+f"(acc[0]), "+f"(acc[1]), "+f"(acc[2]), "+f"(acc[3])
               : "r"(a[0]), "r"(a[1]), "r"(a[2]), "r"(a[3]), "r"(b0), "r"(b1));
}

// Byte offset of 16-byte chunk `c` (0..3) of row `r` in a stage array of 64-byte rows: the chunk
// index is XORed with (r >> 1) & 3, so the 8 rows an ldmatrix reads fall in 8 distinct bank groups.
__device__ __forceinline__ unsigned swz(int r, int c) { return (unsigned)(r * 64 + ((c ^ ((r >> 1) & 3)) << 4)); }

// Xh: npad × dp, Ch: mpad × dp (fp16, padded with zeros); xn, cn: their ‖·''‖² (cn = +inf past m).
// hmask clears the key's index bits. Out: per point the KEYS smallest keys (ascending), then the
// smallest key outside them, in `keys` (KEYS + 1 arrays of n).
//
// A finished tile of half_tiles: fn(q, j, distance) for each of the thread's 4 rows q and its 16
// anchors j (distance = ‖x‖² + ‖c‖² − 2·dot, as the screen bound assumes), then the accumulators
// are zeroed for the next tile. The mma.sync fragment layout lives here only.
template <typename F>
__device__ __forceinline__ void tile_dists(float (&acc)[2][8][4], int a0, int t, const float (&xr)[4], const float *cn, F &&fn) {
#pragma unroll
  for (int nt = 0; nt < 8; nt++) {
#pragma unroll
    for (int e = 0; e < 2; e++) {
      const unsigned j = (unsigned)(a0 + 8 * nt + 2 * t + e);
      const float cj = __ldg(cn + j);
#pragma unroll
      for (int q = 0; q < 4; q++) fn(q, j, fmaf(-2.f, acc[q >> 1][nt][2 * (q & 1) + e], xr[q] + cj));
    }
#pragma unroll
    for (int mt = 0; mt < 2; mt++)
#pragma unroll
      for (int e = 0; e < 4; e++) acc[mt][nt][e] = 0.f;
  }
}

// The GEMM loop both screen_h and collect_h run: the block's 128 points (row r of Xh is rowOf(r))
// against every tile of 128 anchors; fold(a0, acc) after each complete tile (anchors a0 + the
// warp's 64), which must leave acc zeroed.
// The caller's shared memory `smem` holds the stages: [SH_STAGES][points, anchors][128 rows × 64 bytes].
#define SH_SMEM (SH_STAGES * 2 * SH_P * 64)
template <typename RowOf, typename Fold>
__device__ __forceinline__ void half_tiles(unsigned char (*smem)[2][SH_P * 64], const __half *__restrict__ Xh,
                                           const __half *__restrict__ Ch, int dp, int mpad, RowOf rowOf, Fold fold) {
  const int tid = threadIdx.x, warp = tid >> 5, lane = tid & 31;
  const int wp = (warp & 3) * 32;   // the warp's first point within the block
  const int wa = (warp >> 2) * 64;  // the warp's first anchor within each tile
  const int kSteps = dp / SH_K;
  const int steps = kSteps * (mpad / SH_A);

  // Each stage: 128 point rows and 128 anchor rows of 4 chunks.
  auto load = [&](int stage, int step) {
    const int a0 = (step / kSteps) * SH_A, k0 = (step % kSteps) * SH_K;
#pragma unroll
    for (int h = 0; h < 2; h++) {
      const int c = tid + h * SH_THREADS, r = c >> 2, ch = c & 3;
      cp_async16(smem_u32(&smem[stage][0][0]) + swz(r, ch), Xh + (size_t)rowOf(r) * dp + k0 + ch * 8);
      cp_async16(smem_u32(&smem[stage][1][0]) + swz(r, ch), Ch + (size_t)(a0 + r) * dp + k0 + ch * 8);
    }
  };

  float acc[2][8][4];
#pragma unroll
  for (int mt = 0; mt < 2; mt++)
#pragma unroll
    for (int nt = 0; nt < 8; nt++)
#pragma unroll
      for (int e = 0; e < 4; e++) acc[mt][nt][e] = 0.f;

#pragma unroll
  for (int st = 0; st < SH_STAGES - 1; st++) {
    if (st < steps) load(st, st);
    cp_async_commit();
  }
  for (int step = 0; step < steps; step++) {
    cp_async_wait<SH_STAGES - 2>();  // this thread's copies for `step` have landed...
    __syncthreads();                 // ...and everyone's; everyone is done with step − 1's stage
    {
      const int next = step + SH_STAGES - 1;
      if (next < steps) load(next % SH_STAGES, next);
      cp_async_commit();
    }
    const unsigned xs = smem_u32(&smem[step % SH_STAGES][0][0]);
    const unsigned cs = smem_u32(&smem[step % SH_STAGES][1][0]);
#pragma unroll
    for (int ks = 0; ks < 2; ks++) {  // two k16 slices per 32-dimension step
      unsigned a[2][4];
#pragma unroll
      for (int mt = 0; mt < 2; mt++) ldmatrix_x4(a[mt], xs + swz(wp + 16 * mt + (lane & 15), 2 * ks + (lane >> 4)));
#pragma unroll
      for (int np = 0; np < 4; np++) {  // anchors 16·np .. +16 of the warp's 64: two n-tiles
        unsigned b[4];
        const int q = lane >> 3;
        ldmatrix_x4(b, cs + swz(wa + 16 * np + 8 * (q >> 1) + (lane & 7), 2 * ks + (q & 1)));
#pragma unroll
        for (int mt = 0; mt < 2; mt++) {
          mma_f16(acc[mt][2 * np], a[mt], b[0], b[1]);
          mma_f16(acc[mt][2 * np + 1], a[mt], b[2], b[3]);
        }
      }
    }
    if (step % kSteps == kSteps - 1) fold((step / kSteps) * SH_A + wa, acc);
  }
  cp_async_wait<0>();
  __syncthreads();  // the stages are free once everyone is past the loop (callers reuse them)
}

// A thread's 4 point rows within the block (accumulator row q = 2·mt + h).
__device__ __forceinline__ int half_row(int q) {
  const int warp = threadIdx.x >> 5, g = (threadIdx.x & 31) >> 2;
  return (warp & 3) * 32 + 16 * (q >> 1) + g + 8 * (q & 1);
}

template <int KEYS>
__device__ __forceinline__ void screen_h_body(const __half *__restrict__ Xh, const __half *__restrict__ Ch,
                                              const float *__restrict__ xn, const float *__restrict__ cn,
                                              const unsigned *__restrict__ scalars, int n, int dp, int mpad,
                                              unsigned hmask, unsigned *__restrict__ out) {
  const int tid = threadIdx.x, warp = tid >> 5, lane = tid & 31;
  const int g = lane >> 2, t = lane & 3;
  const int wp = (warp & 3) * 32;
  const int wa = (warp >> 2) * 64;
  const long long p0 = (long long)blockIdx.x * SH_P;
  __shared__ __align__(128) unsigned char smem[SH_STAGES][2][SH_P * 64];
  float xr[4];  // ‖x''‖² of the thread's rows
  unsigned keys[4][KEYS + 1];
#pragma unroll
  for (int q = 0; q < 4; q++) {
    xr[q] = xn[p0 + half_row(q)];
#pragma unroll
    for (int e = 0; e <= KEYS; e++) keys[q][e] = SH_EMPTY;
  }
  half_tiles(smem, Xh, Ch, dp, mpad, [&](int r) { return p0 + r; }, [&](int a0, float (&acc)[2][8][4]) {
    // A tile of anchors is complete: its keys into the rows' lists.
    tile_dists(acc, a0, t, xr, cn, [&](int q, unsigned j, float dist) {
      const unsigned key = (__float_as_uint(fmaxf(dist, 0.f)) & hmask) | j;
      if (key < keys[q][KEYS]) key_push<KEYS>(key, keys[q]);
    });
  });
  // The 4 lanes of a quad hold the same rows (other anchors), then the 2 warps that share rows:
  // their lists merge into the row's 8 keys (+ the smallest left out), the format exact_h reads.
  unsigned rows[4][SH_ROW + 1];
#pragma unroll
  for (int q = 0; q < 4; q++) {
#pragma unroll
    for (int e = 0; e <= SH_ROW; e++) rows[q][e] = e < KEYS ? keys[q][e] : e == SH_ROW ? keys[q][KEYS] : SH_EMPTY;
#pragma unroll
    for (int o = 1; o < 4; o <<= 1) {
      unsigned other[SH_ROW + 1];
#pragma unroll
      for (int e = 0; e <= SH_ROW; e++) other[e] = __shfl_xor_sync(0xffffffffu, rows[q][e], o);
      key_merge<SH_ROW>(other, rows[q]);
    }
  }
  unsigned *ms = reinterpret_cast<unsigned *>(&smem[0][0][0]);  // 128 rows × 9 keys (the stages are free)
  if (wa != 0 && t == 0) {
#pragma unroll
    for (int q = 0; q < 4; q++) {
      const int l = wp + 16 * (q >> 1) + g + 8 * (q & 1);
#pragma unroll
      for (int e = 0; e <= SH_ROW; e++) ms[(SH_ROW + 1) * l + e] = rows[q][e];
    }
  }
  __syncthreads();
  if (wa == 0 && t == 0) {
#pragma unroll
    for (int q = 0; q < 4; q++) {
      const int l = wp + 16 * (q >> 1) + g + 8 * (q & 1);
      unsigned other[SH_ROW + 1];
#pragma unroll
      for (int e = 0; e <= SH_ROW; e++) other[e] = ms[(SH_ROW + 1) * l + e];
      key_merge<SH_ROW>(other, rows[q]);
      const long long i = p0 + l;
      if (i < n) {
#pragma unroll
        for (int e = 0; e <= SH_ROW; e++) out[(size_t)e * n + i] = rows[q][e];
      }
    }
  }
}

extern "C" __global__ void __launch_bounds__(SH_THREADS, 2)
    screen_h(const __half *Xh, const __half *Ch, const float *xn, const float *cn, const unsigned *scalars, int n, int dp,
             int mpad, unsigned hmask, unsigned *keys) {
  screen_h_body<4>(Xh, Ch, xn, cn, scalars, n, dp, mpad, hmask, keys);
}

// ---------------------------------------------------------------------------------------------
// The exact decision (exact.cuh). Four threads per point, one per candidate; the quad then merges.

#define EXACT_H_ARGS(T) const T *X, const float *C, const float *xn, const unsigned *keys, unsigned *scalars, float c1, \
                        float c2, float c3, float c4, float s2, unsigned imask, int n, int d, int m, unsigned *J1,     \
                        float *D1, unsigned *J2, float *D2, unsigned *list, float *thr, unsigned *ccount, int cap
#define EXACT_H_PASS X, C, xn, keys, scalars, c1, c2, c3, c4, s2, imask, n, d, m, J1, D1, J2, D2, list, thr, ccount, cap
extern "C" __global__ void __launch_bounds__(256) exact_h_f32(EXACT_H_ARGS(float)) { exact_h<SH_ROW>(EXACT_H_PASS); }
extern "C" __global__ void __launch_bounds__(256) exact_h_f16(EXACT_H_ARGS(__half)) { exact_h<SH_ROW>(EXACT_H_PASS); }
// The same over the wide rows of screen_h90 / screen_h90m (SH_ROW_WIDE keys): at many anchors in
// isotropic clusters 9–16 anchors lie about as close as the runner-up, which 8 keys cannot certify.
extern "C" __global__ void __launch_bounds__(256, 3) exact_h16_f32(EXACT_H_ARGS(float)) { exact_h<SH_ROW_WIDE>(EXACT_H_PASS); }
extern "C" __global__ void __launch_bounds__(256, 3) exact_h16_f16(EXACT_H_ARGS(__half)) { exact_h<SH_ROW_WIDE>(EXACT_H_PASS); }

// ---------------------------------------------------------------------------------------------
// The points exact_h could not certify (many anchors nearly as close as the runner-up): the same
// fp16 GEMM over the listed points only, now gathering every anchor under the point's threshold
// (thr, from exact_h: all anchors that can be in the top-2 are under it) into its candidate list
// (at most ncand, chosen by the host; ccount counts them even past it); exact_collect measures them
// directly. Points with more candidates, an untrusted threshold (-1) or listed past `cap` go to list2.

extern "C" __global__ void __launch_bounds__(SH_THREADS, 2)
    collect_h(const __half *Xh, const __half *Ch, const float *xn, const float *cn, const unsigned *list,
              const unsigned *scalars, const float *thr, int cap, int dp, int mpad, unsigned *cand, unsigned *ccount,
              int ncand) {
  __shared__ __align__(128) unsigned char smem[SH_STAGES][2][SH_P * 64];
  const int total = min((int)scalars[2], cap);
  const int p0 = blockIdx.x * SH_P;
  if (p0 >= total) return;  // the list is shorter than the grid: the whole block leaves
  const int t = threadIdx.x & 3;
  float xr[4], T[4];
  int pos[4];
#pragma unroll
  for (int q = 0; q < 4; q++) {
    pos[q] = p0 + half_row(q);
    const bool live = pos[q] < total;
    T[q] = live ? thr[pos[q]] : -1.f;
    xr[q] = live ? xn[list[pos[q]]] : 0.f;
  }
  half_tiles(smem, Xh, Ch, dp, mpad, [&](int r) { return (long long)list[min(p0 + r, total - 1)]; },
             [&](int a0, float (&acc)[2][8][4]) {
               tile_dists(acc, a0, t, xr, cn, [&](int q, unsigned j, float dist) {
                 if (dist <= T[q]) {  // false for T = -1, and for padding anchors (+inf)
                   const unsigned slot = atomicAdd(ccount + pos[q], 1u);
                   if (slot < (unsigned)ncand) cand[(size_t)pos[q] * ncand + slot] = j;
                 }
               });
             });
}

#define COLLECT_ARGS(T) const T *X, const float *C, const unsigned *list, unsigned *scalars, const float *thr, int cap, \
                        const unsigned *cand, const unsigned *ccount, int ncand, int d, unsigned *J1, float *D1,       \
                        unsigned *J2, float *D2, unsigned *list2
#define COLLECT_PASS X, C, list, scalars, thr, cap, cand, ccount, ncand, d, J1, D1, J2, D2, list2
extern "C" __global__ void __launch_bounds__(256) exact_collect_f32(COLLECT_ARGS(float)) { exact_collect(COLLECT_PASS); }
extern "C" __global__ void __launch_bounds__(256) exact_collect_f16(COLLECT_ARGS(__half)) { exact_collect(COLLECT_PASS); }

// ---------------------------------------------------------------------------------------------
// The last resort: the direct pass over the points collect_h could not finish (list2), split over
// anchor slices so that a short list still fills the GPU. Block (x, y) takes list chunks of 64
// points x, x + gridDim.x, ... (at most `cap` listed points) against anchors [y·slice, (y + 1)·slice)
// with tile.cuh's loop (the same f32 chain as every direct distance) and writes that slice's top-2
// per point; fallback_merge merges the slices in order (lexicographic, so the result is the single
// pass's). Listed points past `cap` are left to assign_list over list + cap, with the count
// fallback_merge leaves in *rest.

template <typename T>
__device__ void fallback_split(const T *__restrict__ X, const float *__restrict__ C, int d, int m, int slice,
                               const unsigned *__restrict__ list, const unsigned *__restrict__ count, int cap,
                               unsigned long long *__restrict__ part) {
  const int total = min((int)*count, cap);
  const int a0 = blockIdx.y * slice;
  const int ms = min(slice, m - a0);
  if (ms <= 0) return;
  const int tx = threadIdx.x & 15, ty = threadIdx.x >> 4;
  for (long long p0 = (long long)blockIdx.x * FB_P; p0 < total; p0 += (long long)gridDim.x * FB_P) {
    float b1[4], b2[4];
    unsigned i1[4], i2[4];
#pragma unroll
    for (int p = 0; p < 4; p++) {
      b1[p] = b2[p] = __int_as_float(0x7f800000);
      i1[p] = i2[p] = NONE;
    }
    tile_loop<false, 4>(X, C + (size_t)a0 * d, total, d, ms, p0, [&](long long q) { return (long long)list[q]; },
                        [&](int t0, float (&acc)[4][8]) {
#pragma unroll
                          for (int a = 0; a < 8; a++) {
                            const int j = t0 + tl_local(tx, a);
                            if (j < ms) {
#pragma unroll
                              for (int p = 0; p < 4; p++) top2_push(acc[p][a], (unsigned)(a0 + j), b1[p], i1[p], b2[p], i2[p]);
                            }
#pragma unroll
                            for (int p = 0; p < 4; p++) acc[p][a] = 0.f;
                          }
                        });
#pragma unroll
    for (int p = 0; p < 4; p++) {
#pragma unroll
      for (int o = 8; o > 0; o >>= 1) top2_merge_xor(o, b1[p], i1[p], b2[p], i2[p]);
    }
    if (tx == 0) {
#pragma unroll
      for (int p = 0; p < 4; p++) {
        const long long q = p0 + tl_local(ty, p);
        if (q < total) {
          unsigned long long *o = part + 2 * ((size_t)blockIdx.y * cap + q);
          o[0] = ((unsigned long long)__float_as_uint(b1[p]) << 32) | i1[p];
          o[1] = ((unsigned long long)__float_as_uint(b2[p]) << 32) | i2[p];
        }
      }
    }
    __syncthreads();  // tile_loop's shared stages are reused by the next chunk
  }
}
#define SPLIT_ARGS(T) const T *X, const float *C, int d, int m, int slice, const unsigned *list, \
                      const unsigned *count, int cap, unsigned long long *part
extern "C" __global__ void __launch_bounds__(256, 2) fallback_split_f32(SPLIT_ARGS(float)) {
  fallback_split(X, C, d, m, slice, list, count, cap, part);
}
extern "C" __global__ void __launch_bounds__(256, 2) fallback_split_f16(SPLIT_ARGS(__half)) {
  fallback_split(X, C, d, m, slice, list, count, cap, part);
}

extern "C" __global__ void __launch_bounds__(256) fallback_merge(const unsigned long long *part, int slices, int cap,
                                                                 const unsigned *list, const unsigned *count,
                                                                 unsigned *rest, unsigned *J1, float *D1, unsigned *J2,
                                                                 float *D2) {
  const int total = min((int)*count, cap);
  const long long tid = (long long)blockIdx.x * blockDim.x + threadIdx.x;
  if (tid == 0) *rest = *count > (unsigned)cap ? *count - cap : 0u;
  for (long long q = tid; q < total; q += (long long)gridDim.x * blockDim.x) {
    float e1 = __int_as_float(0x7f800000), e2 = e1;
    unsigned j1 = NONE, j2 = NONE;
    for (int y = 0; y < slices; y++) {
      const unsigned long long *o = part + 2 * ((size_t)y * cap + q);
      for (int h = 0; h < 2; h++) {
        const unsigned long long v = o[h];
        if ((unsigned)v != NONE) top2_push(__uint_as_float((unsigned)(v >> 32)), (unsigned)v, e1, j1, e2, j2);
      }
    }
    const unsigned i = list[q];
    J1[i] = j1; D1[i] = e1; J2[i] = j2; D2[i] = e2;
  }
}
