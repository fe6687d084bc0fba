// Fixed-point sums: why several engines (tiles, GPUs, MPI ranks, CPU shards) give the same bytes
// as one. Every quantity an iteration sums over points and that a later decision reads (S, W,
// sse, the energy, the k-means++ sums) is summed as integers: each term is rounded to an integer
// once, v·scale, and integer addition is exact and associative. Integers of two shards add up
// to the integer of the whole, so a sum does not depend on the order of the points, the threads,
// the tiles or the split of the rows. The scales are powers of two chosen from figures of the
// WHOLE data (n, the largest |x|), so every shard uses the same ones, and so that no sum can
// overflow its integer type: `bits` is 61 for the GPU's int64 atomics, 52 where the integers live
// in doubles (the CPU's sums, every k-means++ sum), which are exact below 2^53.

/** Bits of the GPU's int64 accumulators that sums may use (2^61: room for each term's rounding). */
export const INT64_BITS = 61;
/** Bits of the sums kept in doubles: exact integers below 2^53, with room for rounding. */
export const DOUBLE_BITS = 52;

/** The largest power of two s such that bound·s <= 2^bits (1 when bound is 0). */
export function scaleFor(bound: number, bits: number): number {
  if (!(bound > 0)) return 1;
  let s = 2 ** Math.floor(bits - Math.log2(bound));
  while (bound * s > 2 ** bits) s /= 2; // log2's rounding must never let a sum overflow
  return s;
}

/**
 * An upper bound on any squared distance the engines compute between a point and an anchor (or
 * a k-means++ candidate) when every coordinate of both lies within [−A, A]: 4·d·A², doubled to
 * cover the f32 rounding of the distance.
 */
export function distanceBound(d: number, A: number): number {
  return 8 * d * A * A;
}

/** The scales of one pass's sums: S (weighted vectors), W (weights), E (squared distances: sse, energy). */
export interface PassScales {
  s: number;
  w: number;
  e: number;
}

/**
 * n and maxAbs are the whole data's; anchorAbs the largest |c| of the anchors the pass starts
 * from (anchors move toward means of points, so they stay within max(maxAbs, anchorAbs)).
 * Per point the weights sum to at most 1, so |Σ w·x| <= n·maxAbs and Σ w <= n.
 */
export function passScales(n: number, d: number, maxAbs: number, anchorAbs: number, bits: number): PassScales {
  return {
    s: scaleFor(n * maxAbs, bits),
    w: scaleFor(n, bits),
    e: scaleFor(n * distanceBound(d, Math.max(maxAbs, anchorAbs)), bits),
  };
}

/** Scale of the k-means++ sums (in doubles), for candidates within [−candAbs, candAbs]. */
export function seedScale(n: number, d: number, maxAbs: number, candAbs: number): number {
  return scaleFor(n * distanceBound(d, Math.max(maxAbs, candAbs)), DOUBLE_BITS);
}

/** A k-means++ distance as the integer the seeding sums count: floor(D·scale) (D >= 0). */
export function fixedSeed(D: number, scale: number): number {
  return Math.floor(D * scale);
}

/** Largest |v| of an array; NaN when it holds a NaN, Infinity when it holds an infinity. */
export function maxAbsOf(v: ArrayLike<number>): number {
  let m = 0;
  for (let k = 0; k < v.length; k++) m = Math.max(m, Math.abs(v[k]));
  return m;
}

// --- int64 arrays without BigInt arithmetic (two 32-bit halves, little-endian) ---

const TWO32 = 2 ** 32;

function halves(a: BigInt64Array): { lo: Uint32Array; hi: Int32Array } {
  return { lo: new Uint32Array(a.buffer, a.byteOffset, a.length * 2), hi: new Int32Array(a.buffer, a.byteOffset, a.length * 2) };
}

/** dst += src element-wise, as int64 (wrapping, so exact whenever the true sum fits). */
export function addInt64(dst: BigInt64Array, src: BigInt64Array): void {
  if (dst.length !== src.length) throw new Error(`addInt64: ${dst.length} vs ${src.length} elements`);
  const a = halves(dst), b = halves(src);
  for (let k = 0; k < dst.length; k++) {
    const lo = a.lo[2 * k] + b.lo[2 * k];
    a.lo[2 * k] = lo; // modulo 2^32
    a.hi[2 * k + 1] = a.hi[2 * k + 1] + b.hi[2 * k + 1] + (lo >= TWO32 ? 1 : 0);
  }
}

/** dst = max(dst, src) element-wise, as signed int64. */
export function maxInt64(dst: BigInt64Array, src: BigInt64Array): void {
  if (dst.length !== src.length) throw new Error(`maxInt64: ${dst.length} vs ${src.length} elements`);
  const a = halves(dst), b = halves(src);
  for (let k = 0; k < dst.length; k++) {
    const ha = a.hi[2 * k + 1], hb = b.hi[2 * k + 1];
    if (hb > ha || (hb === ha && b.lo[2 * k] > a.lo[2 * k])) {
      a.hi[2 * k + 1] = hb;
      a.lo[2 * k] = b.lo[2 * k];
    }
  }
}

/** Integers held in doubles (|v| < 2^53) into int64: exact. */
export function int64FromDoubles(src: ArrayLike<number>, dst: BigInt64Array = new BigInt64Array(src.length)): BigInt64Array {
  const h = halves(dst);
  for (let k = 0; k < src.length; k++) {
    const v = src[k];
    const hi = Math.floor(v / TWO32);
    h.hi[2 * k + 1] = hi;
    h.lo[2 * k] = v - hi * TWO32;
  }
  return dst;
}

/** int64 values as doubles: exact below 2^53, rounded (deterministically) above. */
export function doublesFromInt64(src: BigInt64Array, dst: Float64Array = new Float64Array(src.length)): Float64Array {
  const h = halves(src);
  for (let k = 0; k < src.length; k++) dst[k] = h.hi[2 * k + 1] * TWO32 + h.lo[2 * k];
  return dst;
}

/** Σ of an int64 array, correctly rounded to a double (exact below 2^53): the same from any split. */
export function sumInt64(src: BigInt64Array): number {
  const h = halves(src);
  let lo = 0, hi = 0; // exact: fewer than 2^21 terms of 32 bits each
  for (let k = 0; k < src.length; k++) {
    lo += h.lo[2 * k];
    hi += h.hi[2 * k + 1];
  }
  if (src.length >= 2 ** 21) throw new Error('sumInt64: too many terms to stay exact');
  return hi * TWO32 + lo;
}

// --- the farthest point of an anchor, packed so that shards combine it with a max ---

/**
 * (f32 bits of the distance) << 32 | (2^32 − 1 − global point index): the largest distance wins,
 * then the lowest index (cuda/reduce.cu packs the same way). 0 means "no point".
 */
export function packFar(dist: number, index: number): bigint {
  F32[0] = dist;
  return (BigInt(U32[0]) << 32n) | BigInt(0xffffffff - index);
}
const F32 = new Float32Array(1);
const U32 = new Uint32Array(F32.buffer);

/** packFar's inverse: index -1 and distance 0 for an empty anchor. */
export function unpackFar(packed: bigint): { index: number; dist: number } {
  if (packed === 0n) return { index: -1, dist: 0 };
  U32[0] = Number(packed >> 32n);
  return { index: 0xffffffff - Number(packed & 0xffffffffn), dist: F32[0] };
}
