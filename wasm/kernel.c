// vlc's CPU distance kernel, compiled to WebAssembly SIMD (npm run build:wasm -> build/kernel.wasm).
//
// Every distance is a direct difference, dist = sum_k (x_k - c_k)^2, never the norm expansion
// (docs/algorithm.md: on data far from the origin the expansion cancels catastrophically).
//
// Determinism: one (point, anchor) distance is ALWAYS computed by the same sequence of f32
// operations, whichever blocked or remainder path handles it: four lane accumulators over
// k = 0, 4, 8, ... (d rounded down to a multiple of 4), summed as (l0 + l1) + (l2 + l3), plus a
// scalar tail for the last d % 4 dimensions added last. So results do not depend on how points
// are split into tiles or threads. clang does not reassociate float math without -ffast-math.
//
// Speed: register blocking, 4 points x 2 anchors per inner loop (8 accumulators + 4 point
// vectors + 2 anchor vectors + 1 temporary = 15 of the 16 SIMD registers V8 has on x86-64), and
// anchors visited in blocks small enough to stay in L1 while a tile of points streams past them.

#include <wasm_simd128.h>

#define EXPORT __attribute__((visibility("default")))
#define INF __builtin_inff()

// Anchors per cache block: ANCHOR_BLOCK_BYTES / (4 d), at least 2.
#ifndef ANCHOR_BLOCK_BYTES
#define ANCHOR_BLOCK_BYTES 16384
#endif

static inline float hsum(v128_t a) {
  return (wasm_f32x4_extract_lane(a, 0) + wasm_f32x4_extract_lane(a, 1)) +
         (wasm_f32x4_extract_lane(a, 2) + wasm_f32x4_extract_lane(a, 3));
}

static inline float tail(const float *x, const float *c, int d4, int d) {
  float t = 0.0f;
  for (int k = d4; k < d; k++) {
    float e = x[k] - c[k];
    t += e * e;
  }
  return t;
}

#define SQ_ACC(acc, a, b)              \
  do {                                 \
    v128_t e_ = wasm_f32x4_sub(a, b);  \
    acc = wasm_f32x4_add(acc, wasm_f32x4_mul(e_, e_)); \
  } while (0)

// One point against one anchor.
static inline float dist1x1(const float *x, const float *c, int d) {
  int d4 = d & ~3;
  v128_t a = wasm_f32x4_splat(0.0f);
  for (int k = 0; k < d4; k += 4) SQ_ACC(a, wasm_v128_load(x + k), wasm_v128_load(c + k));
  return hsum(a) + tail(x, c, d4, d);
}

// One point against two anchors.
static inline void dist1x2(const float *x, const float *c0, const float *c1, int d, float *o) {
  int d4 = d & ~3;
  v128_t a0 = wasm_f32x4_splat(0.0f), a1 = a0;
  for (int k = 0; k < d4; k += 4) {
    v128_t xv = wasm_v128_load(x + k);
    SQ_ACC(a0, xv, wasm_v128_load(c0 + k));
    SQ_ACC(a1, xv, wasm_v128_load(c1 + k));
  }
  o[0] = hsum(a0) + tail(x, c0, d4, d);
  o[1] = hsum(a1) + tail(x, c1, d4, d);
}

// Four points (rows x, x+d, x+2d, x+3d) against one anchor.
static inline void dist4x1(const float *x, const float *c0, int d, float *o) {
  int d4 = d & ~3;
  const float *x0 = x, *x1 = x + d, *x2 = x + 2 * d, *x3 = x + 3 * d;
  v128_t a0 = wasm_f32x4_splat(0.0f), a1 = a0, a2 = a0, a3 = a0;
  for (int k = 0; k < d4; k += 4) {
    v128_t cv = wasm_v128_load(c0 + k);
    SQ_ACC(a0, wasm_v128_load(x0 + k), cv);
    SQ_ACC(a1, wasm_v128_load(x1 + k), cv);
    SQ_ACC(a2, wasm_v128_load(x2 + k), cv);
    SQ_ACC(a3, wasm_v128_load(x3 + k), cv);
  }
  o[0] = hsum(a0) + tail(x0, c0, d4, d);
  o[1] = hsum(a1) + tail(x1, c0, d4, d);
  o[2] = hsum(a2) + tail(x2, c0, d4, d);
  o[3] = hsum(a3) + tail(x3, c0, d4, d);
}

// Four points against two anchors: the hot loop. o[p * 2 + a].
static inline void dist4x2(const float *x, const float *c0, const float *c1, int d, float *o) {
  int d4 = d & ~3;
  const float *x0 = x, *x1 = x + d, *x2 = x + 2 * d, *x3 = x + 3 * d;
  v128_t z = wasm_f32x4_splat(0.0f);
  v128_t a00 = z, a01 = z, a10 = z, a11 = z, a20 = z, a21 = z, a30 = z, a31 = z;
  for (int k = 0; k < d4; k += 4) {
    v128_t u = wasm_v128_load(c0 + k), v = wasm_v128_load(c1 + k);
    v128_t p = wasm_v128_load(x0 + k);
    SQ_ACC(a00, p, u);
    SQ_ACC(a01, p, v);
    p = wasm_v128_load(x1 + k);
    SQ_ACC(a10, p, u);
    SQ_ACC(a11, p, v);
    p = wasm_v128_load(x2 + k);
    SQ_ACC(a20, p, u);
    SQ_ACC(a21, p, v);
    p = wasm_v128_load(x3 + k);
    SQ_ACC(a30, p, u);
    SQ_ACC(a31, p, v);
  }
  o[0] = hsum(a00) + tail(x0, c0, d4, d);
  o[1] = hsum(a01) + tail(x0, c1, d4, d);
  o[2] = hsum(a10) + tail(x1, c0, d4, d);
  o[3] = hsum(a11) + tail(x1, c1, d4, d);
  o[4] = hsum(a20) + tail(x2, c0, d4, d);
  o[5] = hsum(a21) + tail(x2, c1, d4, d);
  o[6] = hsum(a30) + tail(x3, c0, d4, d);
  o[7] = hsum(a31) + tail(x3, c1, d4, d);
}

// Keep the two smallest distances seen so far and the third smallest value, scanning anchors in
// ascending j: strict '<' keeps the lowest j among equal minima (types.ts: "ties: lowest j"). The
// third distance only feeds the CPU engine's bounds (worker.ts): it is a value, no index.
static inline void push2(int p, int j, float v, int *j1, float *d1, int *j2, float *d2, float *d3) {
  if (v < d1[p]) {
    d3[p] = d2[p];
    j2[p] = j1[p];
    d2[p] = d1[p];
    j1[p] = j;
    d1[p] = v;
  } else if (v < d2[p]) {
    d3[p] = d2[p];
    j2[p] = j;
    d2[p] = v;
  } else if (v < d3[p]) {
    d3[p] = v;
  }
}

static inline int anchor_block(int d) {
  int b = ANCHOR_BLOCK_BYTES / (4 * d);
  b &= ~1;
  return b < 2 ? 2 : b;
}

// For np points (row-major np x d) and m anchors (m x d): the nearest anchor j1/d1 and the
// runner-up j2/d2 of every point (j2 = -1, d2 = +inf when m = 1), and the third distance d3.
EXPORT void top2(const float *X, int np, const float *C, int m, int d, int *j1, float *d1,
                 int *j2, float *d2, float *d3) {
  for (int p = 0; p < np; p++) {
    j1[p] = -1;
    j2[p] = -1;
    d1[p] = INF;
    d2[p] = INF;
    d3[p] = INF;
  }
  int ab = anchor_block(d);
  float o[8];
  for (int jb = 0; jb < m; jb += ab) {
    int je = jb + ab < m ? jb + ab : m;
    int p = 0;
    for (; p + 4 <= np; p += 4) {
      const float *x = X + (long)p * d;
      int j = jb;
      for (; j + 2 <= je; j += 2) {
        dist4x2(x, C + (long)j * d, C + (long)(j + 1) * d, d, o);
        for (int q = 0; q < 4; q++) {
          push2(p + q, j, o[2 * q], j1, d1, j2, d2, d3);
          push2(p + q, j + 1, o[2 * q + 1], j1, d1, j2, d2, d3);
        }
      }
      if (j < je) {
        dist4x1(x, C + (long)j * d, d, o);
        for (int q = 0; q < 4; q++) push2(p + q, j, o[q], j1, d1, j2, d2, d3);
      }
    }
    for (; p < np; p++) {
      const float *x = X + (long)p * d;
      int j = jb;
      for (; j + 2 <= je; j += 2) {
        dist1x2(x, C + (long)j * d, C + (long)(j + 1) * d, d, o);
        push2(p, j, o[0], j1, d1, j2, d2, d3);
        push2(p, j + 1, o[1], j1, d1, j2, d2, d3);
      }
      if (j < je) push2(p, j, dist1x1(x, C + (long)j * d, d), j1, d1, j2, d2, d3);
    }
  }
}

// All np x m distances, out[p * m + j] (seeding candidates, brute-force k-NN).
EXPORT void dists(const float *X, int np, const float *C, int m, int d, float *out) {
  int ab = anchor_block(d);
  float o[8];
  for (int jb = 0; jb < m; jb += ab) {
    int je = jb + ab < m ? jb + ab : m;
    int p = 0;
    for (; p + 4 <= np; p += 4) {
      const float *x = X + (long)p * d;
      int j = jb;
      for (; j + 2 <= je; j += 2) {
        dist4x2(x, C + (long)j * d, C + (long)(j + 1) * d, d, o);
        for (int q = 0; q < 4; q++) {
          out[(long)(p + q) * m + j] = o[2 * q];
          out[(long)(p + q) * m + j + 1] = o[2 * q + 1];
        }
      }
      if (j < je) {
        dist4x1(x, C + (long)j * d, d, o);
        for (int q = 0; q < 4; q++) out[(long)(p + q) * m + j] = o[q];
      }
    }
    for (; p < np; p++) {
      const float *x = X + (long)p * d;
      int j = jb;
      for (; j + 2 <= je; j += 2) {
        dist1x2(x, C + (long)j * d, C + (long)(j + 1) * d, d, o);
        out[(long)p * m + j] = o[0];
        out[(long)p * m + j + 1] = o[1];
      }
      if (j < je) out[(long)p * m + j] = dist1x1(x, C + (long)j * d, d);
    }
  }
}

// Distance of each point to one given anchor: out[p] = dist(x_p, c_idx[p]). The same op sequence
// as every other path, so the value equals what top2 would report (exact-bounds skipping relies
// on it).
EXPORT void dist_idx(const float *X, int np, const float *C, int d, const int *idx, float *out) {
  for (int p = 0; p < np; p++) out[p] = dist1x1(X + (long)p * d, C + (long)idx[p] * d, d);
}

// ---- The pq search's per-query steps (src/search/pq-kernel.ts). Each one performs the
// operations, in the order, of the JS loop it replaces (search/pq-adc.ts, backend/cpu/knn-core.ts),
// so ids and distances are bit for bit the same.

// The w nearest of m distances, ascending (ties: the lower index; -1 past the values below +inf):
// a value joins only when below the current w-th, after any equal ones. Four values are tested at
// once; most are above the w-th and skipped. best (w) is scratch.
EXPORT void select_nearest(const float *row, int m, int w, int *order, float *best) {
  for (int i = 0; i < w; i++) {
    best[i] = INF;
    order[i] = -1;
  }
  float worst = INF;
  int j = 0;
  for (; j < m; j++) {
    if (j % 4 == 0 && j + 4 <= m) {
      // Skip four at a time while none is below the w-th (NaN never is).
      while (j + 4 <= m && !wasm_v128_any_true(wasm_f32x4_lt(wasm_v128_load(row + j), wasm_f32x4_splat(worst)))) j += 4;
      if (j >= m) break;
    }
    float v = row[j];
    if (!(v < worst)) continue;
    int pos = w - 1;
    while (pos > 0 && best[pos - 1] > v) {
      best[pos] = best[pos - 1];
      order[pos] = order[pos - 1];
      pos--;
    }
    best[pos] = v;
    order[pos] = j;
    worst = best[w - 1];
  }
}

// Product-quantization lookup tables of one query: out[t K + c] = <q_t, codebook_t[c]>, the
// query's subspace t against each of its K centroids, summed in f64 over the subspace's dimensions
// in ascending order, from 0, and rounded to f32 once. cbT holds each subspace's K x w block
// transposed (w rows of K) and widened to f64 (exact), so that centroids sit side by side in
// vectors; bounds (M + 1) are the subspaces' first dimensions. K is a multiple of 8 (16 or 256).
EXPORT void pq_tables(const float *q, const double *cbT, const int *bounds, int M, int K, float *out) {
  for (int t = 0; t < M; t++) {
    int lo = bounds[t], w = bounds[t + 1] - lo;
    const double *block = cbT + (long)K * lo;
    float *o = out + (long)t * K;
    for (int c = 0; c < K; c += 8) {
      v128_t a0 = wasm_f64x2_splat(0.0), a1 = a0, a2 = a0, a3 = a0;
      const double *b = block + c;
      for (int k = 0; k < w; k++, b += K) {
        v128_t qk = wasm_f64x2_splat((double)q[lo + k]);
        a0 = wasm_f64x2_add(a0, wasm_f64x2_mul(qk, wasm_v128_load(b)));
        a1 = wasm_f64x2_add(a1, wasm_f64x2_mul(qk, wasm_v128_load(b + 2)));
        a2 = wasm_f64x2_add(a2, wasm_f64x2_mul(qk, wasm_v128_load(b + 4)));
        a3 = wasm_f64x2_add(a3, wasm_f64x2_mul(qk, wasm_v128_load(b + 6)));
      }
      wasm_v128_store(o + c, wasm_i64x2_shuffle(wasm_f32x4_demote_f64x2_zero(a0), wasm_f32x4_demote_f64x2_zero(a1), 0, 2));
      wasm_v128_store(o + c + 4, wasm_i64x2_shuffle(wasm_f32x4_demote_f64x2_zero(a2), wasm_f32x4_demote_f64x2_zero(a3), 0, 2));
    }
  }
}

static inline double adc(const unsigned char *code, const float *table, int M, int K) {
  double dot = 0;
  for (int t = 0; t < M; t++) dot += (double)table[t * K + code[t]];
  return dot;
}

// The asymmetric distances of one list's n vectors (codes n x M, extras n, in list order) to the
// query whose tables are given: out[p] = (anchor_dist + extra[p]) - (2 scale) dot_p, dot_p the
// f64 sum of its M table entries in subspace order. Four vectors at a time, each its own sum.
EXPORT void pq_scan(const unsigned char *codes, const float *extra, int n, int M, int K, const float *table,
                    float anchor_dist, float scale, double *out) {
  double base = (double)anchor_dist, two_scale = 2.0 * (double)scale;
  int p = 0;
  for (; p + 4 <= n; p += 4) {
    const unsigned char *c0 = codes + (long)p * M, *c1 = c0 + M, *c2 = c1 + M, *c3 = c2 + M;
    double s0 = 0, s1 = 0, s2 = 0, s3 = 0;
    for (int t = 0; t < M; t++) {
      const float *tt = table + t * K;
      s0 += (double)tt[c0[t]];
      s1 += (double)tt[c1[t]];
      s2 += (double)tt[c2[t]];
      s3 += (double)tt[c3[t]];
    }
    out[p] = base + (double)extra[p] - two_scale * s0;
    out[p + 1] = base + (double)extra[p + 1] - two_scale * s1;
    out[p + 2] = base + (double)extra[p + 2] - two_scale * s2;
    out[p + 3] = base + (double)extra[p + 3] - two_scale * s3;
  }
  for (; p < n; p++) out[p] = base + (double)extra[p] - two_scale * adc(codes + (long)p * M, table, M, K);
}
