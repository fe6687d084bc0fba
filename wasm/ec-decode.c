// The 'ec' residual codec's decoder loops, compiled to WebAssembly SIMD (npm run build:wasm ->
// build/ec-decode.wasm), called by src/codecs/ec/wasm-decode.ts. Each gives the bits of the JS loop
// it replaces (where an operation differs from the JS one, the comment there says why the bits agree):
//
//  - ec_symbols: fast-decode.ts decodeSymbols, the rANS symbol loop of the 32 interleaved lanes
//    through the bucket and symbol tables, four lanes' lookups checked at once in SIMD;
//  - ec_add_axes: residuals.ts addTo on the axis layout, rows at a time:
//    out_k = f32(f64(out_k) + (step_c · q − sgn(q) · c_c)), the value in f64;
//  - ec_add_rotated: addTo on the rotated layout: acc = Σ_c ŷ_c · p_c in f64, coordinates in order,
//    each product rounded then added (WebAssembly has no fused multiply-add, so clang cannot
//    contract one), then out_j = f32(f64(out_j) + acc_j).
//
// Safety: JS lays out every buffer in this instance's memory and passes offsets; the loops read only
// what those buffers hold. The one read a damaged stream steers is the words at the stream's
// position: ec_symbols stops after the group of four symbols in which the position passes the W
// words, so it reads no word past index W + 3 (JS pads the words with zeros), and returns the position
// for JS to refuse the block in the JS decoder's words. Table indices come from the models, which
// the reader checked (each model's frequencies sum to 2^S, so the symbol search ends inside it).

#include <stdint.h>
#include <wasm_simd128.h>

#define EXPORT __attribute__((visibility("default")))

#define LANES 32
// The escape symbol's code in the symbol table (fast-decode.ts ESCAPE).
#define ESCAPE (1 << 30)

// For lane mask m (bit i: lane i reads a word), the bytes that move the words read, loaded as
// four u32 lanes in stream order, to the lanes that read them: lane i takes word popcount(m below i).
static uint8_t spread[16][16];
static int spreadMade;

static void makeSpread(void) {
  for (int m = 0; m < 16; m++)
    for (int i = 0, w = 0; i < 4; i++) {
      for (int b = 0; b < 4; b++) spread[m][4 * i + b] = (m >> i) & 1 ? (uint8_t)(4 * w + b) : 0x80;
      if ((m >> i) & 1) w++;
    }
  spreadMade = 1;
}

// The symbol entry of model k for slot: the bucket's first symbol, then on while the slot lies past
// the symbol's end.
static inline const int32_t *entry(const uint16_t *bucket, const int32_t *symTab, int base, int bucketAt, uint32_t slot) {
  const int32_t *e = symTab + ((base + bucket[bucketAt]) << 2);
  while (slot >= (uint32_t)e[2]) e += 4;
  return e;
}

// The symbol loop of ec_symbols; absolute (a constant, so each caller gets its own loop): the bucket
// table holds symbol indices into symTab, not indices from the model's first symbol.
static inline __attribute__((always_inline)) void symbols(
    const int absolute, int count, int dims, int S, int R, const uint16_t *bucket, const int32_t *symTab,
    const int32_t *kExt, const int32_t *ssExt, uint32_t *st, const uint16_t *words, int W,
    int32_t *escAt, int narrow, int16_t *out16, int32_t *out32, int32_t *res) {
  const uint32_t mask = (1u << S) - 1;
  const int SH = S - R;
  uint32_t x[LANES] __attribute__((aligned(16)));
  for (int l = 0; l < LANES; l++) x[l] = st[l];
  uint32_t p = 0;
  int esc = 0, t = 0, k = 0;
  const v128_t maskv = wasm_i32x4_splat((int32_t)mask), low16 = wasm_i32x4_splat(0xffff), one = wasm_i32x4_splat(1);
  const v128_t zero = wasm_i32x4_splat(0);
  const int count4 = count & ~3;
  while (t < count4) {
    // The shift counts made opaque inside the loop: clang 14 hoists a loop-invariant count's splat
    // out of the loop, and the wasm backend, no longer seeing a splat, shifts lane by lane.
    int sS = S, sSH = SH;
    __asm__("" : "+r"(sS));
    __asm__("" : "+r"(sSH));
    uint32_t *xp = x + (t & (LANES - 1));
    v128_t X = wasm_v128_load(xp);
    const v128_t slot = wasm_v128_and(X, maskv);
    const v128_t bi = wasm_i32x4_add(wasm_v128_load(kExt + k), wasm_u32x4_shr(slot, sSH));
    // Each lane's bucket's first symbol, its entry loaded whole and the four transposed to columns
    // (fc, q, check). A slot past that symbol's end (a bucket that several symbols share) or an
    // escape (whose check end is 0) sends the group to the scalar path: both are rare, so a group
    // takes no branch per lane and no lane extract beyond the four bucket indices.
    const int32_t *e0 = symTab + ((absolute ? 0 : ssExt[k]) + bucket[wasm_i32x4_extract_lane(bi, 0)]) * 4;
    const int32_t *e1 = symTab + ((absolute ? 0 : ssExt[k + 1]) + bucket[wasm_i32x4_extract_lane(bi, 1)]) * 4;
    const int32_t *e2 = symTab + ((absolute ? 0 : ssExt[k + 2]) + bucket[wasm_i32x4_extract_lane(bi, 2)]) * 4;
    const int32_t *e3 = symTab + ((absolute ? 0 : ssExt[k + 3]) + bucket[wasm_i32x4_extract_lane(bi, 3)]) * 4;
    v128_t E0 = wasm_v128_load(e0), E1 = wasm_v128_load(e1), E2 = wasm_v128_load(e2), E3 = wasm_v128_load(e3);
    v128_t a = wasm_i32x4_shuffle(E0, E1, 0, 4, 1, 5), b = wasm_i32x4_shuffle(E2, E3, 0, 4, 1, 5);
    v128_t fc = wasm_i32x4_shuffle(a, b, 0, 1, 4, 5), q = wasm_i32x4_shuffle(a, b, 2, 3, 6, 7);
    const v128_t check = wasm_i32x4_shuffle(wasm_i32x4_shuffle(E0, E1, 3, 7, 3, 7), wasm_i32x4_shuffle(E2, E3, 3, 7, 3, 7), 0, 1, 4, 5);
    // Slots and ends are below 2^16, so a signed compare serves (V8 lowers an unsigned one to three
    // instructions): the group is common when every lane's end lies past its slot.
    if (wasm_i32x4_bitmask(wasm_i32x4_gt(check, slot)) != 0xf) {
      e0 = entry(bucket, symTab, absolute ? 0 : ssExt[k], wasm_i32x4_extract_lane(bi, 0), wasm_i32x4_extract_lane(slot, 0));
      e1 = entry(bucket, symTab, absolute ? 0 : ssExt[k + 1], wasm_i32x4_extract_lane(bi, 1), wasm_i32x4_extract_lane(slot, 1));
      e2 = entry(bucket, symTab, absolute ? 0 : ssExt[k + 2], wasm_i32x4_extract_lane(bi, 2), wasm_i32x4_extract_lane(slot, 2));
      e3 = entry(bucket, symTab, absolute ? 0 : ssExt[k + 3], wasm_i32x4_extract_lane(bi, 3), wasm_i32x4_extract_lane(slot, 3));
      E0 = wasm_v128_load(e0), E1 = wasm_v128_load(e1), E2 = wasm_v128_load(e2), E3 = wasm_v128_load(e3);
      a = wasm_i32x4_shuffle(E0, E1, 0, 4, 1, 5), b = wasm_i32x4_shuffle(E2, E3, 0, 4, 1, 5);
      fc = wasm_i32x4_shuffle(a, b, 0, 1, 4, 5), q = wasm_i32x4_shuffle(a, b, 2, 3, 6, 7);
      if (e0[1] == ESCAPE) escAt[esc++] = t;
      if (e1[1] == ESCAPE) escAt[esc++] = t + 1;
      if (e2[1] == ESCAPE) escAt[esc++] = t + 2;
      if (e3[1] == ESCAPE) escAt[esc++] = t + 3;
    }
    // x <- f · (x >> S) + slot − c, f and c from fc = (f − 1) << 16 | c.
    const v128_t f = wasm_i32x4_add(wasm_u32x4_shr(fc, 16), one);
    X = wasm_i32x4_sub(wasm_i32x4_add(wasm_i32x4_mul(f, wasm_u32x4_shr(X, sS)), slot), wasm_v128_and(fc, low16));
    // x < 2^16 as x >> 16 == 0 (an unsigned compare costs V8 four instructions).
    const v128_t need = wasm_i32x4_eq(wasm_u32x4_shr(X, 16), zero);
    const int m = wasm_i32x4_bitmask(need);
    const v128_t w = wasm_i8x16_swizzle(wasm_u32x4_load16x4(words + p), wasm_v128_load(spread[m]));
    X = wasm_v128_bitselect(wasm_v128_or(wasm_i32x4_shl(X, 16), w), X, need);
    p += __builtin_popcount(m);
    wasm_v128_store(xp, X);
    // Each code's low 16 bits (masked, so the unsigned narrowing never saturates).
    if (narrow) {
      const v128_t q16 = wasm_v128_and(q, low16);
      wasm_v128_store64_lane(out16 + t, wasm_u16x8_narrow_i32x4(q16, q16), 0);
    }
    else wasm_v128_store(out32 + t, q);
    t += 4;
    k += 4;
    if (dims >= 4) k = k >= dims ? k - dims : k;
    else while (k >= dims) k -= dims;
    if (p > (uint32_t)W) break;
  }
  // The last count mod 4 symbols one at a time, as the JS loop takes every symbol.
  for (; t < count && p <= (uint32_t)W; t++) {
    const int l = t & (LANES - 1);
    uint32_t s = x[l];
    const uint32_t slot = s & mask;
    const int32_t *e = entry(bucket, symTab, absolute ? 0 : ssExt[k], kExt[k] + (int)(slot >> SH), slot);
    const uint32_t fc = (uint32_t)e[0];
    const int32_t q = e[1];
    s = ((fc >> 16) + 1) * (s >> S) + slot - (fc & 0xffff);
    const uint32_t need = s < 0x10000u;
    s = (s << (need << 4)) | (words[p] & (0u - need));
    p += need;
    x[l] = s;
    if (narrow) out16[t] = (int16_t)q;
    else out32[t] = q;
    if (q == ESCAPE) escAt[esc++] = t;
    if (++k == dims) k = 0;
  }
  for (int l = 0; l < LANES; l++) st[l] = x[l];
  res[0] = (int32_t)p;
  res[1] = esc;
}

// count symbols (row-major, dims a row) from the lanes' states st (updated) and the words;
// codes to out16 (narrow != 0: each code's low 16 bits, as JS stores them in an Int16Array) or out32; escapes
// noted by position in escAt. res[0] = the words read (> W: the stream ran out), res[1] = the escapes.
// kExt and ssExt hold, for i < dims + 4, (i mod dims) << R and symStart[i mod dims]: four
// consecutive symbols' models read as one vector, a row's end wrapped. absolute: the bucket table
// holds indices into symTab (the section has fewer than 2^16 symbols), so ssExt is not read.
// symTab's entries are [(f − 1) << 16 | c, q, c + f, check]: check is c + f, or 0 for the escape.
//
// Four symbols at a time (lanes 4j .. 4j + 3, consecutive symbols): the slots, state updates and
// renormalization in SIMD; the table lookups per lane. The words the four read are the next ones
// in the stream, in lane order: four loaded at the position, spread to the lanes that read.
EXPORT void ec_symbols(int count, int dims, int S, int R, int absolute, const uint16_t *bucket, const int32_t *symTab,
                       const int32_t *kExt, const int32_t *ssExt, uint32_t *st, const uint16_t *words, int W,
                       int32_t *escAt, int narrow, int16_t *out16, int32_t *out32, int32_t *res) {
  if (!spreadMade) makeSpread();
  if (absolute) symbols(1, count, dims, S, R, bucket, symTab, kExt, ssExt, st, words, W, escAt, narrow, out16, out32, res);
  else symbols(0, count, dims, S, R, bucket, symTab, kExt, ssExt, st, words, W, escAt, narrow, out16, out32, res);
}

// The value of code q on a coordinate of step s and offset c: s·q − c (q > 0), s·q + c (q < 0), 0
// (q = 0); negc is −c where q > 0, c where q < 0, 0 else, so s·q + negc is one rounding as in JS.
// negc flips c's sign bit where q's is clear (q, from an integer, is never −0), then keeps it where
// q ≠ 0: no branch, and four bitwise operations where two selects would take six.
static inline v128_t deq2(v128_t q, v128_t s, v128_t c) {
  const v128_t sign = wasm_f64x2_splat(-0.0);
  const v128_t negc = wasm_v128_and(wasm_v128_xor(c, wasm_v128_andnot(sign, q)), wasm_f64x2_ne(q, wasm_f64x2_splat(0.0)));
  return wasm_f64x2_add(wasm_f64x2_mul(s, q), negc);
}

// Four values added to o[0 .. 3]: codes at code index i, their steps and offsets from step, off;
// one load of the codes and of the row, one store, in f64 two at a time.
static inline void add4(float *o, int narrow, const int16_t *c16, const int32_t *c32, long i, const double *step, const double *off) {
  const v128_t q4 = narrow ? wasm_i32x4_extend_low_i16x8(wasm_v128_load64_zero(c16 + i)) : wasm_v128_load(c32 + i);
  const v128_t a4 = wasm_v128_load(o);
  const v128_t lo = wasm_f64x2_add(wasm_f64x2_promote_low_f32x4(a4),
                                   deq2(wasm_f64x2_convert_low_i32x4(q4), wasm_v128_load(step), wasm_v128_load(off)));
  const v128_t hi = wasm_f64x2_add(wasm_f64x2_promote_low_f32x4(wasm_i32x4_shuffle(a4, a4, 2, 3, 2, 3)),
                                   deq2(wasm_f64x2_convert_low_i32x4(wasm_i32x4_shuffle(q4, q4, 2, 3, 2, 3)), wasm_v128_load(step + 2), wasm_v128_load(off + 2)));
  wasm_v128_store(o, wasm_i32x4_shuffle(wasm_f32x4_demote_f64x2_zero(lo), wasm_f32x4_demote_f64x2_zero(hi), 0, 1, 4, 5));
}

static inline double value(int32_t q, double step, double off);
static inline int32_t code(int narrow, const int16_t *c16, const int32_t *c32, long i);

// Rows of codes (rows × D, int16 when narrow else int32) added to out (rows × d f32, the anchors),
// coordinate c to dimension dims[c], on the axis layout. step and off: D f64 each. When D = d the dimensions are 0 .. d − 1 (every one coded) and go
// four at a time. Else each coded dimension gets its value, four at a time where four coordinates
// are consecutive dimensions, and a dimension not coded is left as it is: addTo adds −0 there, and
// x + −0 = x for every finite x, −0 included.
EXPORT void ec_add_axes(int rows, int D, int d, int narrow, const void *codes, const int32_t *dims,
                        const double *step, const double *off, float *out) {
  const int16_t *c16 = (const int16_t *)codes;
  const int32_t *c32 = (const int32_t *)codes;
  for (int r = 0; r < rows; r++) {
    float *o = out + (long)r * d;
    const long at = (long)r * D;
    int c = 0;
    if (D == d) {
      for (; c + 4 <= D; c += 4) add4(o + c, narrow, c16, c32, at + c, step + c, off + c);
      for (; c + 2 <= D; c += 2) {
        v128_t q = narrow ? wasm_f64x2_convert_low_i32x4(wasm_i32x4_extend_low_i16x8(wasm_v128_load32_zero(c16 + at + c)))
                          : wasm_f64x2_convert_low_i32x4(wasm_v128_load64_zero(c32 + at + c));
        v128_t v = deq2(q, wasm_v128_load(step + c), wasm_v128_load(off + c));
        v128_t a = wasm_f64x2_promote_low_f32x4(wasm_v128_load64_zero(o + c));
        wasm_v128_store64_lane(o + c, wasm_f32x4_demote_f64x2_zero(wasm_f64x2_add(a, v)), 0);
      }
      for (; c < D; c++) o[c] = (float)((double)o[c] + value(code(narrow, c16, c32, at + c), step[c], off[c]));
      continue;
    }
    // Some dimensions not coded: each coded one's value added where it goes, the others left as
    // they are (what adding −0 leaves them). Four coordinates of consecutive dimensions go as one
    // vector, as in the loop above; the rest one at a time. The same operations per value.
    while (c < D) {
      const int k = dims[c];
      if (c + 4 <= D && dims[c + 1] == k + 1 && dims[c + 2] == k + 2 && dims[c + 3] == k + 3) {
        add4(o + k, narrow, c16, c32, at + c, step + c, off + c);
        c += 4;
        continue;
      }
      o[k] = (float)((double)o[k] + value(code(narrow, c16, c32, at + c), step[c], off[c]));
      c++;
    }
  }
}

// The value of code q of coordinate c (0 for q = 0), as addTo computes it: step · q ∓ off is
// step · q + (∓off), and for q = 0 step · 0 + 0 = +0 (steps are finite and ≥ 0), so the one sum
// with its addend chosen takes no branch on the sign.
static inline double value(int32_t q, double step, double off) {
  const double negc = q > 0 ? -off : q < 0 ? off : 0.0;
  return step * q + negc;
}

static inline int32_t code(int narrow, const int16_t *c16, const int32_t *c32, long i) {
  return narrow ? c16[i] : c32[i];
}

// out_j = f32(f64(out_j) + acc_j) for two dimensions at o.
static inline void addOut2(float *o, v128_t acc) {
  v128_t a = wasm_f64x2_promote_low_f32x4(wasm_v128_load64_zero(o));
  wasm_v128_store64_lane(o, wasm_f32x4_demote_f64x2_zero(wasm_f64x2_add(a, acc)), 0);
}

// One row: its nonzero coordinates gathered, then acc_j takes them in order, sixteen dimensions at a
// time held in eight registers while the coordinates stream past.
static void rotatedRow(int D, int d, int narrow, const int16_t *c16, const int32_t *c32, long at, const int32_t *dims,
                       const double *step, const double *off, const double *P, double *acc, double *ys, int32_t *ps, float *o) {
  int m = 0;
  for (int c = 0; c < D; c++) {
    const int32_t q = code(narrow, c16, c32, at + c);
    if (q == 0) continue;
    ys[m] = value(q, step[c], off[c]);
    ps[m++] = dims[c] * d;
  }
  int j = 0;
  for (; j + 16 <= d; j += 16) {
    v128_t a0 = wasm_f64x2_splat(0.0), a1 = a0, a2 = a0, a3 = a0, a4 = a0, a5 = a0, a6 = a0, a7 = a0;
    for (int g = 0; g < m; g++) {
      const v128_t y = wasm_f64x2_splat(ys[g]);
      const double *p = P + ps[g] + j;
      a0 = wasm_f64x2_add(a0, wasm_f64x2_mul(y, wasm_v128_load(p)));
      a1 = wasm_f64x2_add(a1, wasm_f64x2_mul(y, wasm_v128_load(p + 2)));
      a2 = wasm_f64x2_add(a2, wasm_f64x2_mul(y, wasm_v128_load(p + 4)));
      a3 = wasm_f64x2_add(a3, wasm_f64x2_mul(y, wasm_v128_load(p + 6)));
      a4 = wasm_f64x2_add(a4, wasm_f64x2_mul(y, wasm_v128_load(p + 8)));
      a5 = wasm_f64x2_add(a5, wasm_f64x2_mul(y, wasm_v128_load(p + 10)));
      a6 = wasm_f64x2_add(a6, wasm_f64x2_mul(y, wasm_v128_load(p + 12)));
      a7 = wasm_f64x2_add(a7, wasm_f64x2_mul(y, wasm_v128_load(p + 14)));
    }
    wasm_v128_store(acc + j, a0);
    wasm_v128_store(acc + j + 2, a1);
    wasm_v128_store(acc + j + 4, a2);
    wasm_v128_store(acc + j + 6, a3);
    wasm_v128_store(acc + j + 8, a4);
    wasm_v128_store(acc + j + 10, a5);
    wasm_v128_store(acc + j + 12, a6);
    wasm_v128_store(acc + j + 14, a7);
  }
  for (; j + 2 <= d; j += 2) {
    v128_t a0 = wasm_f64x2_splat(0.0);
    for (int g = 0; g < m; g++) a0 = wasm_f64x2_add(a0, wasm_f64x2_mul(wasm_f64x2_splat(ys[g]), wasm_v128_load(P + ps[g] + j)));
    wasm_v128_store(acc + j, a0);
  }
  for (; j < d; j++) {
    double a = 0.0;
    for (int g = 0; g < m; g++) a += ys[g] * P[ps[g] + j];
    acc[j] = a;
  }
  for (j = 0; j < d; j++) o[j] = (float)((double)o[j] + acc[j]);
}

// Rows of codes added to out on the rotated layout: P is D × d f64 (coordinate c's direction at
// P + c·d), acc d f64, ys 4·D f64 and ps D i32 of scratch.
//
// A row costs 2·(its nonzero coordinates) flops a dimension, in f64 two to an instruction; a row at a
// time, it also reads those coordinates' directions whole (8·d bytes each: past the cache for large
// d). So four rows that are mostly nonzero go together: each direction's four dimensions are loaded
// once for the four rows (eight accumulators: 4 rows × 4 dimensions), their coordinates in order
// with a row's zero codes taken as 0 — exact, as zero terms add nothing to an acc that is never −0.
EXPORT void ec_add_rotated(int rows, int D, int d, int narrow, const void *codes, const int32_t *dims,
                           const double *step, const double *off, const double *P, double *acc,
                           double *ys, int32_t *ps, float *out) {
  const int16_t *c16 = (const int16_t *)codes;
  const int32_t *c32 = (const int32_t *)codes;
  int r = 0;
  for (; r + 4 <= rows; r += 4) {
    float *o = out + (long)r * d;
    const long at = (long)r * D;
    // The coordinates nonzero in any of the four rows, and the rows' values of each.
    int m = 0, nonzero = 0;
    for (int c = 0; c < D; c++) {
      const int32_t q0 = code(narrow, c16, c32, at + c), q1 = code(narrow, c16, c32, at + D + c);
      const int32_t q2 = code(narrow, c16, c32, at + 2 * D + c), q3 = code(narrow, c16, c32, at + 3 * D + c);
      if ((q0 | q1 | q2 | q3) == 0) continue;
      nonzero += (q0 != 0) + (q1 != 0) + (q2 != 0) + (q3 != 0);
      // The four values two at a time without a branch on their signs (value()'s bits: deq2).
      const v128_t sc = wasm_f64x2_splat(step[c]), oc = wasm_f64x2_splat(off[c]);
      wasm_v128_store(ys + 4 * m, deq2(wasm_f64x2_make((double)q0, (double)q1), sc, oc));
      wasm_v128_store(ys + 4 * m + 2, deq2(wasm_f64x2_make((double)q2, (double)q3), sc, oc));
      ps[m++] = dims[c] * d;
    }
    // Together they take 22 instructions a coordinate for 16 values (a row alone: 25, for its
    // nonzero coordinates only), and read each direction once instead of four times.
    if (4 * nonzero < 3 * 4 * m) {
      for (int i = 0; i < 4; i++) rotatedRow(D, d, narrow, c16, c32, at + (long)i * D, dims, step, off, P, acc, ys, ps, o + (long)i * d);
      continue;
    }
    int j = 0;
    for (; j + 4 <= d; j += 4) {
      v128_t a0 = wasm_f64x2_splat(0.0), b0 = a0, a1 = a0, b1 = a0, a2 = a0, b2 = a0, a3 = a0, b3 = a0;
      for (int g = 0; g < m; g++) {
        const double *p = P + ps[g] + j, *y = ys + 4 * g;
        const v128_t p0 = wasm_v128_load(p), p1 = wasm_v128_load(p + 2);
        v128_t y0 = wasm_v128_load64_splat(y), y1 = wasm_v128_load64_splat(y + 1);
        a0 = wasm_f64x2_add(a0, wasm_f64x2_mul(y0, p0));
        b0 = wasm_f64x2_add(b0, wasm_f64x2_mul(y0, p1));
        a1 = wasm_f64x2_add(a1, wasm_f64x2_mul(y1, p0));
        b1 = wasm_f64x2_add(b1, wasm_f64x2_mul(y1, p1));
        y0 = wasm_v128_load64_splat(y + 2);
        y1 = wasm_v128_load64_splat(y + 3);
        a2 = wasm_f64x2_add(a2, wasm_f64x2_mul(y0, p0));
        b2 = wasm_f64x2_add(b2, wasm_f64x2_mul(y0, p1));
        a3 = wasm_f64x2_add(a3, wasm_f64x2_mul(y1, p0));
        b3 = wasm_f64x2_add(b3, wasm_f64x2_mul(y1, p1));
      }
      addOut2(o + j, a0);
      addOut2(o + j + 2, b0);
      addOut2(o + d + j, a1);
      addOut2(o + d + j + 2, b1);
      addOut2(o + 2 * d + j, a2);
      addOut2(o + 2 * d + j + 2, b2);
      addOut2(o + 3 * d + j, a3);
      addOut2(o + 3 * d + j + 2, b3);
    }
    for (; j < d; j++)
      for (int i = 0; i < 4; i++) {
        double a = 0.0;
        for (int g = 0; g < m; g++) a += ys[4 * g + i] * P[ps[g] + j];
        o[(long)i * d + j] = (float)((double)o[(long)i * d + j] + a);
      }
  }
  for (; r < rows; r++) rotatedRow(D, d, narrow, c16, c32, (long)r * D, dims, step, off, P, acc, ys, ps, out + (long)r * d);
}
