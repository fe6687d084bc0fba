// An experiment, not part of the package: how fast the rotated layout's rows could be made in
// WebAssembly SIMD128 if its arithmetic were f32 instead of the format's f64 (which keeps the CPU,
// JS and GPU decoders bit for bit equal). Both kernels take every coordinate of rows that are all
// nonzero (the dense case), four rows at a time so each direction's values are loaded once for the
// four: out_r,j += sum_c y_r,c * P_c,j, each product rounded then added, coordinates in order.
// Built and timed by bench/ec-rotated-f32.mjs.
#include <wasm_simd128.h>

#define EXPORT __attribute__((visibility("default")))

// f64: four rows x four dimensions (eight f64x2 accumulators) a pass over the coordinates, as
// wasm/ec-decode.c's ec_add_rotated does for rows that are mostly nonzero.
EXPORT void rot_f64(int rows, int D, int d, const double *ys, const double *P, float *out) {
  for (int r = 0; r + 4 <= rows; r += 4) {
    const double *y = ys + (long)r * D;
    float *o = out + (long)r * d;
    for (int j = 0; j + 4 <= d; j += 4) {
      v128_t a0 = wasm_f64x2_splat(0.0), b0 = a0, a1 = a0, b1 = a0, a2 = a0, b2 = a0, a3 = a0, b3 = a0;
      for (int c = 0; c < D; c++) {
        const double *p = P + (long)c * d + j;
        const v128_t p0 = wasm_v128_load(p), p1 = wasm_v128_load(p + 2);
        v128_t y0 = wasm_v128_load64_splat(y + c), y1 = wasm_v128_load64_splat(y + D + c);
        a0 = wasm_f64x2_add(a0, wasm_f64x2_mul(y0, p0));
        b0 = wasm_f64x2_add(b0, wasm_f64x2_mul(y0, p1));
        a1 = wasm_f64x2_add(a1, wasm_f64x2_mul(y1, p0));
        b1 = wasm_f64x2_add(b1, wasm_f64x2_mul(y1, p1));
        y0 = wasm_v128_load64_splat(y + 2 * D + c);
        y1 = wasm_v128_load64_splat(y + 3 * D + c);
        a2 = wasm_f64x2_add(a2, wasm_f64x2_mul(y0, p0));
        b2 = wasm_f64x2_add(b2, wasm_f64x2_mul(y0, p1));
        a3 = wasm_f64x2_add(a3, wasm_f64x2_mul(y1, p0));
        b3 = wasm_f64x2_add(b3, wasm_f64x2_mul(y1, p1));
      }
      v128_t acc[8] = {a0, b0, a1, b1, a2, b2, a3, b3};
      for (int i = 0; i < 4; i++)
        for (int h = 0; h < 2; h++) {
          float *q = o + (long)i * d + j + 2 * h;
          const v128_t a = wasm_f64x2_promote_low_f32x4(wasm_v128_load64_zero(q));
          wasm_v128_store64_lane(q, wasm_f32x4_demote_f64x2_zero(wasm_f64x2_add(a, acc[2 * i + h])), 0);
        }
    }
  }
}

// f32: four rows x eight dimensions (eight f32x4 accumulators): twice the values an instruction.
EXPORT void rot_f32(int rows, int D, int d, const float *ys, const float *P, float *out) {
  for (int r = 0; r + 4 <= rows; r += 4) {
    const float *y = ys + (long)r * D;
    float *o = out + (long)r * d;
    for (int j = 0; j + 8 <= d; j += 8) {
      v128_t a0 = wasm_f32x4_splat(0.0f), b0 = a0, a1 = a0, b1 = a0, a2 = a0, b2 = a0, a3 = a0, b3 = a0;
      for (int c = 0; c < D; c++) {
        const float *p = P + (long)c * d + j;
        const v128_t p0 = wasm_v128_load(p), p1 = wasm_v128_load(p + 4);
        v128_t y0 = wasm_v128_load32_splat(y + c), y1 = wasm_v128_load32_splat(y + D + c);
        a0 = wasm_f32x4_add(a0, wasm_f32x4_mul(y0, p0));
        b0 = wasm_f32x4_add(b0, wasm_f32x4_mul(y0, p1));
        a1 = wasm_f32x4_add(a1, wasm_f32x4_mul(y1, p0));
        b1 = wasm_f32x4_add(b1, wasm_f32x4_mul(y1, p1));
        y0 = wasm_v128_load32_splat(y + 2 * D + c);
        y1 = wasm_v128_load32_splat(y + 3 * D + c);
        a2 = wasm_f32x4_add(a2, wasm_f32x4_mul(y0, p0));
        b2 = wasm_f32x4_add(b2, wasm_f32x4_mul(y0, p1));
        a3 = wasm_f32x4_add(a3, wasm_f32x4_mul(y1, p0));
        b3 = wasm_f32x4_add(b3, wasm_f32x4_mul(y1, p1));
      }
      v128_t acc[8] = {a0, b0, a1, b1, a2, b2, a3, b3};
      for (int i = 0; i < 4; i++)
        for (int h = 0; h < 2; h++) {
          float *q = o + (long)i * d + j + 4 * h;
          wasm_v128_store(q, wasm_f32x4_add(wasm_v128_load(q), acc[2 * i + h]));
        }
    }
  }
}
