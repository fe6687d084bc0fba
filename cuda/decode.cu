// decode: a .vlc's vectors reconstructed on the device (`vlc search --device cuda`,
// src/backend/cuda/decode.ts), bit for bit as the host's io/vlc/reconstruct.ts. Rows r0 .. r0+rows−1
// of the file go to out (rows × d f32), one thread per element, grid-stride.
// Arithmetic: the host adds in JS, out = fround(anchor + s · v), where s · v is exact in a double
// (f32 × int8, or f32 × f32) and the sum is rounded to a double, then to f32; the same double
// expression here gives the same f32 (__fmul_rn then __fadd_rn would not, for many elements); nvcc
// may contract it to a double fma, which is harmless because the product is exact.
#include "rows.cuh"

#define DEC_THREADS 256

// Scalar residuals (codecs/scalar.ts, int8 and int4 alike: one code per byte in memory), or none
// (codes null): x = anchor + scales[k] · code.
extern "C" __global__ void __launch_bounds__(DEC_THREADS) decode_scalar(const float *anchors, const unsigned *assign, const signed char *codes,
                                                                    const float *scales, int r0, int rows, int d, float *out) {
  for_each_row_element(r0, rows, d, [&](long long e, long long i, int k) {
    const float a = anchors[(long long)assign[i] * d + k];
    out[e] = codes ? (float)((double)a + (double)scales[k] * (double)codes[i * d + k]) : a;
  });
}

// Product-quantized residuals (codecs/pq.ts): M subspaces [bounds[t], bounds[t+1]), subspace t's K
// entries of its width from codebooks + K · bounds[t]; x = anchor + s_j · entry (s_j: the anchor's scale).
extern "C" __global__ void __launch_bounds__(DEC_THREADS) decode_pq(const float *anchors, const unsigned *assign, const unsigned char *codes,
                                                                const int *bounds, const float *codebooks, const float *scales, int M, int K,
                                                                int r0, int rows, int d, float *out) {
  for_each_row_element(r0, rows, d, [&](long long e, long long i, int k) {
    const unsigned j = assign[i];
    int t = 0;
    while (bounds[t + 1] <= k) t++;  // M is small (a few dozen at most): a scan beats a search
    const int lo = bounds[t], w = bounds[t + 1] - lo;
    const float c = codebooks[(long long)K * lo + (long long)codes[i * M + t] * w + (k - lo)];
    out[e] = (float)((double)anchors[(long long)j * d + k] + (double)scales[j] * (double)c);
  });
}

// Product-quantized residuals on k projected directions (codecs/pq.ts, --pq-dims): P is k × d (the
// directions as decoders use them, f32), and x = anchor + s_j · Σ_r ĉ_r P[r][:], ĉ the codes' k
// coordinates. The sum runs over r in order in f64 without contraction (__dmul_rn / __dadd_rn), each
// product of two f32 values exact, as the host's addProjected sums it: the same bits.
extern "C" __global__ void __launch_bounds__(DEC_THREADS) decode_pq_projected(const float *anchors, const unsigned *assign,
                                                                            const unsigned char *codes, const int *bounds,
                                                                            const float *codebooks, const float *projection,
                                                                            const float *scales, int M, int K, int r0, int rows,
                                                                            int d, float *out) {
  for_each_row_element(r0, rows, d, [&](long long e, long long i, int k) {
    const unsigned j = assign[i];
    double acc = 0.0;
    for (int t = 0; t < M; t++) {
      const int lo = bounds[t], w = bounds[t + 1] - lo;
      const float *entry = codebooks + (long long)K * lo + (long long)codes[i * M + t] * w;
      for (int r = 0; r < w; r++) acc = __dadd_rn(acc, __dmul_rn((double)entry[r], (double)projection[(long long)(lo + r) * d + k]));
    }
    out[e] = __double2float_rn(__dadd_rn((double)anchors[(long long)j * d + k], __dmul_rn((double)scales[j], acc)));
  });
}

// Bit-allocated residuals (codecs/bits.ts): dimension k's code is bits[k] bits at bit start[k] of
// the row's R bytes, least significant bit first; x = anchor + steps[k] · (code − o_k), o_k =
// 2^(bits[k] − 1) − 1; a dimension of 0 bits is its anchor. (code − o_k) is a small integer, so
// the product is exact in a double, as for the scalar codes.
extern "C" __global__ void __launch_bounds__(DEC_THREADS) decode_bits(const float *anchors, const unsigned *assign, const unsigned char *codes,
                                                                  const unsigned char *bits, const int *start, const float *steps, int R,
                                                                  int r0, int rows, int d, float *out) {
  for_each_row_element(r0, rows, d, [&](long long e, long long i, int k) {
    const float a = anchors[(long long)assign[i] * d + k];
    const int b = bits[k];
    if (b == 0) {
      out[e] = a;
      return;
    }
    const long long o = i * R + (start[k] >> 3);
    const int sh = start[k] & 7;
    const unsigned w = (unsigned)codes[o] | (sh + b > 8 ? (unsigned)codes[o + 1] << 8 : 0u);
    const int q = (int)((w >> sh) & ((1u << b) - 1u)) - ((1 << (b - 1)) - 1);
    out[e] = (float)((double)a + (double)steps[k] * (double)q);
  });
}
