// An experiment, not part of the package: how fast the rotated layout's rows could be made in
// WebAssembly SIMD128 if its arithmetic were f32 instead of the format's f64 (which keeps the CPU,
// JS and GPU decoders bit for bit equal). Both kernels take every coordinate of rows that are all
// nonzero (the dense case), four rows at a time so each direction's values are loaded once for the
// four: out_r,j += sum_c y_r,c * P_c,j, each product rounded then added, coordinates in order.
// Built and timed by bench/ec-rotated-f32.mjs.
#include <wasm_simd128.h>

#define EXPORT __attribute__((visibility("default")))

// Four rows' sums over the coordinates for W dimensions at j (two vectors a row: eight
// accumulators), each direction's values loaded once for the four rows. SPLAT loads one y as a
// vector, ADD and MUL are the lane type's, H the lanes a vector (2: f64, 4: f32).
#define FOUR_ROWS(T, SPLAT, ADD, MUL, H)                                                  \
  v128_t acc[8];                                                                        \
  for (int i = 0; i < 8; i++) acc[i] = wasm_i32x4_splat(0);                             \
  for (int c = 0; c < D; c++) {                                                         \
    const T *p = P + (long)c * d + j;                                                   \
    const v128_t p0 = wasm_v128_load(p), p1 = wasm_v128_load(p + H);                    \
    for (int i = 0; i < 4; i++) {                                                       \
      const v128_t yi = SPLAT(y + (long)i * D + c);                                     \
      acc[2 * i] = ADD(acc[2 * i], MUL(yi, p0));                                        \
      acc[2 * i + 1] = ADD(acc[2 * i + 1], MUL(yi, p1));                                \
    }                                                                                   \
  }

// f64: four rows x four dimensions a pass, as wasm/ec-decode.c's ec_add_rotated does for rows that
// are mostly nonzero; out_j = f32(f64(out_j) + acc_j).
EXPORT void rot_f64(int rows, int D, int d, const double *ys, const double *P, float *out) {
  for (int r = 0; r + 4 <= rows; r += 4) {
    const double *y = ys + (long)r * D;
    float *o = out + (long)r * d;
    for (int j = 0; j + 4 <= d; j += 4) {
      FOUR_ROWS(double, wasm_v128_load64_splat, wasm_f64x2_add, wasm_f64x2_mul, 2)
      for (int i = 0; i < 8; i++) {
        float *q = o + (long)(i >> 1) * d + j + 2 * (i & 1);
        const v128_t a = wasm_f64x2_promote_low_f32x4(wasm_v128_load64_zero(q));
        wasm_v128_store64_lane(q, wasm_f32x4_demote_f64x2_zero(wasm_f64x2_add(a, acc[i])), 0);
      }
    }
  }
}

// f32: four rows x eight dimensions a pass: twice the values an instruction.
EXPORT void rot_f32(int rows, int D, int d, const float *ys, const float *P, float *out) {
  for (int r = 0; r + 4 <= rows; r += 4) {
    const float *y = ys + (long)r * D;
    float *o = out + (long)r * d;
    for (int j = 0; j + 8 <= d; j += 8) {
      FOUR_ROWS(float, wasm_v128_load32_splat, wasm_f32x4_add, wasm_f32x4_mul, 4)
      for (int i = 0; i < 8; i++) {
        float *q = o + (long)(i >> 1) * d + j + 4 * (i & 1);
        wasm_v128_store(q, wasm_f32x4_add(wasm_v128_load(q), acc[i]));
      }
    }
  }
}
