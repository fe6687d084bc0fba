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
#include "reduce_point.cuh"
#include "reduce_runs.cuh"

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
// 4. reduce_sums (reduce_runs.cuh): each warp walks a chunk of RS_CHUNK consecutive
//    contributions, summing the terms of S, W, count, sse and the farthest point in registers and
//    adding them to the anchor's once per run (a handful of atomics per chunk instead of one per
//    term, and none of the hundreds of same-address atomics per anchor that made reduce_tally
//    slow). Each term is the integer reduce_points adds, so every sum is the same, bit for bit,
//    whatever the order of the list (the ranks race; the sums do not care).

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
      const unsigned b = J2[i];
      const Shares w = shares_of(a, b, da, D2[i], H, temperature);
      const unsigned rb = w.wb > 0.0 ? atomicAdd(fill + b, 1u) : NONE;
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
    const float da = D1[i];
    const Shares w = shares_of(a, b, da, D2[i], H, temperature);  // as reduce_tally computed them
    const uint2 r = rank[i];
    list[off[a] + r.x] = {(unsigned)i, a, w.wa, da, 1u};
    if (r.y != NONE) list[off[b] + r.y] = {(unsigned)i, b, w.wb, 0.f, 0u};
  }
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
