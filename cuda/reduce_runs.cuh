// reduce_runs.cuh: the last step of reduce.cu's sorted reduce (reduce_sums): warps walk the
// contributions grouped by anchor, gather their rows and add each anchor's run once.
#pragma once
#include "reduce_point.cuh"

struct Contribution {
  unsigned i, a;   // the point (row of this span), the anchor
  double w;        // its weight in S and W: wa, or wb
  float dist;      // the point's distance to its nearest anchor (for sse and the farthest point)
  unsigned near;   // 1: a is the point's nearest anchor (it counts there); 0: its runner-up
};

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
template <bool VEC, typename T>
__device__ __forceinline__ void load_dims(const T *__restrict__ X, size_t base, int d, int k0, int lane, bool valid,
                                          float (&v)[RS_DIMS]) {
  if (VEC) {
    const int k = dim_of<true>(k0, lane, 0);
    const float4 q = valid && k < d ? load4(X + base, k) : make_float4(0.f, 0.f, 0.f, 0.f);
    v[0] = q.x; v[1] = q.y; v[2] = q.z; v[3] = q.w;
  } else {
#pragma unroll
    for (int j = 0; j < RS_DIMS; j++) {
      const int k = dim_of<false>(k0, lane, j);
      v[j] = valid && k < d ? load_f32(X, base + k) : 0.f;
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
