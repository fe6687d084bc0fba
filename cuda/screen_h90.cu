// screen_h90: screen_h (screen_h.cu) on Hopper's warpgroup tensor-core instructions (wgmma), for
// the sm_90a build of this file (build/screen_h90.ptx; the loader picks it for compute capability
// 9.0 and falls back to screen_h elsewhere). Same inputs, the same keys out (the row's 8 smallest,
// or 16 for screen_h90 and screen_h90m, and the smallest left out): prep_anchors, exact_h (exact_h16)
// and the fallback kernels of screen_h.cu serve both.
//
// Layout: a block of 256 threads is two warpgroups; each owns 64 of the block's 128 points and
// multiplies them against the same tile of 128 anchors with wgmma m64n128k16 (f16 in, f32
// accumulate; A and B read by the tensor cores straight from shared memory through matrix
// descriptors). Dimensions come 64 at a time (128-byte rows), stored with the 128-byte swizzle
// (16-byte chunk c of row r at chunk c ^ (r & 7)), the layout the descriptors' swizzle mode 1
// reads. In the accumulators a thread holds 2 rows × 32 anchors of each tile; it keeps LK keys per
// row (and the smallest it pushed out), and the 4 lanes of a quad merge theirs at the end.
//
// The kernels (bench/kernels/NOTES.md has the measurements behind them):
//   screen_h90   points and anchors streamed through a 3-stage cp.async pipeline, one block-wide
//                barrier a step: any dp.
//   collect_h90  collect_h on the same streamed loop (the uncertain points' candidates).
//   screen_h90m  (dp <= 256) the block's points resident in shared memory; the anchors arrive by
//                bulk copies that complete on mbarriers, and each warpgroup walks the stages on
//                its own, so one warpgroup's epilogue (integer work, the bottleneck) never holds
//                the other's wgmma at a barrier.
//   screen_h90mo (dp <= 192) screen_h90m with each tile multiplied in two halves, the epilogue of
//                one overlapping the wgmma of the other. Variants _k3 and _k2 keep 3 or 2 keys
//                per lane and push every key through the list's min/max network without a branch.
//
// Keys are of |dist| (one AND clears the sign with the index bits) rather than max(dist, 0): a
// negative approximate distance a'' (rounding, true distance near 0) has |a''| within the same
// bound B of the true value as a'' itself (true >= 0 and true <= a'' + B give |a''| - true <= B
// and true - |a''| <= B), so exact_h's certificate holds as for the clamped key.
#include "common.cuh"
#include "keys.cuh"
#include "cp_async.cuh"
#include "hopper.cuh"

#define W9_THREADS 256
#define W9_P 128                    // points per block
#define W9_A 128                    // anchors per tile
#define W9_K 64                     // fp16 dimensions per pipeline step (128-byte rows)
#define W9_STAGES 3
#define W9_HALF (128 * 128)         // bytes of the points (or anchors) of one stage
#define W9_STAGE (2 * W9_HALF)
#define W9_SMEM (W9_STAGES * W9_STAGE + 1024)  // + room to align the stages to 1024 bytes
extern __shared__ __align__(1024) unsigned char w9_smem[];  // every kernel's dynamic shared memory

// A thread's first row of the block's 128 (warpgroup, warp, lane group); its second is 8 below. In
// its m64nNk16 accumulator it holds rows r0, r0 + 8 × anchors 8c + 2t + e in acc[4c + 2q + e].
__device__ __forceinline__ int wg_row0() {
  const int tid = threadIdx.x, lane = tid & 31;
  return (tid >> 7) * 64 + ((tid >> 5) & 3) * 16 + (lane >> 2);
}

// fn(q, j, a'') for the N / 4 groups of 8 anchors of an accumulator, anchors from a0 (N = 64 for a
// tile of 128 anchors, 32 for half of one); t = the lane's index within its quad.
template <int N, typename F>
__device__ __forceinline__ void tile_dists(const float (&acc)[N], int a0, int t, const float (&xr)[2], const float *__restrict__ cn,
                                           F &&fn) {
#pragma unroll
  for (int c = 0; c < N / 4; c++) {
#pragma unroll
    for (int e = 0; e < 2; e++) {
      const unsigned j = (unsigned)(a0 + 8 * c + 2 * t + e);
      const float cj = __ldg(cn + j);
#pragma unroll
      for (int q = 0; q < 2; q++) fn(q, j, fmaf(-2.f, acc[4 * c + 2 * q + e], xr[q] + cj));
    }
  }
}

// The keys of an accumulator into the thread's lists. GUARD: only keys under the list's last go
// through its network (a branch per key; worth it where inserts are rare: many anchors, long lists).
template <int LK, bool GUARD, int N>
__device__ __forceinline__ void tile_keys(const float (&acc)[N], int a0, int t, const float (&xr)[2], const float *__restrict__ cn,
                                          unsigned amask, unsigned (&lk)[2][LK + 1]) {
  tile_dists(acc, a0, t, xr, cn, [&](int q, unsigned j, float dist) {
    const unsigned key = (__float_as_uint(dist) & amask) | j;
    if (!GUARD || key < lk[q][LK]) key_push<LK>(key, lk[q]);
  });
}

// The 4 lanes of a quad hold the same rows (other anchors): merge by shuffles into the row's ROW
// smallest keys and the smallest left out, then write them (ROW + 1 arrays of n).
template <int LK, int ROW>
__device__ __forceinline__ void write_keys(unsigned (&lk)[2][LK + 1], long long p0, int r0, int t, int n, unsigned *__restrict__ out) {
#pragma unroll
  for (int q = 0; q < 2; q++) {
    unsigned row[ROW + 1];
#pragma unroll
    for (int e = 0; e <= ROW; e++) row[e] = e < LK ? lk[q][e] : e == ROW ? lk[q][LK] : SH_EMPTY;
#pragma unroll
    for (int o = 1; o < 4; o <<= 1) {
      unsigned other[ROW + 1];
#pragma unroll
      for (int e = 0; e <= ROW; e++) other[e] = __shfl_xor_sync(0xffffffffu, row[e], o);
      key_merge<ROW>(other, row);
    }
    const long long i = p0 + r0 + 8 * q;
    if (t == 0 && i < n) {
#pragma unroll
      for (int e = 0; e <= ROW; e++) out[(size_t)e * n + i] = row[e];
    }
  }
}

template <int LK>
__device__ __forceinline__ void empty_lists(unsigned (&lk)[2][LK + 1]) {
#pragma unroll
  for (int q = 0; q < 2; q++)
#pragma unroll
    for (int e = 0; e <= LK; e++) lk[q][e] = SH_EMPTY;
}

// The streamed GEMM loop of screen_h90 and collect_h90: the block's 128 points (row r of Xh is
// rowOf(r)) against every tile of 128 anchors, points and anchors through a 3-stage cp.async
// pipeline with one block-wide barrier a step; fold(a0, acc) after each complete tile.
template <typename RowOf, typename Fold>
__device__ __forceinline__ void streamed_tiles(const __half *__restrict__ Xh, const __half *__restrict__ Ch, int dp, int mpad,
                                               RowOf rowOf, Fold fold) {
  const unsigned base = (smem_u32(w9_smem) + 1023u) & ~1023u;  // the swizzle pattern follows address bits 7-9
  const int tid = threadIdx.x, wg = tid >> 7;
  const int kSteps = dp / W9_K;
  const int steps = kSteps * (mpad / W9_A);
  long long rows[4];  // the point rows this thread copies (row tid / 8 + 32h)
#pragma unroll
  for (int h = 0; h < 4; h++) rows[h] = rowOf((tid >> 3) + 32 * h);
  auto load = [&](int stage, int step) {  // stage = [points][anchors], 64 dimensions of each
    const int a0 = (step / kSteps) * W9_A, k0 = (step % kSteps) * W9_K;
    const unsigned st = base + stage * W9_STAGE;
#pragma unroll
    for (int h = 0; h < 4; h++) {
      const int r = (tid >> 3) + 32 * h, ch = tid & 7;
      cp_async16(st + sw128_chunk(r, ch), Xh + (size_t)rows[h] * dp + k0 + ch * 8);
      cp_async16(st + W9_HALF + sw128_chunk(r, ch), Ch + (size_t)(a0 + r) * dp + k0 + ch * 8);
    }
  };
  float acc[64];
#pragma unroll
  for (int st = 0; st < W9_STAGES - 1; st++) {
    if (st < steps) load(st, st);
    cp_async_commit();
  }
  for (int step = 0; step < steps; step++) {
    cp_async_wait<W9_STAGES - 2>();
    asm volatile("fence.proxy.async.shared::cta;" ::: "memory");  // cp.async wrote it; the tensor cores read it
    __syncthreads();
    {
      const int next = step + W9_STAGES - 1;
      if (next < steps) load(next % W9_STAGES, next);
      cp_async_commit();
    }
    const int kc = step % kSteps;
    const unsigned st = base + (step % W9_STAGES) * W9_STAGE;
    wgmma_fence();
    wgmma_f16_x4(acc, st + wg * 64 * 128, st + W9_HALF, kc != 0);
    wgmma_commit();
    wgmma_wait<0>();  // the stage is free for the next load once every warpgroup is past the barrier
    if (kc == kSteps - 1) fold((step / kSteps) * W9_A, acc);
  }
  cp_async_wait<0>();
}

// Arguments: Xh (npad × dp fp16 points), Ch (mpad × dp fp16 anchors; for screen_h90m Ct, the tiled
// copy), their norms xn and cn, n, dp (a multiple of 64), mpad, hmask (the key bits kept of the
// distance), keys ((SH_ROW_WIDE or SH_ROW) + 1 arrays of n out). Dynamic shared memory: W9_SMEM, or WM_SMEM(dp).
extern "C" __global__ void __launch_bounds__(W9_THREADS, 2)
    screen_h90(const __half *__restrict__ Xh, const __half *__restrict__ Ch, const float *__restrict__ xn,
               const float *__restrict__ cn, const unsigned *scalars, int n, int dp, int mpad, unsigned hmask,
               unsigned *__restrict__ keys) {
  const int t = threadIdx.x & 3, r0 = wg_row0();
  const long long p0 = (long long)blockIdx.x * W9_P;
  const unsigned amask = hmask & 0x7fffffffu;
  const float xr[2] = {xn[p0 + r0], xn[p0 + r0 + 8]};
  unsigned lk[2][9];
  empty_lists<8>(lk);
  streamed_tiles(Xh, Ch, dp, mpad, [&](int r) { return p0 + r; },
                 [&](int a0, const float (&acc)[64]) { tile_keys<8, true, 64>(acc, a0, t, xr, cn, amask, lk); });
  write_keys<8, SH_ROW_WIDE>(lk, p0, r0, t, n, keys);
}

// collect_h (screen_h.cu) on wgmma: the listed points exact_h could not certify, every anchor whose
// approximate distance is under the point's threshold gathered into its candidates. The bound
// that makes the threshold safe holds for any order of the tensor cores' accumulation, so these
// candidates serve exact_collect as collect_h's do (the set can differ only in anchors that
// cannot be in the top-2). Arguments as collect_h's; dynamic shared memory W9_SMEM.
extern "C" __global__ void __launch_bounds__(W9_THREADS, 2)
    collect_h90(const __half *Xh, const __half *Ch, const float *xn, const float *cn, const unsigned *list,
                const unsigned *scalars, const float *thr, int cap, int dp, int mpad, unsigned *cand, unsigned *ccount,
                int ncand) {
  const int total = min((int)scalars[2], cap);
  const int p0 = blockIdx.x * W9_P;
  if (p0 >= total) return;  // the list is shorter than the grid: the whole block leaves
  const int t = threadIdx.x & 3, r0 = wg_row0();
  float xr[2], T[2];
  int pos[2];
#pragma unroll
  for (int q = 0; q < 2; q++) {
    pos[q] = p0 + r0 + 8 * q;
    const bool live = pos[q] < total;
    T[q] = live ? thr[pos[q]] : -1.f;
    xr[q] = live ? xn[list[pos[q]]] : 0.f;
  }
  streamed_tiles(Xh, Ch, dp, mpad, [&](int r) { return (long long)list[min(p0 + r, total - 1)]; },
                 [&](int a0, const float (&acc)[64]) {
                   tile_dists(acc, a0, t, xr, cn, [&](int q, unsigned j, float dist) {
                     if (dist <= T[q]) {  // false for T = -1, and for padding anchors (+inf)
                       const unsigned slot = atomicAdd(ccount + pos[q], 1u);
                       if (slot < (unsigned)ncand) cand[(size_t)pos[q] * ncand + slot] = j;
                     }
                   });
                 });
}

// ---------------------------------------------------------------------------------------------
// screen_h90m. The bulk copy moves bytes as they are, so the anchors come pre-tiled: tile_anchors
// writes each step's [128 anchors][64 dimensions] block, 128-byte swizzled, as one contiguous
// 16 KB run of Ct, in step order (tile a, dimensions 64kc ..: block a·kSteps + kc).
#define WM_MAX_DP 256
#define WM_STAGES(dp) ((dp) <= 192 ? 4 : 3)
#define WM_SMEM(dp) (W9_P * (dp) * 2 + WM_STAGES(dp) * W9_HALF + 1024)  // the mbarriers sit in the alignment pad

extern "C" __global__ void __launch_bounds__(256) tile_anchors(const __half *__restrict__ Ch, int dp, int mpad, __half *__restrict__ Ct) {
  const int kSteps = dp / W9_K;
  const long long chunks = (long long)mpad * dp / 8;  // one thread per 16 bytes
  for (long long c = blockIdx.x * (long long)blockDim.x + threadIdx.x; c < chunks; c += (long long)gridDim.x * blockDim.x) {
    const long long row = c / (dp / 8);
    const int col = (int)(c % (dp / 8)), r = (int)(row & 127);
    const long long block = (row >> 7) * kSteps + (col >> 3);
    reinterpret_cast<uint4 *>(Ct)[block * (W9_HALF / 16) + sw128_chunk(r, col & 7) / 16] = reinterpret_cast<const uint4 *>(Ch)[c];
  }
}

// The resident screens' shared memory and anchor stages: [S mbarriers (8 bytes each), S use
// counters] in front of the 1024-aligned points (dp / 64 panels of [128 rows][128 bytes]) and the
// S stages of anchors. Each warpgroup waits for a step's stage on its own; the second warpgroup to
// release a stage refills it with the step S later (one bulk copy of that step's 16 KB of Ct).
struct ResidentStages {
  unsigned bars, base, stages;
  unsigned *used;
  const __half *Ct;
  int S, steps;

  // Barriers and counters set up, the block's points in place, the first S copies started: the
  // kernel's only block-wide barrier.
  __device__ __forceinline__ ResidentStages(unsigned char *smem, const __half *__restrict__ Xh, const __half *__restrict__ Ct_,
                                            long long p0, int dp, int steps_)
      : Ct(Ct_), S(WM_STAGES(dp)), steps(steps_) {
    const unsigned start = smem_u32(smem);
    bars = start;
    base = (start + 64 + 1023u) & ~1023u;
    stages = base + W9_P * dp * 2;
    used = reinterpret_cast<unsigned *>(smem + S * 8);
    unsigned dynamic;
    asm("mov.u32 %0, %%dynamic_smem_size;" : "=r"(dynamic));
    if (stages + S * W9_HALF - start > dynamic) __trap();  // WM_SMEM assumes an aligned start
    const int tid = threadIdx.x;
    if (tid == 0) {
      for (int s = 0; s < S; s++) {
        mbar_init(bars + s * 8, 1);
        used[s] = 0;
      }
      asm volatile("fence.mbarrier_init.release.cluster;" ::: "memory");
    }
    for (int c = tid; c < W9_P * (dp / W9_K) * 8; c += W9_THREADS) {  // panel p = dimensions 64p ..
      const int p = c / (W9_P * 8), r = (c % (W9_P * 8)) >> 3, ch = c & 7;
      cp_async16(base + p * W9_HALF + sw128_chunk(r, ch), Xh + (size_t)(p0 + r) * dp + p * W9_K + ch * 8);
    }
    cp_async_commit();
    cp_async_wait<0>();
    asm volatile("fence.proxy.async.shared::cta;" ::: "memory");
    __syncthreads();
    if (tid == 0)
      for (int s = 0; s < S && s < steps; s++) refill(s);
  }
  __device__ __forceinline__ unsigned points(int kc) const { return base + kc * W9_HALF + (threadIdx.x >> 7) * 64 * 128; }
  __device__ __forceinline__ unsigned stage(int step) const { return stages + (step % S) * W9_HALF; }
  __device__ __forceinline__ void wait(int step) const { mbar_wait(bars + (step % S) * 8, (unsigned)(step / S) & 1u); }
  __device__ __forceinline__ void refill(int step) const {
    const unsigned bar = bars + (step % S) * 8;
    mbar_expect_tx(bar, W9_HALF);
    bulk_copy(stage(step), Ct + (size_t)step * (W9_HALF / 2), W9_HALF, bar);
  }
  // After this warpgroup's wgmma reading the step's stage are complete.
  __device__ __forceinline__ void release(int step) const {
    if ((threadIdx.x & 127) == 0 && step + S < steps) {
      __threadfence_block();
      if (atomicAdd(used + step % S, 1u) == 1u) {
        used[step % S] = 0;
        __threadfence_block();
        refill(step + S);
      }
    }
  }
};

// 8 keys per lane with a branch per key (dp 256: screen_h90mo cannot hold a tile's 4 stages and the
// next tile's in the shared memory of two blocks).
extern "C" __global__ void __launch_bounds__(W9_THREADS, 2)
    screen_h90m(const __half *__restrict__ Xh, const __half *__restrict__ Ch, const float *__restrict__ xn,
                const float *__restrict__ cn, const unsigned *scalars, int n, int dp, int mpad, unsigned hmask,
                unsigned *__restrict__ keys) {
  const int t = threadIdx.x & 3, r0 = wg_row0();
  const long long p0 = (long long)blockIdx.x * W9_P;
  const int kSteps = dp / W9_K, steps = kSteps * (mpad / W9_A);
  const ResidentStages rs(w9_smem, Xh, Ch, p0, dp, steps);  // Ch: the tiled copy (tile_anchors' Ct)
  const unsigned amask = hmask & 0x7fffffffu;
  const float xr[2] = {xn[p0 + r0], xn[p0 + r0 + 8]};
  unsigned lk[2][9];
  empty_lists<8>(lk);
  float acc[64];
  for (int step = 0; step < steps; step++) {
    const int kc = step % kSteps;
    rs.wait(step);
    wgmma_fence();
    wgmma_f16_x4(acc, rs.points(kc), rs.stage(step), kc != 0);
    wgmma_commit();
    wgmma_wait<0>();
    rs.release(step);
    if (kc == kSteps - 1) tile_keys<8, true, 64>(acc, (step / kSteps) * W9_A, t, xr, cn, amask, lk);
  }
  write_keys<8, SH_ROW_WIDE>(lk, p0, r0, t, n, keys);
}

// ---------------------------------------------------------------------------------------------
// screen_h90mo: screen_h90m with each tile of 128 anchors multiplied as two halves of 64 (m64n64,
// two accumulator sets in the registers one m64n128 set took), so that the warpgroup's own
// tensor cores work on the high half while it turns the low half into keys.

template <int LK, bool GUARD, int KS>
__device__ __forceinline__ void screen_h90mo_body(const __half *__restrict__ Xh, const __half *__restrict__ Ct,
                                                  const float *__restrict__ xn, const float *__restrict__ cn,
                                                  int n, int mpad, unsigned hmask, unsigned *__restrict__ out) {
  const int t = threadIdx.x & 3, r0 = wg_row0();
  const long long p0 = (long long)blockIdx.x * W9_P;
  const int tiles = mpad / W9_A;
  const ResidentStages rs(w9_smem, Xh, Ct, p0, KS * W9_K, KS * tiles);
  const unsigned amask = hmask & 0x7fffffffu;
  const float xr[2] = {xn[p0 + r0], xn[p0 + r0 + 8]};
  unsigned lk[2][LK + 1];
  empty_lists<LK>(lk);
  float lo[32], hi[32];
  // Per tile: its KS stages waited for first (the compiler serialises the wgmma when one is in
  // flight across a loop's back edge, and a wait on an mbarrier is a loop: C7514), then the low
  // half's wgmma (one group) and the high half's (another); the low half's keys while the high
  // half multiplies, then the high half's.
  for (int tile = 0; tile < tiles; tile++) {
    const int s0 = tile * KS;
#pragma unroll
    for (int kc = 0; kc < KS; kc++) rs.wait(s0 + kc);
    wgmma_fence();
#pragma unroll
    for (int kc = 0; kc < KS; kc++) wgmma_n64_x4(lo, rs.points(kc), rs.stage(s0 + kc), kc != 0);
    wgmma_commit();
#pragma unroll
    for (int kc = 0; kc < KS; kc++) wgmma_n64_x4(hi, rs.points(kc), rs.stage(s0 + kc) + 64 * 128, kc != 0);
    wgmma_commit();
    wgmma_wait<1>();
    acc_fence(lo);
    tile_keys<LK, GUARD, 32>(lo, tile * W9_A, t, xr, cn, amask, lk);
    wgmma_wait<0>();
    acc_fence(hi);
#pragma unroll
    for (int kc = 0; kc < KS; kc++) rs.release(s0 + kc);
    tile_keys<LK, GUARD, 32>(hi, tile * W9_A + 64, t, xr, cn, amask, lk);
  }
  write_keys<LK, SH_ROW>(lk, p0, r0, t, n, out);
}

#define WMO_MAX_DP 192  // a tile's dp / 64 stages (and the next tile's) within WM_STAGES(dp) = 4
template <int LK, bool GUARD>
__device__ __forceinline__ void screen_h90mo_dispatch(const __half *Xh, const __half *Ct, const float *xn, const float *cn, int n,
                                                      int dp, int mpad, unsigned hmask, unsigned *keys) {
  switch (dp / W9_K) {
    case 1: screen_h90mo_body<LK, GUARD, 1>(Xh, Ct, xn, cn, n, mpad, hmask, keys); break;
    case 2: screen_h90mo_body<LK, GUARD, 2>(Xh, Ct, xn, cn, n, mpad, hmask, keys); break;
    case 3: screen_h90mo_body<LK, GUARD, 3>(Xh, Ct, xn, cn, n, mpad, hmask, keys); break;
    default: __trap();  // a tile's stages must all fit: dp <= WMO_MAX_DP
  }
}
extern "C" __global__ void __launch_bounds__(W9_THREADS, 2)
    screen_h90mo(const __half *Xh, const __half *Ch, const float *xn, const float *cn, const unsigned *scalars, int n,
                 int dp, int mpad, unsigned hmask, unsigned *keys) {
  screen_h90mo_dispatch<8, true>(Xh, Ch, xn, cn, n, dp, mpad, hmask, keys);
}
extern "C" __global__ void __launch_bounds__(W9_THREADS, 2)
    screen_h90mo_k3(const __half *Xh, const __half *Ch, const float *xn, const float *cn, const unsigned *scalars, int n,
                    int dp, int mpad, unsigned hmask, unsigned *keys) {
  screen_h90mo_dispatch<3, false>(Xh, Ch, xn, cn, n, dp, mpad, hmask, keys);
}
extern "C" __global__ void __launch_bounds__(W9_THREADS, 2)
    screen_h90mo_k2(const __half *Xh, const __half *Ch, const float *xn, const float *cn, const unsigned *scalars, int n,
                    int dp, int mpad, unsigned hmask, unsigned *keys) {
  screen_h90mo_dispatch<2, false>(Xh, Ch, xn, cn, n, dp, mpad, hmask, keys);
}
