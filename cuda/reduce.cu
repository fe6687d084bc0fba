// reduce: from each point's top-2 (written by assign) accumulate the per-anchor statistics of
// types.ts: soft weights w1/w2 (temperature), Huber weights r, weighted sums S and W, counts, sse,
// the farthest point, and per block the energy and changed-assignment partials.
//
// One warp per point (lanes split the dimensions), per-point atomics into per-anchor
// accumulators: no per-anchor scan over the n points. Every sum is an integer: S, W, sse and the
// energy in 64-bit fixed point (each term rounded to an integer once, then added with integer
// atomics, which are associative), counts and changes as counts, the farthest point as a max.
// So a pass gives the same bits whatever the order in which the atomics land, the grid, the
// tiles, or how the rows are split between devices (src/backend/sharded/): sums of several
// shards are the integer sums of their parts. The scales come from the host
// (src/backend/fixed.ts: passScales, from the whole data's n and largest |x|) so that no sum can
// overflow.
//
// X may be one tile or one shard of the data: the per-point pointers are then offset to it and
// `first` is the data row of X's row 0, so the farthest point is recorded by its index in the
// whole data.
#include "common.cuh"

#define RD_THREADS 256
#define NONE 0xffffffffu
// Soft shares below this are dropped (w2 = 0, w1 = 1). The fixed-point sums resolve weights
// down to ~1e-13 (n = 10^6), so an anchor supported only by shares of e^-30 would get a mean
// made of rounding; shares this small move no f32 anchor that has real support anyway.
#define MIN_SHARE 9.5367431640625e-07  // 2^-20

__device__ __forceinline__ double robust(double dist, double H) {
  return dist <= H ? 1.0 : sqrt(H / dist);
}

__device__ __forceinline__ void add_fixed(long long *p, double v) {
  atomicAdd(reinterpret_cast<unsigned long long *>(p), (unsigned long long)__double2ll_rn(v));
}

// The points are taken in chunks of RD_CHUNK consecutive entries of `order` (the previous pass's
// points sorted by anchor: sort_* below; null: the rows in order), one chunk per warp. Each chunk's
// per-point statistics are spread over the lanes; its sums S are added a run of one anchor at a
// time: the lanes hold the run's fixed-point sums of RD_SLAB dimensions each in registers and add
// them to S with one atomic per dimension when the anchor changes. Once the order is sorted, most
// chunks are one or two runs, so S takes a few atomics per chunk instead of d per point. Each term
// is rounded to an integer exactly as before and the sums are integers: any order, any grouping,
// the same bits.
#define RD_CHUNK 64  // two points per lane
#define RD_AHEAD 4   // rows whose loads are in flight together
#define RD_SLAB 4  // dimensions per lane per walk over a chunk: 128 at a time

// A run's sums into S (one atomic per dimension of the slab), and the run restarted.
__device__ __forceinline__ void flush_run(long long *S, unsigned a, int d, int k0, int lane, long long (&run)[RD_SLAB]) {
#pragma unroll
  for (int r = 0; r < RD_SLAB; r++) {
    const int k = k0 + lane + 32 * r;
    if (k < d && run[r] != 0) atomicAdd(reinterpret_cast<unsigned long long *>(S + (size_t)a * d + k), (unsigned long long)run[r]);
    run[r] = 0;
  }
}

template <typename T>
__device__ void reduce_points(const T *__restrict__ X, int n, int d,
                              const unsigned *__restrict__ J1, const float *__restrict__ D1,
                              const unsigned *__restrict__ J2, const float *__restrict__ D2,
                              unsigned *__restrict__ assign, const double *__restrict__ H,
                              double temperature, int accumulate, double sScale, double wScale, double eScale,
                              long long *S, long long *W, unsigned *count, long long *sse,
                              unsigned long long *far, long long *partial, int first,
                              const unsigned *__restrict__ order) {
  __shared__ long long shE[RD_THREADS / 32], shC[RD_THREADS / 32];
  const int lane = threadIdx.x & 31, warp = threadIdx.x >> 5;
  const long long warps = (long long)gridDim.x * (RD_THREADS / 32);
  long long energy = 0, changed = 0;  // each lane's running sums (fixed point, integers)
  // A point's soft share of its runner-up, and the weights of its two anchors.
  auto weights = [&](unsigned a, unsigned b, float da, float db, double &wa, double &wb) {
    double w2 = 0.0;
    if (temperature > 0.0 && b != NONE) w2 = 1.0 / (1.0 + exp(((double)db - (double)da) / temperature));
    if (w2 < MIN_SHARE) w2 = 0.0;
    wa = (1.0 - w2) * robust(da, H[a]);
    wb = w2 > 0.0 ? w2 * robust(db, H[b]) : 0.0;
  };
  for (long long c0 = ((long long)blockIdx.x * (RD_THREADS / 32) + warp) * RD_CHUNK; c0 < n; c0 += warps * RD_CHUNK) {
    const int len = (int)min((long long)RD_CHUNK, n - c0);
    // Per-point statistics, one point per lane (lane l: points l and 32 + l of the chunk), whose
    // row, anchors and weights stay in registers for the sums below.
    unsigned pi[RD_CHUNK / 32], pa[RD_CHUNK / 32], pb[RD_CHUNK / 32];
    double pwa[RD_CHUNK / 32], pwb[RD_CHUNK / 32];
#pragma unroll
    for (int h = 0; h < RD_CHUNK / 32; h++) {
      const int q = h * 32 + lane;
      pi[h] = 0; pa[h] = NONE; pb[h] = NONE; pwa[h] = 0.0; pwb[h] = 0.0;
      if (q >= len) continue;
      const long long i = order ? order[c0 + q] : c0 + q;
      const unsigned a = J1[i], b = J2[i];
      const float da = D1[i];
      const long long e = __double2ll_rn((double)da * eScale);  // this point's d1 in fixed point
      atomicAdd(count + a, 1u);
      atomicAdd(reinterpret_cast<unsigned long long *>(sse + a), (unsigned long long)e);
      // Largest distance wins; among equal distances the lowest i (stored inverted).
      atomicMax(far + a, ((unsigned long long)__float_as_uint(da) << 32) | (unsigned long long)(NONE - (unsigned)(first + i)));
      changed += assign[i] != a ? 1 : 0;
      assign[i] = a;
      energy += e;
      pi[h] = (unsigned)i; pa[h] = a; pb[h] = b;
      if (accumulate) {
        weights(a, b, da, D2[i], pwa[h], pwb[h]);
        add_fixed(W + a, pwa[h] * wScale);
        if (pwb[h] > 0.0) add_fixed(W + b, pwb[h] * wScale);
      }
    }
    if (!accumulate) continue;
    // The sums, RD_SLAB·32 dimensions at a time: the chunk's points in order, RD_AHEAD rows loaded
    // at once; a run of one anchor summed in registers; the runner-up's soft share (warm phase
    // only) added directly.
    for (int k0 = 0; k0 < d; k0 += 32 * RD_SLAB) {
      long long run[RD_SLAB];
#pragma unroll
      for (int r = 0; r < RD_SLAB; r++) run[r] = 0;
      unsigned cur = NONE;
#pragma unroll
      for (int h = 0; h < RD_CHUNK / 32; h++) {
        for (int l0 = 0; l0 < 32 && h * 32 + l0 < len; l0 += RD_AHEAD) {
          unsigned ri[RD_AHEAD], ra[RD_AHEAD], rb[RD_AHEAD];
          double rwa[RD_AHEAD], rwb[RD_AHEAD];
          float xv[RD_AHEAD][RD_SLAB];
#pragma unroll
          for (int u = 0; u < RD_AHEAD; u++) {
            ri[u] = __shfl_sync(0xffffffffu, pi[h], l0 + u);
            ra[u] = __shfl_sync(0xffffffffu, pa[h], l0 + u);
            rb[u] = __shfl_sync(0xffffffffu, pb[h], l0 + u);
            rwa[u] = __shfl_sync(0xffffffffu, pwa[h], l0 + u);
            rwb[u] = __shfl_sync(0xffffffffu, pwb[h], l0 + u);
            const size_t base = (size_t)ri[u] * d;
#pragma unroll
            for (int r = 0; r < RD_SLAB; r++) {
              const int k = k0 + lane + 32 * r;
              xv[u][r] = (ra[u] != NONE && k < d) ? load_f32(X, base + k) : 0.f;
            }
          }
#pragma unroll
          for (int u = 0; u < RD_AHEAD; u++) {
            if (ra[u] == NONE) continue;  // past the chunk's end
            if (ra[u] != cur) {
              if (cur != NONE) flush_run(S, cur, d, k0, lane, run);
              cur = ra[u];
            }
#pragma unroll
            for (int r = 0; r < RD_SLAB; r++) {
              const int k = k0 + lane + 32 * r;
              if (k < d) {
                const double x = (double)xv[u][r] * sScale;
                run[r] += __double2ll_rn(rwa[u] * x);
                if (rwb[u] > 0.0) add_fixed(S + (size_t)rb[u] * d + k, rwb[u] * x);
              }
            }
          }
        }
      }
      if (cur != NONE) flush_run(S, cur, d, k0, lane, run);
    }
  }
  // Lane sums, then warp sums, then the block's.
  for (int o = 16; o > 0; o >>= 1) {
    energy += __shfl_xor_sync(0xffffffffu, energy, o);
    changed += __shfl_xor_sync(0xffffffffu, changed, o);
  }
  if (lane == 0) {
    shE[warp] = energy;
    shC[warp] = changed;
  }
  __syncthreads();
  if (threadIdx.x == 0) {
    long long e = 0, c = 0;
    for (int w = 0; w < RD_THREADS / 32; w++) {
      e += shE[w];
      c += shC[w];
    }
    partial[2 * blockIdx.x] = e;
    partial[2 * blockIdx.x + 1] = c;
  }
}

#define REDUCE_ARGS(T)                                                                                     \
  const T *X, int n, int d, const unsigned *J1, const float *D1, const unsigned *J2,                     \
      const float *D2, unsigned *assign, const double *H, double temperature, int accumulate,           \
      double sScale, double wScale, double eScale, long long *S, long long *W, unsigned *count,         \
      long long *sse, unsigned long long *far, long long *partial, int first, const unsigned *order
#define REDUCE_PASS \
  X, n, d, J1, D1, J2, D2, assign, H, temperature, accumulate, sScale, wScale, eScale, S, W, count, sse, far, partial, first, order

extern "C" __global__ void __launch_bounds__(RD_THREADS) reduce_points_f32(REDUCE_ARGS(float)) { reduce_points(REDUCE_PASS); }
extern "C" __global__ void __launch_bounds__(RD_THREADS) reduce_points_f16(REDUCE_ARGS(__half)) { reduce_points(REDUCE_PASS); }

// One block: out[0] = Σ energy partials (fixed point), out[1] = Σ changed partials; out[2] = the
// length of the screen's fallback list (screen.cu), -1 when `fallback` is null (no screen; or a
// tiled pass, whose list restarts with each tile, so the engine counts it per tile). Tiled,
// `partial` holds the blocks of every tile, one after the other. Integer sums: any order is exact.
extern "C" __global__ void __launch_bounds__(RD_THREADS) pass_end(const long long *partial, int blocks,
                                                                  const unsigned *fallback, long long *out) {
  __shared__ long long shE[RD_THREADS], shC[RD_THREADS];
  long long e = 0, c = 0;
  for (int b = threadIdx.x; b < blocks; b += RD_THREADS) {
    e += partial[2 * b];
    c += partial[2 * b + 1];
  }
  shE[threadIdx.x] = e;
  shC[threadIdx.x] = c;
  __syncthreads();
  for (int s = RD_THREADS / 2; s > 0; s >>= 1) {
    if (threadIdx.x < s) {
      shE[threadIdx.x] += shE[threadIdx.x + s];
      shC[threadIdx.x] += shC[threadIdx.x + s];
    }
    __syncthreads();
  }
  if (threadIdx.x == 0) {
    out[0] = shE[0];
    out[1] = shC[0];
    out[2] = fallback ? (long long)*fallback : -1;
  }
}

// The points sorted by anchor, for the next pass's reduce_points (its `order`): a counting sort of
// `assign`. sort_count adds each anchor's points into cnt (zeroed by pass_begin), sort_scan turns
// the counts into each anchor's first position, sort_scatter writes each point at its anchor's next
// free position. Lanes of a warp with the same anchor take one atomic together (__match_any_sync).
// The order within an anchor depends on timing; reduce_points' sums do not depend on it.
extern "C" __global__ void __launch_bounds__(RD_THREADS) sort_count(const unsigned *assign, int n, unsigned *cnt) {
  const int lane = threadIdx.x & 31;
  for (long long w0 = (long long)blockIdx.x * blockDim.x + (threadIdx.x & ~31); w0 < n; w0 += (long long)gridDim.x * blockDim.x) {
    const long long i = w0 + lane;
    const unsigned a = i < n ? assign[i] : NONE;
    const unsigned peers = __match_any_sync(0xffffffffu, a);
    if (a != NONE && lane == __ffs(peers) - 1) atomicAdd(cnt + a, (unsigned)__popc(peers));
  }
}

// One block: cnt[j] = Σ cnt[0 .. j−1] (exclusive), each thread scanning its own stretch of anchors.
extern "C" __global__ void __launch_bounds__(1024) sort_scan(unsigned *cnt, int m) {
  __shared__ unsigned part[1024];
  const int per = (m + 1023) / 1024, j0 = min(m, threadIdx.x * per), j1 = min(m, j0 + per);
  unsigned s = 0;
  for (int j = j0; j < j1; j++) s += cnt[j];
  part[threadIdx.x] = s;
  __syncthreads();
  for (int o = 1; o < 1024; o <<= 1) {  // inclusive scan of the stretches' sums (Hillis-Steele)
    const unsigned v = threadIdx.x >= o ? part[threadIdx.x - o] : 0u;
    __syncthreads();
    part[threadIdx.x] += v;
    __syncthreads();
  }
  unsigned acc = threadIdx.x > 0 ? part[threadIdx.x - 1] : 0u;
  for (int j = j0; j < j1; j++) {
    const unsigned c = cnt[j];
    cnt[j] = acc;
    acc += c;
  }
}

extern "C" __global__ void __launch_bounds__(RD_THREADS) sort_scatter(const unsigned *assign, int n, unsigned *cnt, unsigned *order) {
  const int lane = threadIdx.x & 31;
  for (long long w0 = (long long)blockIdx.x * blockDim.x + (threadIdx.x & ~31); w0 < n; w0 += (long long)gridDim.x * blockDim.x) {
    const long long i = w0 + lane;
    const unsigned a = i < n ? assign[i] : NONE;
    const unsigned peers = __match_any_sync(0xffffffffu, a);
    const int leader = __ffs(peers) - 1;
    unsigned at = 0;
    if (a != NONE && lane == leader) at = atomicAdd(cnt + a, (unsigned)__popc(peers));
    at = __shfl_sync(0xffffffffu, at, leader);
    if (a != NONE) order[at + __popc(peers & ((1u << lane) - 1u))] = (unsigned)i;
  }
}
