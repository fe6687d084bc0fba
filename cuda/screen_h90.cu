// screen_h90: screen_h (screen_h.cu) on Hopper's warpgroup tensor-core instructions (wgmma), for
// the sm_90a build of this file (build/screen_h90.ptx; the loader picks it for compute capability
// 9.0 and falls back to screen_h elsewhere). Same inputs, the same keys out, with 8 candidates per
// point instead of 4 (fewer fallbacks at large m): prep_anchors, exact_h8 and the fallback kernels
// of screen_h.cu serve both.
//
// Layout: a block of 256 threads is two warpgroups; each owns 64 of the block's 128 points and
// multiplies them against the same tile of 128 anchors with wgmma m64n128k16 (f16 in, f32
// accumulate; A and B read by the tensor cores straight from shared memory through matrix
// descriptors). Dimensions come 64 at a time (128-byte rows) in a 3-stage cp.async pipeline; the
// rows are stored with the 128-byte swizzle (16-byte chunk c of row r at chunk c ^ (r & 7)), the
// layout the descriptors' swizzle mode 1 reads. In the accumulators a thread holds 2 rows × 32
// anchors of each tile, so its keys lists are 2 × 9 registers; the 4 lanes of a quad merge theirs
// at the end.
#include "common.cuh"
#include "keys.cuh"
#include "cp_async.cuh"

#define W9_THREADS 256
#define W9_P 128                    // points per block
#define W9_A 128                    // anchors per tile
#define W9_K 64                     // fp16 dimensions per pipeline step (128-byte rows)
#define W9_STAGES 3
#define W9_HALF (128 * 128)         // bytes of the points (or anchors) of one stage
#define W9_STAGE (2 * W9_HALF)
#define W9_SMEM (W9_STAGES * W9_STAGE + 1024)  // + room to align the stages to 1024 bytes



// A K-major operand with the 128-byte swizzle: start address, leading offset 16 (unused by this
// mode), 1024 bytes between groups of 8 rows, swizzle mode 1 (bits 62-63).
__device__ __forceinline__ unsigned long long sw128_desc(unsigned addr) {
  return (unsigned long long)((addr & 0x3ffff) >> 4) | (1ull << 16) | ((unsigned long long)(1024 >> 4) << 32) | (1ull << 62);
}

// Four k16 steps in one asm statement (the accumulators are touched only at its edges, so ptxas
// issues them back to back); the first adds to the accumulators only when `accumulate` is set.
__device__ __forceinline__ void wgmma_f16_x4(float (&d)[64], unsigned xs, unsigned cs, int accumulate) {
  asm volatile(
      "{\n.reg .pred p;\nsetp.ne.b32 p, %72, 0;\n"
      "wgmma.mma_async.sync.aligned.m64n128k16.f32.f16.f16 {%0,%1,%2,%3,%4,%5,%6,%7,%8,%9,%10,%11,%12,%13,%14,%15,%16,%17,%18,%19,%20,%21,%22,%23,%24,%25,%26,%27,%28,%29,%30,%31,%32,%33,%34,%35,%36,%37,%38,%39,%40,%41,%42,%43,%44,%45,%46,%47,%48,%49,%50,%51,%52,%53,%54,%55,%56,%57,%58,%59,%60,%61,%62,%63}, %64, %68, p, 1, 1, 0, 0;\n"
      "wgmma.mma_async.sync.aligned.m64n128k16.f32.f16.f16 {%0,%1,%2,%3,%4,%5,%6,%7,%8,%9,%10,%11,%12,%13,%14,%15,%16,%17,%18,%19,%20,%21,%22,%23,%24,%25,%26,%27,%28,%29,%30,%31,%32,%33,%34,%35,%36,%37,%38,%39,%40,%41,%42,%43,%44,%45,%46,%47,%48,%49,%50,%51,%52,%53,%54,%55,%56,%57,%58,%59,%60,%61,%62,%63}, %65, %69, 1, 1, 1, 0, 0;\n"
      "wgmma.mma_async.sync.aligned.m64n128k16.f32.f16.f16 {%0,%1,%2,%3,%4,%5,%6,%7,%8,%9,%10,%11,%12,%13,%14,%15,%16,%17,%18,%19,%20,%21,%22,%23,%24,%25,%26,%27,%28,%29,%30,%31,%32,%33,%34,%35,%36,%37,%38,%39,%40,%41,%42,%43,%44,%45,%46,%47,%48,%49,%50,%51,%52,%53,%54,%55,%56,%57,%58,%59,%60,%61,%62,%63}, %66, %70, 1, 1, 1, 0, 0;\n"
      "wgmma.mma_async.sync.aligned.m64n128k16.f32.f16.f16 {%0,%1,%2,%3,%4,%5,%6,%7,%8,%9,%10,%11,%12,%13,%14,%15,%16,%17,%18,%19,%20,%21,%22,%23,%24,%25,%26,%27,%28,%29,%30,%31,%32,%33,%34,%35,%36,%37,%38,%39,%40,%41,%42,%43,%44,%45,%46,%47,%48,%49,%50,%51,%52,%53,%54,%55,%56,%57,%58,%59,%60,%61,%62,%63}, %67, %71, 1, 1, 1, 0, 0;\n"
      "}\n"
      : "+f"(d[0]), "+f"(d[1]), "+f"(d[2]), "+f"(d[3]), "+f"(d[4]), "+f"(d[5]), "+f"(d[6]), "+f"(d[7]), "+f"(d[8]), "+f"(d[9]), "+f"(d[10]), "+f"(d[11]), "+f"(d[12]), "+f"(d[13]), "+f"(d[14]), "+f"(d[15]), "+f"(d[16]), "+f"(d[17]), "+f"(d[18]), "+f"(d[19]), "+f"(d[20]), "+f"(d[21]), "+f"(d[22]), "+f"(d[23]), "+f"(d[24]), "+f"(d[25]), "+f"(d[26]), "+f"(d[27]), "+f"(d[28]), "+f"(d[29]), "+f"(d[30]), "+f"(d[31]), "+f"(d[32]), "+f"(d[33]), "+f"(d[34]), "+f"(d[35]), "+f"(d[36]), "+f"(d[37]), "+f"(d[38]), "+f"(d[39]), "+f"(d[40]), "+f"(d[41]), "+f"(d[42]), "+f"(d[43]), "+f"(d[44]), "+f"(d[45]), "+f"(d[46]), "+f"(d[47]), "+f"(d[48]), "+f"(d[49]), "+f"(d[50]), "+f"(d[51]), "+f"(d[52]), "+f"(d[53]), "+f"(d[54]), "+f"(d[55]), "+f"(d[56]), "+f"(d[57]), "+f"(d[58]), "+f"(d[59]), "+f"(d[60]), "+f"(d[61]), "+f"(d[62]), "+f"(d[63])
      : "l"(sw128_desc(xs)), "l"(sw128_desc(xs + 32)), "l"(sw128_desc(xs + 64)), "l"(sw128_desc(xs + 96)),
        "l"(sw128_desc(cs)), "l"(sw128_desc(cs + 32)), "l"(sw128_desc(cs + 64)), "l"(sw128_desc(cs + 96)), "r"(accumulate));
}
__device__ __forceinline__ void wgmma_fence() { asm volatile("wgmma.fence.sync.aligned;" ::: "memory"); }
__device__ __forceinline__ void wgmma_commit() { asm volatile("wgmma.commit_group.sync.aligned;" ::: "memory"); }
__device__ __forceinline__ void wgmma_wait0() { asm volatile("wgmma.wait_group.sync.aligned 0;" ::: "memory"); }
__device__ __forceinline__ void wgmma_wait1() { asm volatile("wgmma.wait_group.sync.aligned 1;" ::: "memory"); }
// Pins the accumulators at this point of the program (CUTLASS's warpgroup_fence_operand): the
// compiler must not move their reads above the wait that completes them.
template <int N>
__device__ __forceinline__ void acc_fence(float (&d)[N]) {
#pragma unroll
  for (int i = 0; i < N; i++) asm volatile("" : "+f"(d[i])::"memory");
}

// wgmma_f16_x4 for a tile of 64 anchors (m64n64k16 × 4: 32 accumulators a thread). The four k16
// steps' descriptors are the first one's plus 32 bytes (2 in the descriptor's address field) each,
// added inside the statement so that only two 64-bit registers are live around it.
__device__ __forceinline__ void wgmma_n64_x4(float (&d)[32], unsigned xs, unsigned cs, int accumulate) {
  asm volatile(
      "{\n.reg .pred p;\n.reg .b64 da, db;\nsetp.ne.b32 p, %34, 0;\n"
      "wgmma.mma_async.sync.aligned.m64n64k16.f32.f16.f16 {%0,%1,%2,%3,%4,%5,%6,%7,%8,%9,%10,%11,%12,%13,%14,%15,%16,%17,%18,%19,%20,%21,%22,%23,%24,%25,%26,%27,%28,%29,%30,%31}, %32, %33, p, 1, 1, 0, 0;\n"
      "add.s64 da, %32, 2;\nadd.s64 db, %33, 2;\n"
      "wgmma.mma_async.sync.aligned.m64n64k16.f32.f16.f16 {%0,%1,%2,%3,%4,%5,%6,%7,%8,%9,%10,%11,%12,%13,%14,%15,%16,%17,%18,%19,%20,%21,%22,%23,%24,%25,%26,%27,%28,%29,%30,%31}, da, db, 1, 1, 1, 0, 0;\n"
      "add.s64 da, %32, 4;\nadd.s64 db, %33, 4;\n"
      "wgmma.mma_async.sync.aligned.m64n64k16.f32.f16.f16 {%0,%1,%2,%3,%4,%5,%6,%7,%8,%9,%10,%11,%12,%13,%14,%15,%16,%17,%18,%19,%20,%21,%22,%23,%24,%25,%26,%27,%28,%29,%30,%31}, da, db, 1, 1, 1, 0, 0;\n"
      "add.s64 da, %32, 6;\nadd.s64 db, %33, 6;\n"
      "wgmma.mma_async.sync.aligned.m64n64k16.f32.f16.f16 {%0,%1,%2,%3,%4,%5,%6,%7,%8,%9,%10,%11,%12,%13,%14,%15,%16,%17,%18,%19,%20,%21,%22,%23,%24,%25,%26,%27,%28,%29,%30,%31}, da, db, 1, 1, 1, 0, 0;\n"
      "}\n"
      : "+f"(d[0]), "+f"(d[1]), "+f"(d[2]), "+f"(d[3]), "+f"(d[4]), "+f"(d[5]), "+f"(d[6]), "+f"(d[7]), "+f"(d[8]), "+f"(d[9]), "+f"(d[10]), "+f"(d[11]), "+f"(d[12]), "+f"(d[13]), "+f"(d[14]), "+f"(d[15]), "+f"(d[16]), "+f"(d[17]), "+f"(d[18]), "+f"(d[19]), "+f"(d[20]), "+f"(d[21]), "+f"(d[22]), "+f"(d[23]), "+f"(d[24]), "+f"(d[25]), "+f"(d[26]), "+f"(d[27]), "+f"(d[28]), "+f"(d[29]), "+f"(d[30]), "+f"(d[31])
      : "l"(sw128_desc(xs)), "l"(sw128_desc(cs)), "r"(accumulate));
}

// Arguments as screen_h's (dp a multiple of 64). Each lane keeps LK keys per row (and the smallest
// it pushed out); the quad's lists merge into the row's 8 (+ the smallest key outside them) at the
// end. A small LK makes the per-element insert cheap and rare; the row still gets up to 4·LK
// candidates. RESIDENT: the block's points stay in shared memory for the whole kernel (dp <= 256:
// at most 64 KB, loaded once as dp/64 panels of [128 rows][128 bytes]) and only the anchors stream
// through the stages, half the bytes from L2 of streaming both (the points again for every tile of
// anchors). Dynamic shared memory: W9_SMEM, or W9R_SMEM(dp) when resident.
#define W9R_MAX_DP 256
#define W9R_SMEM(dp) (W9_P * (dp) * 2 + W9_STAGES * W9_HALF + 1024)
template <int LK, bool RESIDENT, bool GUARD = true>
__device__ __forceinline__ void screen_h90_body(const __half *__restrict__ Xh, const __half *__restrict__ Ch,
                                                const float *__restrict__ xn, const float *__restrict__ cn,
                                                int n, int dp, int mpad, unsigned hmask, unsigned *__restrict__ out) {
  extern __shared__ __align__(1024) unsigned char dsm[];
  const unsigned base = (smem_u32(dsm) + 1023u) & ~1023u;  // the swizzle pattern follows address bits 7-9
  // Resident: the points' panels, then the stages of anchors; streamed: stages of [points, anchors].
  const unsigned stages = RESIDENT ? base + W9_P * dp * 2 : base;
  const unsigned stageBytes = RESIDENT ? W9_HALF : W9_STAGE;
  const int tid = threadIdx.x, wg = tid >> 7, lane = tid & 31, g = lane >> 2, t = lane & 3;
  const int r0 = wg * 64 + ((tid >> 5) & 3) * 16 + g;  // the thread's rows: r0 and r0 + 8
  const long long p0 = (long long)blockIdx.x * W9_P;
  const int kSteps = dp / W9_K;
  const int steps = kSteps * (mpad / W9_A);
  // 16-byte chunk c of row r of a [128 rows][128 bytes] array, 128-byte swizzled.
  auto chunk = [](int r, int c) { return (unsigned)(r * 128 + ((c ^ (r & 7)) << 4)); };

  if (RESIDENT) {  // the points, once (their copies join the first stage's group): panel p = dimensions 64p ..
    for (int c = tid; c < W9_P * kSteps * 8; c += W9_THREADS) {
      const int p = c / (W9_P * 8), r = (c % (W9_P * 8)) >> 3, ch = c & 7;
      cp_async16(base + p * W9_HALF + chunk(r, ch), Xh + (size_t)(p0 + r) * dp + p * W9_K + ch * 8);
    }
  }
  auto load = [&](int stage, int step) {
    const int a0 = (step / kSteps) * W9_A, k0 = (step % kSteps) * W9_K;
    const unsigned sc = stages + stage * stageBytes + (RESIDENT ? 0 : W9_HALF);
#pragma unroll
    for (int h = 0; h < 4; h++) {
      const int c = tid + h * W9_THREADS, r = c >> 3, ch = c & 7;
      if (!RESIDENT) cp_async16(stages + stage * stageBytes + chunk(r, ch), Xh + (size_t)(p0 + r) * dp + k0 + ch * 8);
      cp_async16(sc + chunk(r, ch), Ch + (size_t)(a0 + r) * dp + k0 + ch * 8);
    }
  };

  const float xr[2] = {xn[p0 + r0], xn[p0 + r0 + 8]};
  unsigned lk[2][LK + 1];
#pragma unroll
  for (int q = 0; q < 2; q++)
#pragma unroll
    for (int e = 0; e <= LK; e++) lk[q][e] = SH_EMPTY;
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
    const unsigned st = stages + (step % W9_STAGES) * stageBytes;
    const unsigned sx = (RESIDENT ? base + kc * W9_HALF : st) + wg * 64 * 128;
    const unsigned sc = st + (RESIDENT ? 0 : W9_HALF);
    wgmma_fence();
    wgmma_f16_x4(acc, sx, sc, kc != 0);
    wgmma_commit();
    wgmma_wait0();  // the stage is free for the next load once every warpgroup is past the barrier
    if (kc == kSteps - 1) {
      // A tile of anchors is complete: a thread holds rows r0, r0 + 8 × anchors 16w + 8h + 2t + e.
      const int a0 = (step / kSteps) * W9_A;
#pragma unroll
      for (int w = 0; w < 8; w++) {
#pragma unroll
        for (int h = 0; h < 2; h++) {
#pragma unroll
          for (int e = 0; e < 2; e++) {
            const unsigned j = (unsigned)(a0 + 16 * w + 8 * h + 2 * t + e);
            const float cj = __ldg(cn + j);
#pragma unroll
            for (int q = 0; q < 2; q++) {
              const float dist = fmaf(-2.f, acc[8 * w + 4 * h + 2 * q + e], xr[q] + cj);
              const unsigned key = (__float_as_uint(fmaxf(dist, 0.f)) & hmask) | j;
              if (!GUARD || key < lk[q][LK]) key_push<LK>(key, lk[q]);
            }
          }
        }
      }
    }
  }
  cp_async_wait<0>();
  // The 4 lanes of a quad hold the same rows (other anchors): merge by shuffles, then write.
#pragma unroll
  for (int q = 0; q < 2; q++) {
    unsigned row[SH_ROW + 1];
#pragma unroll
    for (int e = 0; e <= SH_ROW; e++) row[e] = e < LK ? lk[q][e] : e == SH_ROW ? lk[q][LK] : SH_EMPTY;
#pragma unroll
    for (int o = 1; o < 4; o <<= 1) {
      unsigned other[SH_ROW + 1];
#pragma unroll
      for (int e = 0; e <= SH_ROW; e++) other[e] = __shfl_xor_sync(0xffffffffu, row[e], o);
      key_merge<SH_ROW>(other, row);
    }
    const long long i = p0 + r0 + 8 * q;
    if (t == 0 && i < n) {
#pragma unroll
      for (int e = 0; e <= SH_ROW; e++) out[(size_t)e * n + i] = row[e];
    }
  }
}

extern "C" __global__ void __launch_bounds__(W9_THREADS, 2)
    screen_h90(const __half *Xh, const __half *Ch, const float *xn, const float *cn, const unsigned *scalars, int n,
               int dp, int mpad, unsigned hmask, unsigned *keys) {
  screen_h90_body<8, false>(Xh, Ch, xn, cn, n, dp, mpad, hmask, keys);
}
extern "C" __global__ void __launch_bounds__(W9_THREADS, 2)
    screen_h90r(const __half *Xh, const __half *Ch, const float *xn, const float *cn, const unsigned *scalars, int n,
                int dp, int mpad, unsigned hmask, unsigned *keys) {
  screen_h90_body<8, true>(Xh, Ch, xn, cn, n, dp, mpad, hmask, keys);
}
extern "C" __global__ void __launch_bounds__(W9_THREADS, 2)
    screen_h90r_l3(const __half *Xh, const __half *Ch, const float *xn, const float *cn, const unsigned *scalars, int n,
                   int dp, int mpad, unsigned hmask, unsigned *keys) {
  screen_h90_body<3, true>(Xh, Ch, xn, cn, n, dp, mpad, hmask, keys);
}

// screen_h90p: the same screen with the epilogue of one tile of anchors overlapping the tensor
// cores' work on the next (FlashAttention-3's intra-warpgroup overlap). Tiles are 64 anchors
// (m64n64), so that two accumulator sets fit where one m64n128 set did: while the wgmma of tile t
// runs into one set, the warpgroup turns tile t − 1's set into keys. A stage is released two steps
// after its wgmma was issued (wait_group 1), so the loads run two steps ahead of 4 stages.
#define WP_A 64                     // anchors per tile
#define WP_STAGES 4
#define WP_ANCH (WP_A * 128)        // bytes of one stage's anchors (64 rows × 64 fp16 dimensions)
#define WP_STAGE (W9_HALF + WP_ANCH)  // streamed points: a stage holds the block's points too
#define WP_SMEM (WP_STAGES * WP_STAGE + 1024)
#define WPR_SMEM(dp) (W9_P * (dp) * 2 + WP_STAGES * WP_ANCH + 1024)

// One tile's keys: a thread holds rows r0, r0 + 8 × anchors a0 + 8c + 2t + e of acc[4c + 2q + e].
template <int LK>
__device__ __forceinline__ void wp_keys(const float (&acc)[32], int a0, int t, const float (&xr)[2], const float *__restrict__ cn,
                                        unsigned hmask, unsigned (&lk)[2][LK + 1]) {
#pragma unroll
  for (int c = 0; c < 8; c++) {
#pragma unroll
    for (int e = 0; e < 2; e++) {
      const unsigned j = (unsigned)(a0 + 8 * c + 2 * t + e);
      const float cj = __ldg(cn + j);
#pragma unroll
      for (int q = 0; q < 2; q++) {
        const float dist = fmaf(-2.f, acc[4 * c + 2 * q + e], xr[q] + cj);
        const unsigned key = (__float_as_uint(fmaxf(dist, 0.f)) & hmask) | j;
        if (key < lk[q][LK]) key_push<LK>(key, lk[q]);
      }
    }
  }
}

template <int LK, bool RESIDENT>
__device__ __forceinline__ void screen_h90p_body(const __half *__restrict__ Xh, const __half *__restrict__ Ch,
                                                 const float *__restrict__ xn, const float *__restrict__ cn,
                                                 int n, int dp, int mpad, unsigned hmask, unsigned *__restrict__ out) {
  extern __shared__ __align__(1024) unsigned char dsm[];
  const unsigned base = (smem_u32(dsm) + 1023u) & ~1023u;
  const unsigned stages = RESIDENT ? base + W9_P * dp * 2 : base;
  const unsigned stageBytes = RESIDENT ? WP_ANCH : WP_STAGE;
  const int tid = threadIdx.x, wg = tid >> 7, lane = tid & 31, t = lane & 3;
  const int r0 = wg * 64 + ((tid >> 5) & 3) * 16 + (lane >> 2);
  const long long p0 = (long long)blockIdx.x * W9_P;
  const int kSteps = dp / W9_K, tiles = mpad / WP_A, steps = kSteps * tiles;
  auto chunk = [](int r, int c) { return (unsigned)(r * 128 + ((c ^ (r & 7)) << 4)); };

  if (RESIDENT) {
    for (int c = tid; c < W9_P * kSteps * 8; c += W9_THREADS) {
      const int p = c / (W9_P * 8), r = (c % (W9_P * 8)) >> 3, ch = c & 7;
      cp_async16(base + p * W9_HALF + chunk(r, ch), Xh + (size_t)(p0 + r) * dp + p * W9_K + ch * 8);
    }
  }
  auto load = [&](int step) {
    const int a0 = (step / kSteps) * WP_A, k0 = (step % kSteps) * W9_K;
    const unsigned st = stages + (step % WP_STAGES) * stageBytes;
    const unsigned sc = st + (RESIDENT ? 0 : W9_HALF);
#pragma unroll
    for (int h = 0; h < 2; h++) {
      const int c = tid + h * W9_THREADS, r = c >> 3, ch = c & 7;
      cp_async16(sc + chunk(r, ch), Ch + (size_t)(a0 + r) * dp + k0 + ch * 8);
    }
    if (!RESIDENT) {
#pragma unroll
      for (int h = 0; h < 4; h++) {
        const int c = tid + h * W9_THREADS, r = c >> 3, ch = c & 7;
        cp_async16(st + chunk(r, ch), Xh + (size_t)(p0 + r) * dp + k0 + ch * 8);
      }
    }
  };
  // Step s: wait for its stage, start the loads of step s + 2 (into the stage of step s − 2, whose
  // wgmma every warpgroup has completed: each waited for all but its last group before this
  // barrier), then issue its wgmma without waiting for it.
  auto mma = [&](float (&acc)[32], int step) {
    cp_async_wait<WP_STAGES - 3>();
    asm volatile("fence.proxy.async.shared::cta;" ::: "memory");
    __syncthreads();
    if (step + WP_STAGES - 2 < steps) load(step + WP_STAGES - 2);
    cp_async_commit();
    const int kc = step % kSteps;
    const unsigned st = stages + (step % WP_STAGES) * stageBytes;
    const unsigned sx = (RESIDENT ? base + kc * W9_HALF : st) + wg * 64 * 128;
    wgmma_fence();
    wgmma_n64_x4(acc, sx, st + (RESIDENT ? 0 : W9_HALF), kc != 0);
    wgmma_commit();
  };

  const float xr[2] = {xn[p0 + r0], xn[p0 + r0 + 8]};
  unsigned lk[2][LK + 1];
#pragma unroll
  for (int q = 0; q < 2; q++)
#pragma unroll
    for (int e = 0; e <= LK; e++) lk[q][e] = SH_EMPTY;
  float accA[32], accB[32];

#pragma unroll
  for (int s = 0; s < WP_STAGES - 2; s++) {
    if (s < steps) load(s);
    cp_async_commit();
  }
  // Tiles in pairs so that each accumulator set is named at compile time (tiles is even: mpad is
  // a multiple of 128). After the first step of a tile, the previous tile's set is complete.
  for (int tile = 0; tile < tiles; tile += 2) {
    mma(accA, tile * kSteps);
    wgmma_wait1();
    if (tile > 0) {
      acc_fence(accB);
      wp_keys<LK>(accB, (tile - 1) * WP_A, t, xr, cn, hmask, lk);
    }
    for (int kc = 1; kc < kSteps; kc++) {
      mma(accA, tile * kSteps + kc);
      wgmma_wait1();
    }
    mma(accB, (tile + 1) * kSteps);
    wgmma_wait1();
    acc_fence(accA);
    wp_keys<LK>(accA, tile * WP_A, t, xr, cn, hmask, lk);
    for (int kc = 1; kc < kSteps; kc++) {
      mma(accB, (tile + 1) * kSteps + kc);
      wgmma_wait1();
    }
    wgmma_wait0();
  }
  wgmma_wait0();
  acc_fence(accB);
  wp_keys<LK>(accB, (tiles - 1) * WP_A, t, xr, cn, hmask, lk);
  cp_async_wait<0>();
#pragma unroll
  for (int q = 0; q < 2; q++) {
    unsigned row[SH_ROW + 1];
#pragma unroll
    for (int e = 0; e <= SH_ROW; e++) row[e] = e < LK ? lk[q][e] : e == SH_ROW ? lk[q][LK] : SH_EMPTY;
#pragma unroll
    for (int o = 1; o < 4; o <<= 1) {
      unsigned other[SH_ROW + 1];
#pragma unroll
      for (int e = 0; e <= SH_ROW; e++) other[e] = __shfl_xor_sync(0xffffffffu, row[e], o);
      key_merge<SH_ROW>(other, row);
    }
    const long long i = p0 + r0 + 8 * q;
    if (t == 0 && i < n) {
#pragma unroll
      for (int e = 0; e <= SH_ROW; e++) out[(size_t)e * n + i] = row[e];
    }
  }
}

extern "C" __global__ void __launch_bounds__(W9_THREADS, 2)
    screen_h90p(const __half *Xh, const __half *Ch, const float *xn, const float *cn, const unsigned *scalars, int n,
                int dp, int mpad, unsigned hmask, unsigned *keys) {
  screen_h90p_body<8, false>(Xh, Ch, xn, cn, n, dp, mpad, hmask, keys);
}
extern "C" __global__ void __launch_bounds__(W9_THREADS, 2)
    screen_h90pr(const __half *Xh, const __half *Ch, const float *xn, const float *cn, const unsigned *scalars, int n,
                 int dp, int mpad, unsigned hmask, unsigned *keys) {
  screen_h90p_body<8, true>(Xh, Ch, xn, cn, n, dp, mpad, hmask, keys);
}
extern "C" __global__ void __launch_bounds__(W9_THREADS, 2)
    screen_h90pr_l3(const __half *Xh, const __half *Ch, const float *xn, const float *cn, const unsigned *scalars, int n,
                    int dp, int mpad, unsigned hmask, unsigned *keys) {
  screen_h90p_body<3, true>(Xh, Ch, xn, cn, n, dp, mpad, hmask, keys);
}

// Measurement variants (bench/kernels/NOTES.md): every key through the list's min/max network,
// no per-key branch.
extern "C" __global__ void __launch_bounds__(W9_THREADS, 2)
    screen_h90r_l3b(const __half *Xh, const __half *Ch, const float *xn, const float *cn, const unsigned *scalars, int n,
                    int dp, int mpad, unsigned hmask, unsigned *keys) {
  screen_h90_body<3, true, false>(Xh, Ch, xn, cn, n, dp, mpad, hmask, keys);
}
extern "C" __global__ void __launch_bounds__(W9_THREADS, 2)
    screen_h90r_l2b(const __half *Xh, const __half *Ch, const float *xn, const float *cn, const unsigned *scalars, int n,
                    int dp, int mpad, unsigned hmask, unsigned *keys) {
  screen_h90_body<2, true, false>(Xh, Ch, xn, cn, n, dp, mpad, hmask, keys);
}
extern "C" __global__ void __launch_bounds__(W9_THREADS, 2)
    screen_h90r_l2(const __half *Xh, const __half *Ch, const float *xn, const float *cn, const unsigned *scalars, int n,
                   int dp, int mpad, unsigned hmask, unsigned *keys) {
  screen_h90_body<2, true, true>(Xh, Ch, xn, cn, n, dp, mpad, hmask, keys);
}
extern "C" __global__ void __launch_bounds__(W9_THREADS, 2)
    screen_h90r_l8b(const __half *Xh, const __half *Ch, const float *xn, const float *cn, const unsigned *scalars, int n,
                    int dp, int mpad, unsigned hmask, unsigned *keys) {
  screen_h90_body<8, true, false>(Xh, Ch, xn, cn, n, dp, mpad, hmask, keys);
}
extern "C" __global__ void __launch_bounds__(W9_THREADS, 2)
    screen_h90r_l4b(const __half *Xh, const __half *Ch, const float *xn, const float *cn, const unsigned *scalars, int n,
                    int dp, int mpad, unsigned hmask, unsigned *keys) {
  screen_h90_body<4, true, false>(Xh, Ch, xn, cn, n, dp, mpad, hmask, keys);
}

// ---------------------------------------------------------------------------------------------
// screen_h90m: screen_h90r without the block-wide barrier. The two warpgroups of a block each
// walk the same stream of anchor stages on their own: a stage arrives by one bulk copy (the
// copy engine, one thread issues it) that completes on the stage's mbarrier, and the warpgroup
// that finishes with a stage last issues its refill. So one warpgroup's epilogue (integer work)
// never holds the other's wgmma (tensor work) at a barrier. The bulk copy moves bytes as they are,
// so the anchors come pre-tiled: tile_anchors writes each step's [128 anchors][64 dimensions]
// block, 128-byte swizzled, as one contiguous 16 KB run (Ct).
#define WM_STAGES(dp) ((dp) <= 192 ? 4 : 3)
#define WM_SMEM(dp) (W9_P * (dp) * 2 + WM_STAGES(dp) * W9_HALF + 1024)  // the mbarriers sit in the alignment pad

// Ct[(a * kSteps + kc) * 8192 + swizzled offset / 2] = Ch[128a + r][64kc + 8c ..]: one thread per 16 bytes.
extern "C" __global__ void tile_anchors(const __half *__restrict__ Ch, int dp, int mpad, __half *__restrict__ Ct) {
  const int kSteps = dp / W9_K;
  const long long chunks = (long long)mpad * dp / 8;
  for (long long c = blockIdx.x * (long long)blockDim.x + threadIdx.x; c < chunks; c += (long long)gridDim.x * blockDim.x) {
    const long long row = c / (dp / 8);  // anchor
    const int col = (int)(c % (dp / 8));  // 16-byte chunk within the row
    const int r = (int)(row & 127), kc = col >> 3, ch = col & 7;
    const long long block = (row >> 7) * kSteps + kc;
    const long long dst = block * (W9_HALF / 16) + r * 8 + (ch ^ (r & 7));
    reinterpret_cast<uint4 *>(Ct)[dst] = reinterpret_cast<const uint4 *>(Ch)[c];
  }
}

__device__ __forceinline__ void mbar_init(unsigned bar, unsigned count) {
  asm volatile("mbarrier.init.shared::cta.b64 [%0], %1;" ::"r"(bar), "r"(count));
}
__device__ __forceinline__ void mbar_expect_tx(unsigned bar, unsigned bytes) {
  asm volatile("mbarrier.arrive.expect_tx.shared::cta.b64 _, [%0], %1;" ::"r"(bar), "r"(bytes) : "memory");
}
__device__ __forceinline__ void mbar_wait(unsigned bar, unsigned parity) {
  asm volatile(
      "{\n.reg .pred done;\nwait_%=:\n"
      "mbarrier.try_wait.parity.shared::cta.b64 done, [%0], %1;\n"
      "@!done bra wait_%=;\n}\n" ::"r"(bar), "r"(parity) : "memory");
}
// One contiguous copy global -> shared by the copy engine, completing `bytes` on the mbarrier.
__device__ __forceinline__ void bulk_copy(unsigned dst, const void *src, unsigned bytes, unsigned bar) {
  asm volatile("cp.async.bulk.shared::cluster.global.mbarrier::complete_tx::bytes [%0], [%1], %2, [%3];"
               ::"r"(dst), "l"(src), "r"(bytes), "r"(bar) : "memory");
}

template <int LK, bool GUARD>
__device__ __forceinline__ void screen_h90m_body(const __half *__restrict__ Xh, const __half *__restrict__ Ct,
                                                 const float *__restrict__ xn, const float *__restrict__ cn,
                                                 int n, int dp, int mpad, unsigned hmask, unsigned *__restrict__ out) {
  extern __shared__ __align__(1024) unsigned char dsm[];
  // [S mbarriers (8 bytes each), S use counters] in front of the 1024-aligned points and stages.
  const unsigned start = smem_u32(dsm), bars = start, base = (start + 64 + 1023u) & ~1023u;
  const int S = WM_STAGES(dp);
  const unsigned stages = base + W9_P * dp * 2;
  unsigned *used = reinterpret_cast<unsigned *>(dsm + S * 8);
  unsigned dynamic;
  asm("mov.u32 %0, %%dynamic_smem_size;" : "=r"(dynamic));
  if (stages + S * W9_HALF - start > dynamic) __trap();  // WM_SMEM assumes an aligned start
  const int tid = threadIdx.x, wg = tid >> 7, lane = tid & 31, g = lane >> 2, t = lane & 3;
  const int r0 = wg * 64 + ((tid >> 5) & 3) * 16 + g;
  const long long p0 = (long long)blockIdx.x * W9_P;
  const int kSteps = dp / W9_K, steps = kSteps * (mpad / W9_A);
  auto chunk = [](int r, int c) { return (unsigned)(r * 128 + ((c ^ (r & 7)) << 4)); };
  auto refill = [&](int step) {  // stage step % S <- step's 16 KB of Ct
    const unsigned bar = bars + (step % S) * 8;
    mbar_expect_tx(bar, W9_HALF);
    bulk_copy(stages + (step % S) * W9_HALF, Ct + (size_t)step * (W9_HALF / 2), W9_HALF, bar);
  };

  if (tid == 0) {
    for (int s = 0; s < S; s++) {
      mbar_init(bars + s * 8, 1);
      used[s] = 0;
    }
    asm volatile("fence.mbarrier_init.release.cluster;" ::: "memory");
  }
  for (int c = tid; c < W9_P * kSteps * 8; c += W9_THREADS) {
    const int p = c / (W9_P * 8), r = (c % (W9_P * 8)) >> 3, ch = c & 7;
    cp_async16(base + p * W9_HALF + chunk(r, ch), Xh + (size_t)(p0 + r) * dp + p * W9_K + ch * 8);
  }
  cp_async_commit();
  cp_async_wait<0>();
  asm volatile("fence.proxy.async.shared::cta;" ::: "memory");
  __syncthreads();  // the barriers are initialised and the points in place: the only block-wide wait
  if (tid == 0)
    for (int s = 0; s < S && s < steps; s++) refill(s);

  // Keys of |dist| rather than max(dist, 0): one AND clears the sign with the index bits. A negative
  // approximate distance a'' (rounding, true distance near 0) has |a''| within the same bound B
  // of the true value as a'' itself (true >= 0 and true <= a'' + B give |a''| - true <= B and
  // true - |a''| <= B), so exact_h's certificate holds as for the clamped key.
  const unsigned amask = hmask & 0x7fffffffu;
  const float xr[2] = {xn[p0 + r0], xn[p0 + r0 + 8]};
  unsigned lk[2][LK + 1];
#pragma unroll
  for (int q = 0; q < 2; q++)
#pragma unroll
    for (int e = 0; e <= LK; e++) lk[q][e] = SH_EMPTY;
  float acc[64];

  for (int step = 0; step < steps; step++) {
    const int s = step % S, kc = step % kSteps;
    mbar_wait(bars + s * 8, (unsigned)(step / S) & 1u);
    wgmma_fence();
    wgmma_f16_x4(acc, base + kc * W9_HALF + wg * 64 * 128, stages + s * W9_HALF, kc != 0);
    wgmma_commit();
    wgmma_wait0();
    // This warpgroup is done with the stage; the second to finish refills it.
    if ((tid & 127) == 0 && step + S < steps) {
      __threadfence_block();
      if (atomicAdd(used + s, 1u) == 1u) {
        used[s] = 0;
        __threadfence_block();
        refill(step + S);
      }
    }
    if (kc == kSteps - 1) {
      const int a0 = (step / kSteps) * W9_A;
#pragma unroll
      for (int w = 0; w < 8; w++) {
#pragma unroll
        for (int h = 0; h < 2; h++) {
#pragma unroll
          for (int e = 0; e < 2; e++) {
            const unsigned j = (unsigned)(a0 + 16 * w + 8 * h + 2 * t + e);
            const float cj = __ldg(cn + j);
#pragma unroll
            for (int q = 0; q < 2; q++) {
              const float dist = fmaf(-2.f, acc[8 * w + 4 * h + 2 * q + e], xr[q] + cj);
              const unsigned key = (__float_as_uint(dist) & amask) | j;  // |dist|: see amask
              if (!GUARD || key < lk[q][LK]) key_push<LK>(key, lk[q]);
            }
          }
        }
      }
    }
  }
#pragma unroll
  for (int q = 0; q < 2; q++) {
    unsigned row[SH_ROW + 1];
#pragma unroll
    for (int e = 0; e <= SH_ROW; e++) row[e] = e < LK ? lk[q][e] : e == SH_ROW ? lk[q][LK] : SH_EMPTY;
#pragma unroll
    for (int o = 1; o < 4; o <<= 1) {
      unsigned other[SH_ROW + 1];
#pragma unroll
      for (int e = 0; e <= SH_ROW; e++) other[e] = __shfl_xor_sync(0xffffffffu, row[e], o);
      key_merge<SH_ROW>(other, row);
    }
    const long long i = p0 + r0 + 8 * q;
    if (t == 0 && i < n) {
#pragma unroll
      for (int e = 0; e <= SH_ROW; e++) out[(size_t)e * n + i] = row[e];
    }
  }
}

extern "C" __global__ void __launch_bounds__(W9_THREADS, 2)
    screen_h90m(const __half *Xh, const __half *Ct, const float *xn, const float *cn, const unsigned *scalars, int n,
                int dp, int mpad, unsigned hmask, unsigned *keys) {
  screen_h90m_body<8, true>(Xh, Ct, xn, cn, n, dp, mpad, hmask, keys);
}
extern "C" __global__ void __launch_bounds__(W9_THREADS, 2)
    screen_h90m_l3(const __half *Xh, const __half *Ct, const float *xn, const float *cn, const unsigned *scalars, int n,
                   int dp, int mpad, unsigned hmask, unsigned *keys) {
  screen_h90m_body<3, true>(Xh, Ct, xn, cn, n, dp, mpad, hmask, keys);
}
extern "C" __global__ void __launch_bounds__(W9_THREADS, 2)
    screen_h90m_l2(const __half *Xh, const __half *Ct, const float *xn, const float *cn, const unsigned *scalars, int n,
                   int dp, int mpad, unsigned hmask, unsigned *keys) {
  screen_h90m_body<2, false>(Xh, Ct, xn, cn, n, dp, mpad, hmask, keys);
}
extern "C" __global__ void __launch_bounds__(W9_THREADS, 2)
    screen_h90m_l3b(const __half *Xh, const __half *Ct, const float *xn, const float *cn, const unsigned *scalars, int n,
                    int dp, int mpad, unsigned hmask, unsigned *keys) {
  screen_h90m_body<3, false>(Xh, Ct, xn, cn, n, dp, mpad, hmask, keys);
}
extern "C" __global__ void __launch_bounds__(W9_THREADS, 2)
    screen_h90m_l4b(const __half *Xh, const __half *Ct, const float *xn, const float *cn, const unsigned *scalars, int n,
                    int dp, int mpad, unsigned hmask, unsigned *keys) {
  screen_h90m_body<4, false>(Xh, Ct, xn, cn, n, dp, mpad, hmask, keys);
}
