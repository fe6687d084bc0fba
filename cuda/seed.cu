// k-means++ seeding support (Engine.seedBegin / seedAdd / seedTry / seedPick).
// D[i] is a resident per-point f32 array. Each block owns a contiguous range of SEED_POINTS
// points and writes the sum of its D values to partial[block], so the host can locate the block
// that holds a sampling target (seedPick) from a small download. The sums are exact: each D
// value counts as the integer floor(D·seedScale), and the host chose seedScale so that the sum
// over all the data stays below 2^52 (src/backend/fixed.ts: seedScale); each block sum is an
// integer, exact as a double, and so is every sum of block sums, in any order and across shards.
#include "tile.cuh"

#define SEED_THREADS 256
#define SEED_POINTS 256  // points per block (contiguous), 8 warps × 32, four at a time

__device__ __forceinline__ long long block_sum(long long v, long long *shm) {
  const int lane = threadIdx.x & 31, warp = threadIdx.x >> 5;
  for (int o = 16; o > 0; o >>= 1) v += __shfl_xor_sync(0xffffffffu, v, o);
  if (lane == 0) shm[warp] = v;
  __syncthreads();
  long long t = 0;
  if (threadIdx.x == 0)
    for (int w = 0; w < SEED_THREADS / 32; w++) t += shm[w];
  __syncthreads();
  return t;  // valid on thread 0
}

// D as the integer the sums count (the top of the file).
__device__ __forceinline__ long long fixed_d(float v, double seedScale) { return __double2ll_rd((double)v * seedScale); }

// mode 0: D[i] = dist(x_i, c); mode 1: D[i] = min(D[i], dist(x_i, c)). partial[b] = Σ D over block b.
// Each warp takes four points at a time (independent loads in flight), lanes over dimensions.
template <typename T>
__device__ void seed_dist(const T *X, int n, int d, const float *c, float *D, int mode, double seedScale, double *partial) {
  __shared__ long long shm[SEED_THREADS / 32];
  const int lane = threadIdx.x & 31, warp = threadIdx.x >> 5;
  const long long first = (long long)blockIdx.x * SEED_POINTS;
  long long mine = 0;  // accumulated on lane 0
  for (int p = warp * 4; p < SEED_POINTS; p += (SEED_THREADS / 32) * 4) {
    const long long i0 = first + p;
    if (i0 >= n) break;
    float s[4] = {0.f, 0.f, 0.f, 0.f};
    for (int k = lane; k < d; k += 32) {
      const float ck = c[k];
#pragma unroll
      for (int q = 0; q < 4; q++)
        if (i0 + q < n) {
          const float t = load_f32(X, (size_t)(i0 + q) * d + k) - ck;
          s[q] = fmaf(t, t, s[q]);
        }
    }
#pragma unroll
    for (int q = 0; q < 4; q++)
      for (int o = 16; o > 0; o >>= 1) s[q] += __shfl_xor_sync(0xffffffffu, s[q], o);
    if (lane == 0) {
#pragma unroll
      for (int q = 0; q < 4; q++)
        if (i0 + q < n) {
          float v = s[q];
          if (mode == 1) v = fminf(v, D[i0 + q]);
          D[i0 + q] = v;
          mine += fixed_d(v, seedScale);
        }
    }
  }
  const long long t = block_sum(lane == 0 ? mine : 0, shm);
  if (threadIdx.x == 0) partial[blockIdx.x] = (double)t;
}

// For L candidates C (L×d): partial[b*L + l] = Σ over block b of min(D[i], dist(x_i, c_l)). D unchanged.
// Points outer, candidates inner (in groups of SEED_TRY_GROUP), so each row of X is read from
// memory once per group rather than once per candidate.
#define SEED_TRY_GROUP 32
template <typename T>
__device__ void seed_try(const T *X, int n, int d, const float *C, int L, const float *D, double seedScale, double *partial) {
  __shared__ long long shm[SEED_THREADS / 32];
  __shared__ long long mine[SEED_THREADS / 32][SEED_TRY_GROUP];  // per warp, per candidate (lane 0 writes)
  const int lane = threadIdx.x & 31, warp = threadIdx.x >> 5;
  const long long first = (long long)blockIdx.x * SEED_POINTS;
  for (int l0 = 0; l0 < L; l0 += SEED_TRY_GROUP) {
    const int g = min(SEED_TRY_GROUP, L - l0);
    if (lane == 0)
      for (int l = 0; l < g; l++) mine[warp][l] = 0;
    for (int p = warp; p < SEED_POINTS; p += SEED_THREADS / 32) {
      const long long i = first + p;
      if (i >= n) break;
      const float Di = D[i];
      for (int l = 0; l < g; l++) {
        const float v = fminf(Di, warp_dist(X, d, i, C + (size_t)(l0 + l) * d, lane));
        if (lane == 0) mine[warp][l] += fixed_d(v, seedScale);
      }
    }
    for (int l = 0; l < g; l++) {
      const long long t = block_sum(lane == 0 ? mine[warp][l] : 0, shm);
      if (threadIdx.x == 0) partial[(size_t)blockIdx.x * L + l0 + l] = (double)t;
    }
  }
}

// k-means++ in rounds (Engine.seedAddMany): D[i] = min(D[i], min over L candidates C (L×d) of
// dist(x_i, c_l)), through assign.cu's register-tiled loop (tile.cuh: 64 points a block, candidate
// tiles of 128). Each point's distances are sums in a fixed order, so D is the same on every run and
// on every shard. Blocks own SM_P points (a quarter of a seeding block): partial[b] = Σ D over them.
#define SM_PP 4
#define SM_P 64  // points per block: 16·SM_PP
static_assert(SM_P == 16 * SM_PP && SEED_POINTS % SM_P == 0, "seeding blocks hold whole seed_many blocks");
template <typename T>
__device__ void seed_many(const T *X, int n, int d, const float *C, int L, float *D, double seedScale, double *partial) {
  __shared__ long long shm[SEED_THREADS / 32];
  const int tx = threadIdx.x & 15, ty = threadIdx.x >> 4;
  const long long p0 = (long long)blockIdx.x * SM_P;
  float best[SM_PP];
#pragma unroll
  for (int p = 0; p < SM_PP; p++) best[p] = __int_as_float(0x7f800000);
  tile_loop<false, SM_PP>(X, C, n, d, L, p0, [](long long q) { return q; }, [&](int a0, float (&acc)[SM_PP][8]) {
#pragma unroll
    for (int a = 0; a < 8; a++) {
      if (a0 + tl_local(tx, a) < L) {
#pragma unroll
        for (int p = 0; p < SM_PP; p++) best[p] = fminf(best[p], acc[p][a]);
      }
#pragma unroll
      for (int p = 0; p < SM_PP; p++) acc[p][a] = 0.f;
    }
  });
  // The 16 threads (one half-warp) that share each point: their minimum, on every one of them.
#pragma unroll
  for (int p = 0; p < SM_PP; p++)
#pragma unroll
    for (int o = 8; o > 0; o >>= 1) best[p] = fminf(best[p], __shfl_xor_sync(0xffffffffu, best[p], o));
  long long mine = 0;
  if (tx == 0) {
#pragma unroll
    for (int p = 0; p < SM_PP; p++) {
      const long long q = p0 + tl_local(ty, p);
      if (q < n) {
        const float v = fminf(D[q], best[p]);
        D[q] = v;
        mine += fixed_d(v, seedScale);
      }
    }
  }
  const long long t = block_sum(mine, shm);
  if (threadIdx.x == 0) partial[blockIdx.x] = (double)t;
}

// k-means++ in rounds through the screen (seeding.ts addMany, on engines whose passes screen):
// D[i] = min(D[i], D1[i]), where D1 holds each point's exact distance to the nearest of the round's
// candidates (screen.ts: the direct pass's bits, which are seed_many's: the same tiled chain);
// partial[b] = Σ D over seeding block b, as seed_dist writes it. One point a thread.
extern "C" __global__ void __launch_bounds__(SEED_THREADS) seed_min(float *D, const float *D1, int n, double seedScale, double *partial) {
  __shared__ long long shm[SEED_THREADS / 32];
  static_assert(SEED_THREADS == SEED_POINTS, "one point a thread");
  const long long i = (long long)blockIdx.x * SEED_POINTS + threadIdx.x;
  long long mine = 0;
  if (i < n) {
    const float v = fminf(D[i], D1[i]);
    D[i] = v;
    mine = fixed_d(v, seedScale);
  }
  const long long t = block_sum(mine, shm);
  if (threadIdx.x == 0) partial[blockIdx.x] = (double)t;
}

#define SEED_DIST_ARGS(T) const T *X, int n, int d, const float *c, float *D, int mode, double seedScale, double *partial
#define SEED_TRY_ARGS(T) const T *X, int n, int d, const float *C, int L, const float *D, double seedScale, double *partial
extern "C" __global__ void __launch_bounds__(SEED_THREADS) seed_dist_f32(SEED_DIST_ARGS(float)) {
  seed_dist(X, n, d, c, D, mode, seedScale, partial);
}
extern "C" __global__ void __launch_bounds__(SEED_THREADS) seed_dist_f16(SEED_DIST_ARGS(__half)) {
  seed_dist(X, n, d, c, D, mode, seedScale, partial);
}
extern "C" __global__ void __launch_bounds__(SEED_THREADS) seed_try_f32(SEED_TRY_ARGS(float)) {
  seed_try(X, n, d, C, L, D, seedScale, partial);
}
extern "C" __global__ void __launch_bounds__(SEED_THREADS) seed_try_f16(SEED_TRY_ARGS(__half)) {
  seed_try(X, n, d, C, L, D, seedScale, partial);
}
#define SEED_MANY_ARGS(T) const T *X, int n, int d, const float *C, int L, float *D, double seedScale, double *partial
extern "C" __global__ void __launch_bounds__(TL_THREADS, 2) seed_many_f32(SEED_MANY_ARGS(float)) {
  seed_many(X, n, d, C, L, D, seedScale, partial);
}
extern "C" __global__ void __launch_bounds__(TL_THREADS, 2) seed_many_f16(SEED_MANY_ARGS(__half)) {
  seed_many(X, n, d, C, L, D, seedScale, partial);
}

// Init's sample (Engine.subset) taken from the parent engine's resident vectors: row r of dst is
// row list[r] of src, copied on the device (no host gather, no upload of the sample).
template <typename T>
__device__ void gather_rows(const T *src, const int *list, int count, int d, T *dst) {
  const long long total = (long long)count * d;
  for (long long e = (long long)blockIdx.x * blockDim.x + threadIdx.x; e < total; e += (long long)gridDim.x * blockDim.x) {
    const long long r = e / d;
    dst[e] = src[(long long)list[r] * d + (e - r * d)];
  }
}
extern "C" __global__ void gather_rows_f32(const float *src, const int *list, int count, int d, float *dst) {
  gather_rows(src, list, count, d, dst);
}
extern "C" __global__ void gather_rows_f16(const __half *src, const int *list, int count, int d, __half *dst) {
  gather_rows(src, list, count, d, dst);
}

// Largest |x| over the data as f32 bits, for the fixed-point scales (src/backend/fixed.ts). The
// maximum is taken on the bits: non-negative floats order like their bits, and a NaN (sign
// cleared) lies above +inf, so a NaN anywhere is the answer and the host refuses the data (fmaxf
// would skip it). *out must start at 0.
template <typename T>
__device__ void max_abs(const T *X, long long count, unsigned int *out) {
  unsigned m = 0;
  for (long long e = (long long)blockIdx.x * blockDim.x + threadIdx.x; e < count; e += (long long)gridDim.x * blockDim.x)
    m = max(m, __float_as_uint(fabsf(load_f32(X, e))));
  for (int o = 16; o > 0; o >>= 1) m = max(m, __shfl_xor_sync(0xffffffffu, m, o));
  if ((threadIdx.x & 31) == 0) atomicMax(out, m);
}
extern "C" __global__ void max_abs_f32(const float *X, long long count, unsigned int *out) { max_abs(X, count, out); }
extern "C" __global__ void max_abs_f16(const __half *X, long long count, unsigned int *out) { max_abs(X, count, out); }
