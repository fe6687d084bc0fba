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

template <typename T>
__device__ void reduce_points(const T *__restrict__ X, int n, int d,
                              const unsigned *__restrict__ J1, const float *__restrict__ D1,
                              const unsigned *__restrict__ J2, const float *__restrict__ D2,
                              unsigned *__restrict__ assign, const double *__restrict__ H,
                              double temperature, int accumulate, double sScale, double wScale, double eScale,
                              long long *S, long long *W, unsigned *count, long long *sse,
                              unsigned long long *far, long long *partial, int first) {
  __shared__ long long shE[RD_THREADS / 32], shC[RD_THREADS / 32];
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
    double w2 = 0.0;
    if (temperature > 0.0 && b != NONE) w2 = 1.0 / (1.0 + exp(((double)db - (double)da) / temperature));
    if (w2 < MIN_SHARE) w2 = 0.0;
    const double w1 = 1.0 - w2;
    if (lane == 0) {
      const long long e = __double2ll_rn((double)da * eScale);  // this point's d1 in fixed point
      atomicAdd(count + a, 1u);
      atomicAdd(reinterpret_cast<unsigned long long *>(sse + a), (unsigned long long)e);
      // Largest distance wins; among equal distances the lowest i (stored inverted).
      atomicMax(far + a, ((unsigned long long)__float_as_uint(da) << 32) | (unsigned long long)(NONE - (unsigned)(first + i)));
      changed += old != a ? 1 : 0;
      assign[i] = a;
      energy += e;
    }
    if (accumulate) {
      const double wa = w1 * robust(da, H[a]);
      const double wb = w2 > 0.0 ? w2 * robust(db, H[b]) : 0.0;
      if (lane == 0) {
        add_fixed(W + a, wa * wScale);
        if (wb > 0.0) add_fixed(W + b, wb * wScale);
      }
      const size_t base = (size_t)i * d;
      for (int k = lane; k < d; k += 32) {
        const double x = (double)load_f32(X, base + k) * sScale;
        add_fixed(S + (size_t)a * d + k, wa * x);
        if (wb > 0.0) add_fixed(S + (size_t)b * d + k, wb * x);
      }
    }
    a = na; b = nb; da = nda; db = ndb; old = nold;
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
      long long *sse, unsigned long long *far, long long *partial, int first
#define REDUCE_PASS \
  X, n, d, J1, D1, J2, D2, assign, H, temperature, accumulate, sScale, wScale, eScale, S, W, count, sse, far, partial, first

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
