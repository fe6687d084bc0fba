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

// Arguments as screen_h's (dp a multiple of 64). Each lane keeps LK keys per row (and the smallest
// it pushed out); the quad's lists merge into the row's 8 (+ the smallest key outside them) at the
// end. A small LK makes the per-element insert cheap and rare; the row still gets up to 4·LK
// candidates. RESIDENT: the block's points stay in shared memory for the whole kernel (dp <= 256:
// at most 64 KB, loaded once as dp/64 panels of [128 rows][128 bytes]) and only the anchors stream
// through the stages, half the bytes from L2 of streaming both (the points again for every tile of
// anchors). Dynamic shared memory: W9_SMEM, or W9R_SMEM(dp) when resident.
#define W9R_MAX_DP 256
#define W9R_SMEM(dp) (W9_P * (dp) * 2 + W9_STAGES * W9_HALF + 1024)
template <int LK, bool RESIDENT>
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
              if (key < lk[q][LK]) key_push<LK>(key, lk[q]);
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
