// reduce: from each point's top-2 (written by the assign) accumulate the per-anchor statistics of
// types.ts: soft weights w1/w2 (temperature), Huber weights r, weighted sums S and W, counts, sse,
// the farthest point, and per block the energy and changed-assignment partials.
//
// Two ways to the same bits. The sorted reduce (the default: reduce_tally, reduce_offsets,
// reduce_scatter, reduce_sums, described below) groups the points' contributions by anchor and
// sums each anchor's run in registers; the atomic one (reduce_points, for A/B runs) adds every
// term of S with its own atomic, which contends where hundreds of points share an anchor. Every
// sum is an integer: S, W, sse and the energy in 64-bit fixed point (each term rounded to an
// integer once, then added with integer adds, which are associative), counts and changes as
// counts, the farthest point as a max. So a pass gives the same bits whatever the order in which
// the adds land, the grid, the tiles, the reduce, or how the rows are split between devices
// (src/backend/sharded/): sums of several shards are the integer sums of their parts. The scales
// come from the host (src/backend/fixed.ts: passScales, from the whole data's n and largest |x|)
// so that no sum can overflow.
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

// One point's weights in the sums: wa for its nearest anchor a, wb for the runner-up b (0 when
// the soft share is below MIN_SHARE or there is no temperature). wa > 0 always (w2 <= 1/2).
struct Shares {
  double wa, wb;
};
__device__ __forceinline__ Shares shares_of(unsigned a, unsigned b, float da, float db, const double *__restrict__ H,
                                            double temperature) {
  double w2 = 0.0;
  if (temperature > 0.0 && b != NONE) w2 = 1.0 / (1.0 + exp(((double)db - (double)da) / temperature));
  if (w2 < MIN_SHARE) w2 = 0.0;
  return {(1.0 - w2) * robust(da, H[a]), w2 > 0.0 ? w2 * robust(db, H[b]) : 0.0};
}

// A point's farthest-point key: the largest distance wins; among equal distances the lowest index
// (stored inverted). `row` is its index in the whole data.
__device__ __forceinline__ unsigned long long far_key(float da, unsigned row) {
  return ((unsigned long long)__float_as_uint(da) << 32) | (unsigned long long)(NONE - row);
}

// The nearest anchor's statistics of one point: count, sse (e: its distance in fixed point), farthest.
__device__ __forceinline__ void tally_nearest(unsigned a, float da, long long e, unsigned row, unsigned *count,
                                              long long *sse, unsigned long long *far) {
  atomicAdd(count + a, 1u);
  atomicAdd(reinterpret_cast<unsigned long long *>(sse + a), (unsigned long long)e);
  atomicMax(far + a, far_key(da, row));
}

// A block's energy and changed count into partial[2·block], [2·block + 1] (every thread calls it).
__device__ __forceinline__ void block_partials(long long energy, long long changed, long long *partial) {
  __shared__ long long shE[RD_THREADS / 32], shC[RD_THREADS / 32];
  for (int o = 16; o > 0; o >>= 1) {
    energy += __shfl_xor_sync(0xffffffffu, energy, o);
    changed += __shfl_xor_sync(0xffffffffu, changed, o);
  }
  const int lane = threadIdx.x & 31, warp = threadIdx.x >> 5;
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

// The atomic reduce: one warp per point (lanes split the dimensions), each term of S added with an
// atomic into its anchor's row. Kept for A/B runs (CudaOptions.reduce 'atomic'); contended where
// many points share an anchor, which the sorted reduce below avoids.
template <typename T>
__device__ void reduce_points(const T *__restrict__ X, int n, int d,
                              const unsigned *__restrict__ J1, const float *__restrict__ D1,
                              const unsigned *__restrict__ J2, const float *__restrict__ D2,
                              unsigned *__restrict__ assign, const double *__restrict__ H,
                              double temperature, int accumulate, double sScale, double wScale, double eScale,
                              long long *S, long long *W, unsigned *count, long long *sse,
                              unsigned long long *far, long long *partial, int first) {
  const int lane = threadIdx.x & 31, warp = threadIdx.x >> 5;
  const long long warps = (long long)gridDim.x * (RD_THREADS / 32);
  long long energy = 0, changed = 0;  // lane 0's running sums (fixed point, integers)
  // Software pipelining: the next point's top-2 and previous assignment are loaded while the
  // current one is accumulated, so a warp is not stalled on each point's loads in turn.
  long long i = (long long)blockIdx.x * (RD_THREADS / 32) + warp;
  unsigned a = 0, b = 0, old = 0;
  float da = 0.f, db = 0.f;
  if (i < n) {
    a = J1[i]; b = J2[i]; da = D1[i]; db = D2[i]; old = assign[i];
  }
  for (; i < n; i += warps) {
    const long long nx = i + warps;
    unsigned na = 0, nb = 0, nold = 0;
    float nda = 0.f, ndb = 0.f;
    if (nx < n) {
      na = J1[nx]; nb = J2[nx]; nda = D1[nx]; ndb = D2[nx]; nold = assign[nx];
    }
    if (lane == 0) {
      const long long e = __double2ll_rn((double)da * eScale);  // this point's d1 in fixed point
      tally_nearest(a, da, e, (unsigned)(first + i), count, sse, far);
      if (old != a) assign[i] = a;
      energy += e;
      changed += old != a ? 1 : 0;
    }
    if (accumulate) {
      const Shares w = shares_of(a, b, da, db, H, temperature);
      if (lane == 0) {
        add_fixed(W + a, w.wa * wScale);
        if (w.wb > 0.0) add_fixed(W + b, w.wb * wScale);
      }
      const size_t base = (size_t)i * d;
      for (int k = lane; k < d; k += 32) {
        const double x = (double)load_f32(X, base + k) * sScale;
        add_fixed(S + (size_t)a * d + k, w.wa * x);
        if (w.wb > 0.0) add_fixed(S + (size_t)b * d + k, w.wb * x);
      }
    }
    a = na; b = nb; da = nda; db = ndb; old = nold;
  }
  block_partials(energy, changed, partial);
}

// ---- The sorted reduce (the default): S without contended atomics, in four steps per span.
// 1. reduce_tally, one thread per point: its assignment, energy and change; each of its
//    contributions (to a, and to b when wb > 0) takes a rank in its anchor's bucket (fill[a]++;
//    the value before is kept in rank[i].x, and b's in rank[i].y, NONE without b). A pass that does
//    not accumulate (no list) adds the nearest anchor's count, sse and farthest here instead.
// 2. reduce_offsets, one block: the buckets' offsets (exclusive scan of fill; off[m] = the total),
//    and fill back to zero for the next span.
// 3. reduce_scatter, one thread per point: each contribution to its slot, so the list is grouped
//    by anchor.
// 4. reduce_sums: each warp walks a chunk of RS_CHUNK consecutive contributions, summing the
//    terms of S, W, count, sse and the farthest point in registers and adding them to the anchor's
//    once per run (a handful of atomics per chunk instead of one per term, and none of the
//    hundreds of same-address atomics per anchor that made reduce_tally slow). Each term is the
//    integer reduce_points adds, so every sum is the same, bit for bit, whatever the order of the
//    list (the ranks race; the sums do not care).
struct Contribution {
  unsigned i, a;   // the point (row of this span), the anchor
  double w;        // its weight in S and W: wa, or wb
  float dist;      // the point's distance to its nearest anchor (for sse and the farthest point)
  unsigned near;   // 1: a is the point's nearest anchor (it counts there); 0: its runner-up
};

extern "C" __global__ void __launch_bounds__(RD_THREADS)
    reduce_tally(int n, const unsigned *__restrict__ J1, const float *__restrict__ D1, const unsigned *__restrict__ J2,
                 const float *__restrict__ D2, unsigned *__restrict__ assign, const double *__restrict__ H,
                 double temperature, int accumulate, double eScale, unsigned *count, long long *sse,
                 unsigned long long *far, unsigned *fill, uint2 *rank, long long *partial, int first) {
  long long energy = 0, changed = 0;
  const long long threads = (long long)gridDim.x * RD_THREADS;
  for (long long i = (long long)blockIdx.x * RD_THREADS + threadIdx.x; i < n; i += threads) {
    const unsigned a = J1[i], old = assign[i];
    const float da = D1[i];
    const long long e = __double2ll_rn((double)da * eScale);  // this point's d1 in fixed point
    if (old != a) assign[i] = a;
    energy += e;
    changed += old != a ? 1 : 0;
    if (accumulate) {
      const Shares w = shares_of(a, J2[i], da, D2[i], H, temperature);
      const unsigned rb = w.wb > 0.0 ? atomicAdd(fill + J2[i], 1u) : NONE;
      rank[i] = make_uint2(atomicAdd(fill + a, 1u), rb);
    } else {
      tally_nearest(a, da, e, (unsigned)(first + i), count, sse, far);
    }
  }
  block_partials(energy, changed, partial);
}

#define RO_THREADS 1024
extern "C" __global__ void __launch_bounds__(RO_THREADS) reduce_offsets(unsigned *fill, int m, unsigned *off) {
  __shared__ unsigned part[RO_THREADS];
  // Thread t owns the buckets [t·per, (t + 1)·per): its own sum, then a scan of the sums.
  const int per = (m + RO_THREADS - 1) / RO_THREADS, lo = min(m, threadIdx.x * per), hi = min(m, lo + per);
  unsigned s = 0;
  for (int j = lo; j < hi; j++) s += fill[j];
  part[threadIdx.x] = s;
  __syncthreads();
  for (int o = 1; o < RO_THREADS; o <<= 1) {  // Hillis-Steele inclusive scan
    const unsigned v = threadIdx.x >= o ? part[threadIdx.x - o] : 0u;
    __syncthreads();
    part[threadIdx.x] += v;
    __syncthreads();
  }
  unsigned at = part[threadIdx.x] - s;
  for (int j = lo; j < hi; j++) {
    off[j] = at;
    at += fill[j];
    fill[j] = 0;
  }
  if (threadIdx.x == RO_THREADS - 1) off[m] = part[RO_THREADS - 1];
}

extern "C" __global__ void __launch_bounds__(RD_THREADS)
    reduce_scatter(int n, const unsigned *__restrict__ J1, const float *__restrict__ D1, const unsigned *__restrict__ J2,
                   const float *__restrict__ D2, const double *__restrict__ H, double temperature,
                   const uint2 *__restrict__ rank, const unsigned *__restrict__ off, Contribution *list) {
  const long long threads = (long long)gridDim.x * RD_THREADS;
  for (long long i = (long long)blockIdx.x * RD_THREADS + threadIdx.x; i < n; i += threads) {
    const unsigned a = J1[i], b = J2[i];
    const Shares w = shares_of(a, b, D1[i], D2[i], H, temperature);  // as reduce_tally computed them
    const uint2 r = rank[i];
    list[off[a] + r.x] = {(unsigned)i, a, w.wa, D1[i], 1u};
    if (r.y != NONE) list[off[b] + r.y] = {(unsigned)i, b, w.wb, 0.f, 0u};
  }
}

// Contributions per warp chunk, and per batch whose rows are loaded before any is added (so a
// warp has RS_BATCH row loads in flight); each lane covers RS_DIMS dimensions of a 32·RS_DIMS slab:
// four consecutive ones, loaded as one vector, when the rows allow (VEC: d a multiple of 4, X
// aligned), else one in every 32.
#define RS_CHUNK 128
#define RS_BATCH 8
#define RS_DIMS 4

template <bool VEC>
__device__ __forceinline__ int dim_of(int k0, int lane, int j) {
  return VEC ? k0 + RS_DIMS * lane + j : k0 + lane + 32 * j;
}

// A lane's RS_DIMS elements of row `base` in the slab at k0 (zeros past d, or when !valid).
template <bool VEC>
__device__ __forceinline__ void load_dims(const float *__restrict__ X, size_t base, int d, int k0, int lane, bool valid,
                                          float (&v)[RS_DIMS]) {
  if (VEC) {
    const int k = dim_of<true>(k0, lane, 0);
    const float4 q = valid && k < d ? __ldg(reinterpret_cast<const float4 *>(X + base + k)) : make_float4(0.f, 0.f, 0.f, 0.f);
    v[0] = q.x; v[1] = q.y; v[2] = q.z; v[3] = q.w;
  } else {
#pragma unroll
    for (int j = 0; j < RS_DIMS; j++) {
      const int k = dim_of<false>(k0, lane, j);
      v[j] = valid && k < d ? __ldg(X + base + k) : 0.f;
    }
  }
}
template <bool VEC>
__device__ __forceinline__ void load_dims(const __half *__restrict__ X, size_t base, int d, int k0, int lane, bool valid,
                                          float (&v)[RS_DIMS]) {
  if (VEC) {
    const int k = dim_of<true>(k0, lane, 0);
    uint2 q = make_uint2(0u, 0u);
    if (valid && k < d) q = __ldg(reinterpret_cast<const uint2 *>(X + base + k));
    const float2 lo = __half22float2(*reinterpret_cast<const __half2 *>(&q.x));
    const float2 hi = __half22float2(*reinterpret_cast<const __half2 *>(&q.y));
    v[0] = lo.x; v[1] = lo.y; v[2] = hi.x; v[3] = hi.y;
  } else {
#pragma unroll
    for (int j = 0; j < RS_DIMS; j++) {
      const int k = dim_of<false>(k0, lane, j);
      v[j] = valid && k < d ? __half2float(X[base + k]) : 0.f;
    }
  }
}

// Adds a lane's sums of one anchor run to S (skipping zeros: nothing to add) and clears them.
template <bool VEC>
__device__ __forceinline__ void flush_run(long long *S, int d, int k0, int lane, unsigned a, long long (&acc)[RS_DIMS]) {
#pragma unroll
  for (int j = 0; j < RS_DIMS; j++) {
    const int k = dim_of<VEC>(k0, lane, j);
    if (k < d && acc[j] != 0) atomicAdd(reinterpret_cast<unsigned long long *>(S + (size_t)a * d + k), (unsigned long long)acc[j]);
    acc[j] = 0;
  }
}

// The per-anchor scalars of one run (the same on every lane; lane 0 adds them): W, and over the
// contributions of points whose nearest anchor it is, count, sse and the farthest point.
struct RunStats {
  long long w = 0, sse = 0;
  unsigned count = 0;
  unsigned long long far = 0;
};
__device__ __forceinline__ void flush_stats(RunStats &r, unsigned a, int lane, long long *W, unsigned *count,
                                            long long *sse, unsigned long long *far) {
  if (lane == 0) {
    atomicAdd(reinterpret_cast<unsigned long long *>(W + a), (unsigned long long)r.w);
    if (r.count > 0) {
      atomicAdd(count + a, r.count);
      atomicAdd(reinterpret_cast<unsigned long long *>(sse + a), (unsigned long long)r.sse);
      atomicMax(far + a, r.far);
    }
  }
  r = RunStats();
}

// The scales and per-anchor outputs of reduce_sums besides S.
struct SumsOut {
  double sScale, wScale, eScale;
  long long *S, *W;
  unsigned *count;
  long long *sse;
  unsigned long long *far;
  int first;  // the data row of the span's row 0 (farthest points are data rows)
};

template <bool VEC, typename T>
__device__ void reduce_sums(const T *__restrict__ X, int d, const Contribution *__restrict__ list, long long total,
                            const SumsOut &o) {
  const int lane = threadIdx.x & 31;
  const long long warps = (long long)gridDim.x * (RD_THREADS / 32);
  for (long long c0 = ((long long)blockIdx.x * (RD_THREADS / 32) + (threadIdx.x >> 5)) * RS_CHUNK; c0 < total;
       c0 += warps * RS_CHUNK) {
    const int len = (int)min((long long)RS_CHUNK, total - c0);
    for (int k0 = 0; k0 < d; k0 += 32 * RS_DIMS) {
      const bool scalars = k0 == 0;  // the run's scalars are summed in the first slab only
      long long acc[RS_DIMS] = {};
      RunStats st;
      unsigned cur = list[c0].a;
      for (int e0 = 0; e0 < len; e0 += 32) {
        unsigned mi = 0, ma = NONE, mnear = 0;  // this lane's contribution of the 32 (none past the chunk)
        double mw = 0.0;
        float mdist = 0.f;
        if (e0 + lane < len) {
          const Contribution &c = list[c0 + e0 + lane];
          mi = c.i; ma = c.a; mw = c.w; mdist = c.dist; mnear = c.near;
        }
        const int cnt = min(32, len - e0);
        for (int t = 0; t < cnt; t += RS_BATCH) {
          float v[RS_BATCH][RS_DIMS];
          unsigned idx[RS_BATCH];
#pragma unroll
          for (int u = 0; u < RS_BATCH; u++) {
            idx[u] = __shfl_sync(0xffffffffu, mi, t + u);
            load_dims<VEC>(X, (size_t)idx[u] * d, d, k0, lane, t + u < cnt, v[u]);
          }
#pragma unroll
          for (int u = 0; u < RS_BATCH; u++) {
            const unsigned a = __shfl_sync(0xffffffffu, ma, t + u);
            const double w = __shfl_sync(0xffffffffu, mw, t + u);
            const float dist = __shfl_sync(0xffffffffu, mdist, t + u);
            const unsigned near = __shfl_sync(0xffffffffu, mnear, t + u);
            if (t + u < cnt) {
              if (a != cur) {
                flush_run<VEC>(o.S, d, k0, lane, cur, acc);
                if (scalars) flush_stats(st, cur, lane, o.W, o.count, o.sse, o.far);
                cur = a;
              }
#pragma unroll
              for (int j = 0; j < RS_DIMS; j++) acc[j] += __double2ll_rn(w * ((double)v[u][j] * o.sScale));
              if (scalars) {
                st.w += __double2ll_rn(w * o.wScale);
                if (near) {
                  st.count++;
                  st.sse += __double2ll_rn((double)dist * o.eScale);
                  st.far = max(st.far, far_key(dist, (unsigned)o.first + idx[u]));
                }
              }
            }
          }
        }
      }
      flush_run<VEC>(o.S, d, k0, lane, cur, acc);
      if (scalars) flush_stats(st, cur, lane, o.W, o.count, o.sse, o.far);
    }
  }
}

template <typename T>
__device__ void reduce_sums(const T *__restrict__ X, int d, const Contribution *__restrict__ list,
                            const unsigned *__restrict__ off, int m, const SumsOut &o) {
  const bool vec = d % RS_DIMS == 0 && reinterpret_cast<uintptr_t>(X) % (RS_DIMS * sizeof(T)) == 0;
  if (vec) reduce_sums<true>(X, d, list, off[m], o);
  else reduce_sums<false>(X, d, list, off[m], o);
}

#define REDUCE_ARGS(T)                                                                                     \
  const T *X, int n, int d, const unsigned *J1, const float *D1, const unsigned *J2,                     \
      const float *D2, unsigned *assign, const double *H, double temperature, int accumulate,           \
      double sScale, double wScale, double eScale, long long *S, long long *W, unsigned *count,         \
      long long *sse, unsigned long long *far, long long *partial, int first
#define REDUCE_PASS \
  X, n, d, J1, D1, J2, D2, assign, H, temperature, accumulate, sScale, wScale, eScale, S, W, count, sse, far, partial, first

extern "C" __global__ void __launch_bounds__(RD_THREADS) reduce_points_f32(REDUCE_ARGS(float)) { reduce_points(REDUCE_PASS); }
extern "C" __global__ void __launch_bounds__(RD_THREADS) reduce_points_f16(REDUCE_ARGS(__half)) { reduce_points(REDUCE_PASS); }

#define REDUCE_SUMS_ARGS(T)                                                                                 \
  const T *X, int d, const Contribution *list, const unsigned *off, int m, double sScale, double wScale,   \
      double eScale, long long *S, long long *W, unsigned *count, long long *sse, unsigned long long *far, int first
#define REDUCE_SUMS_PASS X, d, list, off, m, SumsOut{sScale, wScale, eScale, S, W, count, sse, far, first}

extern "C" __global__ void __launch_bounds__(RD_THREADS, 2) reduce_sums_f32(REDUCE_SUMS_ARGS(float)) { reduce_sums(REDUCE_SUMS_PASS); }
extern "C" __global__ void __launch_bounds__(RD_THREADS, 2) reduce_sums_f16(REDUCE_SUMS_ARGS(__half)) { reduce_sums(REDUCE_SUMS_PASS); }

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
