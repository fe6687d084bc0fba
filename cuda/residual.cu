// residual: the scalar residual codec (src/codecs/scalar-rows.ts) on the GPU, bit for bit: the same
// double operations, in the same order, as the host's row loops. Every operation is written as an
// explicit round-to-nearest intrinsic so that the compiler cannot fuse a multiply and an add.
//   residual_ranges: one thread per (block of rows b, dimension k): over the block's rows in order,
//                    the largest |r| and Σ r², r = x − c (f64), at [b·d + k].
//   residual_rows:   one thread per row: its codes q = clamp(round(r / s), −L, L) (0 where s = 0;
//                    round as JavaScript's Math.round: ties toward +∞), and its squared error
//                    against the decoder's f32(c + s·q), summed over k in order (f64).
//   residual_row_sums: one thread per listed row (compress's quality sample): Σ (x − x̂)², Σ x²,
//                    Σ x̂², Σ x·x̂ over k in order (f64), x̂ = f32(c + s·q) from the codes just
//                    made: the row sums src/quality/reconstruction.ts makes on the host.
//   residual_bits_rows: one thread per row: the bits codec's codes (src/codecs/bits-rows.ts), q =
//                    clamp(round(r / s) + o, 0, 2^b − 1), packed b bits a dimension from bit 0 of the
//                    row, and the row's squared error — the uncoded dimensions (r̂ = 0) first, then
//                    the coded ones against f32(c + s·(q − o)), each in k order (f64).
//   residual_block_errs: one thread per block of rows: its rows' errors summed in row order (f64),
//                    as the host encoders sum a block; the host adds the blocks in order
//                    (src/backend/cuda/residual.ts), so only a number a block comes down.
#include "common.cuh"

#define RS_THREADS 256

template <typename T>
__device__ void residual_ranges(const T *X, int n, int d, const float *C, const unsigned *assign, int blockRows,
                                double *maxAbs, double *sumSq) {
  const long long t = (long long)blockIdx.x * blockDim.x + threadIdx.x;
  const long long blocks = ((long long)n + blockRows - 1) / blockRows;
  if (t >= blocks * d) return;
  const long long b = t / d;
  const int k = (int)(t % d);
  const long long i1 = min((long long)n, (b + 1) * blockRows);
  double mx = 0.0, sq = 0.0;
  for (long long i = b * blockRows; i < i1; i++) {
    const double r = __dsub_rn((double)load_f32(X, (size_t)i * d + k), (double)C[(size_t)assign[i] * d + k]);
    const double ar = fabs(r);
    if (ar > mx) mx = ar;
    sq = __dadd_rn(sq, __dmul_rn(r, r));
  }
  maxAbs[t] = mx;
  sumSq[t] = sq;
}

// JavaScript's Math.round: the nearest integer, ties toward +∞ (v − floor(v) is exact here).
__device__ __forceinline__ double js_round(double v) {
  const double f = floor(v);
  return __dsub_rn(v, f) >= 0.5 ? f + 1.0 : f;
}

template <typename T>
__device__ void residual_rows(const T *X, int n, int d, const float *C, const unsigned *assign, const float *scales,
                              int L, signed char *codes, double *rowErr) {
  const long long i = (long long)blockIdx.x * blockDim.x + threadIdx.x;
  if (i >= n) return;
  const size_t a = (size_t)assign[i] * d, row = (size_t)i * d;
  double err = 0.0;
  for (int k = 0; k < d; k++) {
    const double s = (double)scales[k];
    const double xv = (double)load_f32(X, row + k), av = (double)C[a + k];
    double q = 0.0;
    if (s != 0.0) {
      q = js_round(__ddiv_rn(__dsub_rn(xv, av), s));
      q = q > L ? (double)L : q < -L ? (double)-L : q;
    }
    codes[row + k] = (signed char)(int)q;
    const double e = __dsub_rn(xv, (double)__double2float_rn(__dadd_rn(av, __dmul_rn(s, q))));
    err = __dadd_rn(err, __dmul_rn(e, e));
  }
  rowErr[i] = err;
}

#define RANGES_ARGS(T) const T *X, int n, int d, const float *C, const unsigned *assign, int blockRows, double *maxAbs, double *sumSq
#define ROWS_ARGS(T) const T *X, int n, int d, const float *C, const unsigned *assign, const float *scales, int L, signed char *codes, double *rowErr
extern "C" __global__ void __launch_bounds__(RS_THREADS) residual_ranges_f32(RANGES_ARGS(float)) {
  residual_ranges(X, n, d, C, assign, blockRows, maxAbs, sumSq);
}
extern "C" __global__ void __launch_bounds__(RS_THREADS) residual_ranges_f16(RANGES_ARGS(__half)) {
  residual_ranges(X, n, d, C, assign, blockRows, maxAbs, sumSq);
}
extern "C" __global__ void __launch_bounds__(RS_THREADS) residual_rows_f32(ROWS_ARGS(float)) {
  residual_rows(X, n, d, C, assign, scales, L, codes, rowErr);
}
extern "C" __global__ void __launch_bounds__(RS_THREADS) residual_rows_f16(ROWS_ARGS(__half)) {
  residual_rows(X, n, d, C, assign, scales, L, codes, rowErr);
}

template <typename T>
__device__ void residual_bits_rows(const T *X, int n, int d, const float *C, const unsigned *assign, const unsigned char *bits,
                                   const float *steps, int R, unsigned char *codes, double *rowErr) {
  const long long i = (long long)blockIdx.x * blockDim.x + threadIdx.x;
  if (i >= n) return;
  const size_t a = (size_t)assign[i] * d, row = (size_t)i * d;
  unsigned char *out = codes + (size_t)i * R;
  double err = 0.0;
  for (int k = 0; k < d; k++) {
    if (bits[k] != 0) continue;
    const double e = __dsub_rn((double)load_f32(X, row + k), (double)C[a + k]);
    err = __dadd_rn(err, __dmul_rn(e, e));
  }
  unsigned acc = 0;  // bits not yet written, from bit `filled` of the row's byte `at`
  int filled = 0, at = 0;
  for (int k = 0; k < d; k++) {
    const int b = bits[k];
    if (b == 0) continue;
    const double s = (double)steps[k], xv = (double)load_f32(X, row + k), av = (double)C[a + k];
    const double off = (double)((1 << (b - 1)) - 1), top = (double)((1 << b) - 1);
    double q = js_round(__ddiv_rn(__dsub_rn(xv, av), s)) + off;
    q = q < 0.0 ? 0.0 : q > top ? top : q;
    const double e = __dsub_rn(xv, (double)__double2float_rn(__dadd_rn(av, __dmul_rn(s, q - off))));
    err = __dadd_rn(err, __dmul_rn(e, e));
    acc |= (unsigned)q << filled;
    filled += b;
    while (filled >= 8) {
      out[at++] = (unsigned char)(acc & 0xffu);
      acc >>= 8;
      filled -= 8;
    }
  }
  if (filled > 0) out[at++] = (unsigned char)acc;
  for (; at < R; at++) out[at] = 0;
  rowErr[i] = err;
}

extern "C" __global__ void __launch_bounds__(RS_THREADS) residual_block_errs(const double *rowErr, int n, int blockRows, double *blockErr) {
  const long long b = (long long)blockIdx.x * blockDim.x + threadIdx.x;
  const long long i0 = b * blockRows;
  if (i0 >= n) return;
  const long long i1 = i0 + blockRows < n ? i0 + blockRows : n;
  double e = 0.0;
  for (long long i = i0; i < i1; i++) e = __dadd_rn(e, rowErr[i]);
  blockErr[b] = e;
}

#define BITS_ROWS_ARGS(T) const T *X, int n, int d, const float *C, const unsigned *assign, const unsigned char *bits, const float *steps, int R, unsigned char *codes, double *rowErr
extern "C" __global__ void __launch_bounds__(RS_THREADS) residual_bits_rows_f32(BITS_ROWS_ARGS(float)) {
  residual_bits_rows(X, n, d, C, assign, bits, steps, R, codes, rowErr);
}
extern "C" __global__ void __launch_bounds__(RS_THREADS) residual_bits_rows_f16(BITS_ROWS_ARGS(__half)) {
  residual_bits_rows(X, n, d, C, assign, bits, steps, R, codes, rowErr);
}

template <typename T>
__device__ void residual_row_sums(const T *X, int d, const float *C, const unsigned *assign, const float *scales,
                                  const signed char *codes, const unsigned *rows, int count, double *sums) {
  const int t = blockIdx.x * blockDim.x + threadIdx.x;
  if (t >= count) return;
  const size_t i = rows[t], a = (size_t)assign[i] * d, row = i * d;
  double e2 = 0.0, xx = 0.0, rr = 0.0, xr = 0.0;
  for (int k = 0; k < d; k++) {
    const double xv = (double)load_f32(X, row + k);
    const double rv = (double)__double2float_rn(__dadd_rn((double)C[a + k], __dmul_rn((double)scales[k], (double)codes[row + k])));
    const double e = __dsub_rn(xv, rv);
    e2 = __dadd_rn(e2, __dmul_rn(e, e));
    xx = __dadd_rn(xx, __dmul_rn(xv, xv));
    rr = __dadd_rn(rr, __dmul_rn(rv, rv));
    xr = __dadd_rn(xr, __dmul_rn(xv, rv));
  }
  sums[4 * (size_t)t] = e2;
  sums[4 * (size_t)t + 1] = xx;
  sums[4 * (size_t)t + 2] = rr;
  sums[4 * (size_t)t + 3] = xr;
}

#define SUMS_ARGS(T) const T *X, int d, const float *C, const unsigned *assign, const float *scales, const signed char *codes, const unsigned *rows, int count, double *sums
extern "C" __global__ void __launch_bounds__(RS_THREADS) residual_row_sums_f32(SUMS_ARGS(float)) {
  residual_row_sums(X, d, C, assign, scales, codes, rows, count, sums);
}
extern "C" __global__ void __launch_bounds__(RS_THREADS) residual_row_sums_f16(SUMS_ARGS(__half)) {
  residual_row_sums(X, d, C, assign, scales, codes, rows, count, sums);
}

// crc_slices: the CRC32C (src/io/vlc/crc32c.ts: reflected polynomial 0x82F63B78, initial and final
// value ~0) of each `slice`-byte piece of the int8 codes (the last one shorter), one thread per
// piece, byte by byte through a table in shared memory. The host joins the pieces' CRCs into the
// section's checksum (crc32cJoin), so the codes need not be read again on the host.
#define CRC_THREADS 256
extern "C" __global__ void __launch_bounds__(CRC_THREADS) crc_slices(const unsigned char *bytes, long long total, int slice, unsigned *out) {
  __shared__ unsigned table[256];
  for (int i = threadIdx.x; i < 256; i += blockDim.x) {
    unsigned c = (unsigned)i;
    for (int k = 0; k < 8; k++) c = (c & 1u) ? (c >> 1) ^ 0x82F63B78u : c >> 1;
    table[i] = c;
  }
  __syncthreads();
  const long long s = (long long)blockIdx.x * blockDim.x + threadIdx.x;
  const long long p0 = s * slice;
  if (p0 >= total) return;
  const long long p1 = min(total, p0 + slice);
  unsigned c = 0xFFFFFFFFu;
  long long p = p0;
  // 16 bytes a load: a slice starts at a multiple of `slice` (a multiple of 16) in an aligned buffer.
  for (; p + 16 <= p1; p += 16) {
    const uint4 w = *reinterpret_cast<const uint4 *>(bytes + p);
    const unsigned words[4] = {w.x, w.y, w.z, w.w};
#pragma unroll
    for (int j = 0; j < 4; j++)
#pragma unroll
      for (int b = 0; b < 4; b++) c = table[(c ^ (words[j] >> (8 * b))) & 0xFFu] ^ (c >> 8);
  }
  for (; p < p1; p++) c = table[(c ^ bytes[p]) & 0xFFu] ^ (c >> 8);
  out[s] = ~c;
}
