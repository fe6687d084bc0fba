// The exact decision of the screened assign (screen_h.cu's kernels exact_h, exact_h16 and
// exact_collect): a point's candidate anchors measured with the direct kernels' own f32 chain, their
// exact top-2, and the certificate that no other anchor can be in it. Four threads per point, one
// per candidate (or per 2 / 4 for 8 / 16-key rows); the quad then merges.
#pragma once
#include "common.cuh"
#include "keys.cuh"
#include "top.cuh"

#define EX_P 64  // points per block of exact_h (4 threads each)

// The direct distance of tile.cuh's kernels: the same f32 operations in the same order. Rows of
// a multiple of 4 are read 16 bytes (f16: 8 bytes) at a time (load4): the 4 threads of a point
// read 4 different anchors, so wide loads cut the scattered load instructions by 4.
template <typename T>
__device__ __forceinline__ float direct_dist(const T *__restrict__ x, const float *__restrict__ c, int d) {
  float s = 0.f;
  if ((d & 3) == 0) {
    for (int k = 0; k < d; k += 4) {
      const float4 xv = load4(x, k), cv = load4(c, k);
      float t = xv.x - cv.x;
      s = fmaf(t, t, s);
      t = xv.y - cv.y;
      s = fmaf(t, t, s);
      t = xv.z - cv.z;
      s = fmaf(t, t, s);
      t = xv.w - cv.w;
      s = fmaf(t, t, s);
    }
    return s;
  }
  for (int k = 0; k < d; k++) {
    const float t = load_f32(x, k) - __ldg(c + k);
    s = fmaf(t, t, s);
  }
  return s;
}

// exact_h16 stages its EX_P points' rows in shared memory, EX_SLAB dimensions at a time, as f32:
// the four threads of a point and the eight points of a warp then read x without the scattered row
// loads that made it L1-bound (8 rows per load instruction). Rows are EX_SLAB + 4 floats apart, so
// the 8 rows a warp reads at one k fall in different banks. exact_h (8-key rows: fewer candidates
// to share a row between) reads x from global memory: staged, it ran slower at prod, with half the
// blocks per SM (bench/kernels/NOTES.md, session 10).
#define EX_SLAB 128
#define EX_STRIDE (EX_SLAB + 4)

// Rows [row0, row0 + EX_P) of X (those below n), dimensions [k0, k0 + len), into xs as f32.
template <typename T>
__device__ __forceinline__ void stage_rows(const T *__restrict__ X, long long row0, int n, int d, int k0, int len,
                                           float (*xs)[EX_STRIDE]) {
  if ((d & 3) == 0) {  // len is then a multiple of 4 too
    const int quads = len >> 2;
    for (int e = threadIdx.x; e < EX_P * quads; e += blockDim.x) {
      const int p = e / quads, k = (e - p * quads) << 2;
      if (row0 + p < n) *reinterpret_cast<float4 *>(&xs[p][k]) = load4(X + (size_t)(row0 + p) * d, k0 + k);
    }
  } else {
    for (int e = threadIdx.x; e < EX_P * len; e += blockDim.x) {
      const int p = e / len, k = e - p * len;
      if (row0 + p < n) xs[p][k] = load_f32(X, (size_t)(row0 + p) * d + k0 + k);
    }
  }
}

// direct_dist of the thread's active candidates at once over dimensions k0 .. k0 + len − 1 of the
// point's row x, continuing the chains in s: each chain is the same f32 operations in the same order
// as direct_dist's (so the same bits), and x is read once for all. x is the row in global memory
// (T, indexed from k0), or the slab staged in shared memory (SHARED: float, indexed from 0).
template <int PER, bool SHARED, typename XT>
__device__ __forceinline__ void direct_dists(const XT *x, const float *__restrict__ C, int d, int k0, int len,
                                             const unsigned (&j)[PER], const bool (&act)[PER], float (&s)[PER]) {
  if ((d & 3) == 0) {
    for (int k = 0; k < len; k += 4) {
      float4 xv;
      if constexpr (SHARED) xv = *reinterpret_cast<const float4 *>(x + k);
      else xv = load4(x, k0 + k);
#pragma unroll
      for (int c = 0; c < PER; c++) {
        if (!act[c]) continue;
        const float4 cv = load4(C + (size_t)j[c] * d, k0 + k);
        float t = xv.x - cv.x;
        s[c] = fmaf(t, t, s[c]);
        t = xv.y - cv.y;
        s[c] = fmaf(t, t, s[c]);
        t = xv.z - cv.z;
        s[c] = fmaf(t, t, s[c]);
        t = xv.w - cv.w;
        s[c] = fmaf(t, t, s[c]);
      }
    }
    return;
  }
  for (int k = 0; k < len; k++) {
    float xk;
    if constexpr (SHARED) xk = x[k];
    else xk = load_f32(x, k0 + k);
#pragma unroll
    for (int c = 0; c < PER; c++) {
      if (!act[c]) continue;
      const float t = xk - __ldg(C + (size_t)j[c] * d + k0 + k);
      s[c] = fmaf(t, t, s[c]);
    }
  }
}

// In: keys (KEYS + 1 arrays of n, from screen_h), xn = ‖x''‖², prep_anchors' scalars.
// bound = {c1, c2, c3, c4}: B'' = c1·r·R + c2·(r + R)² + c3·(r + R) + c4 in the scaled units
// (r = ‖x''‖, R = max ‖c''‖); s2 = s² converts the exact distances to them.
// Only candidates that can be in the top-2 are measured: the two smallest keys' anchors have
// exact distances <= U = top(K1) + B, so a candidate whose key says a'' > U + B cannot be.
// Out: J1, D1, J2, D2 exact, or the point appended to `list` (its length at scalars[2]).
template <int KEYS, typename T>
__device__ void exact_h(const T *__restrict__ X, const float *__restrict__ C, const float *__restrict__ xn,
                        const unsigned *__restrict__ keys, unsigned *scalars, float c1, float c2, float c3, float c4,
                        float s2, unsigned imask, int n, int d, int m, unsigned *J1, float *D1, unsigned *J2,
                        float *D2, unsigned *list, float *thr, unsigned *ccount, int cap) {
  constexpr int PER = KEYS / 4;  // candidates per thread
  const int lane = threadIdx.x & 31, q = lane & 3;
  const long long i = (long long)blockIdx.x * EX_P + (threadIdx.x >> 2);
  const bool live = i < n;
  const bool fits = scalars[1] == 0u;  // an anchor that did not fit fp16 makes every a'' suspect
  float B = 0.f, U = 0.f;
  unsigned last = SH_EMPTY;
  if (live) {
    const float r = sqrtf(xn[i]), R = sqrtf(__uint_as_float(scalars[0])), rR = r + R;
    B = fmaf(c1 * r, R, fmaf(c2 * rR, rR, fmaf(c3, rR, c4)));
    U = (key_top(keys[(size_t)n + i], imask) + 2.f * B) * 1.00000095367431640625f;  // 1 + 2^-20: rounding
    last = keys[(size_t)KEYS * n + i];
  }
  float e1 = __int_as_float(0x7f800000), e2 = e1;
  unsigned j1 = NONE, j2 = NONE;
  unsigned jc[PER];
  bool act[PER];
#pragma unroll
  for (int c = 0; c < PER; c++) {
    const unsigned key = live ? keys[(size_t)(q + 4 * c) * n + i] : SH_EMPTY;
    jc[c] = key & imask;
    act[c] = key != SH_EMPTY && jc[c] < (unsigned)m && (!fits || !(key_val(key, imask) > U));
  }
  float dc[PER];
#pragma unroll
  for (int c = 0; c < PER; c++) dc[c] = 0.f;
  if constexpr (KEYS == SH_ROW_WIDE) {
    __shared__ __align__(16) float xs[EX_P][EX_STRIDE];
    const int p = threadIdx.x >> 2;  // the thread's point in the block
    for (int k0 = 0; k0 < d; k0 += EX_SLAB) {  // every thread of the block, live or not: barriers
      const int len = min(EX_SLAB, d - k0);
      __syncthreads();  // the slab before is read
      stage_rows(X, (long long)blockIdx.x * EX_P, n, d, k0, len, xs);
      __syncthreads();
      if (live) direct_dists<PER, true>(xs[p], C, d, k0, len, jc, act, dc);
    }
  } else {  // rows past n (the last block) read row 0: in bounds, their results unused
    direct_dists<PER, false>(X + (size_t)(live ? i : 0) * d, C, d, 0, d, jc, act, dc);
  }
#pragma unroll
  for (int c = 0; c < PER; c++)
    if (act[c]) top2_push(dc[c], jc[c], e1, j1, e2, j2);
  // The quad's exact top-2 (ties: lower index); every lane ends with it.
#pragma unroll
  for (int o = 1; o < 4; o <<= 1) top2_merge_xor(o, e1, j1, e2, j2);
  if (!live || q != 0) return;
  // Outside the list every anchor has a'' >= val(last): none can beat e2 when val(last) − B > e2.
  bool sure = false;
  if (fits) {
    const float a = key_val(last, imask);
    sure = last >= 0x7f800000u || a - B > e2 * s2;  // every real anchor listed, or the margin (false for NaN)
  }
  if (sure) {
    J1[i] = j1; D1[i] = e1; J2[i] = j2; D2[i] = e2;
  } else {
    // Listed, with the threshold collect_h gathers candidates under: every anchor whose distance
    // can be <= e2 (an upper bound of the true runner-up's) has a'' <= s²·e2 + B. -1: approximate
    // distances are not to be trusted (an anchor outside fp16), the direct pass decides.
    const unsigned pos = atomicAdd(scalars + 2, 1u);
    list[pos] = (unsigned)i;
    if (pos < (unsigned)cap) {
      thr[pos] = fits ? fmaf(e2, s2, B) * 1.00000095367431640625f : -1.f;  // 1 + 2^-20: the rounding
      ccount[pos] = 0u;
    }
  }
}

// Four threads per listed point: the candidates' direct distances, their top-2 (ties: lower index).
template <typename T>
__device__ void exact_collect(const T *__restrict__ X, const float *__restrict__ C, const unsigned *__restrict__ list,
                              unsigned *scalars, const float *__restrict__ thr, int cap, const unsigned *__restrict__ cand,
                              const unsigned *__restrict__ ccount, int ncand, int d, unsigned *J1, float *D1,
                              unsigned *J2, float *D2, unsigned *list2) {
  const int total = (int)scalars[2];
  const int q = threadIdx.x & 3;
  const long long pos = (long long)blockIdx.x * EX_P + (threadIdx.x >> 2);
  if (blockIdx.x * EX_P >= total) return;
  const bool live = pos < total;
  const unsigned c = live && pos < cap ? ccount[pos] : 0u;
  const bool done = live && pos < cap && thr[pos] >= 0.f && c <= (unsigned)ncand;
  const unsigned i = live ? list[pos] : 0u;
  float e1 = __int_as_float(0x7f800000), e2 = e1;
  unsigned j1 = NONE, j2 = NONE;
  if (done)
    for (unsigned k = q; k < c; k += 4) {
      const unsigned j = cand[(size_t)pos * ncand + k];
      top2_push(direct_dist(X + (size_t)i * d, C + (size_t)j * d, d), j, e1, j1, e2, j2);
    }
#pragma unroll
  for (int o = 1; o < 4; o <<= 1) top2_merge_xor(o, e1, j1, e2, j2);
  if (!live || q != 0) return;
  if (done) {
    J1[i] = j1; D1[i] = e1; J2[i] = j2; D2[i] = e2;
  } else {
    list2[atomicAdd(scalars + 4, 1u)] = i;
  }
}
