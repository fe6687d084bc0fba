// The 'ec' codec's models: per coded dimension, a histogram of its integer codes q = round(r / step)
// turned into a static rANS model (rans.ts), and the compact form the section stores.
//
// A dimension's alphabet is a contiguous range of codes lo .. lo + A − 1 (symbols 0 .. A − 1) plus
// one escape symbol, A. A code outside the range is coded as the escape symbol in the rANS stream and
// its value, zigzag LEB128, in the block's escape bytes (blocks.ts). The range is what is left of the
// counted codes once the tails' rare codes are cut where that saves bits (alphabetOf): kept, a code
// costs a model byte and, seen fewer than N / 2^S times, a frequency of 1 (probability 2^−S, more
// than it occurs); escaped, its varint and the escape symbol each time it occurs.
//
// Stored form (the section's model bytes), per coded dimension in order, LEB128 varints:
//   zigzag(lo), A, then A + 1 frequencies (the A codes', then the escape's; they sum to 2^S)
import { RansModels, quantizeFreqs } from './rans.js';

/** Largest alphabet of one dimension, escape included (its decode table holds symbols in u16). */
export const MAX_SYMBOLS = 4096;
/** Codes beyond ±MAX_CODE are clamped: f32(anchor + step·q) is then one rounding of an exact product on every device. */
export const MAX_CODE = 2 ** 24;

/** Per coded dimension: its first code and its alphabet size (escape not counted). */
export interface Alphabet {
  lo: Int32Array;
  size: Uint32Array;
}

/**
 * Counts of each coded dimension's codes inside a window lo_k .. lo_k + width_k − 1 (wider windows
 * than an alphabet can use are cut by alphabetOf); codes outside it counted as escapes.
 */
export class CodeHistogram {
  readonly start: Uint32Array;
  readonly counts: Float64Array;
  readonly escapes: Float64Array;
  total = 0;

  constructor(readonly lo: Int32Array, readonly width: Uint32Array) {
    this.start = new Uint32Array(lo.length + 1);
    for (let k = 0; k < lo.length; k++) this.start[k + 1] = this.start[k] + width[k];
    this.counts = new Float64Array(this.start[lo.length]);
    this.escapes = new Float64Array(lo.length);
  }

  /** A window of ±spread codes around 0 for each dimension (spread ≥ 1, at most MAX_SYMBOLS / 2). */
  static around(spread: ArrayLike<number>): CodeHistogram {
    const dims = spread.length;
    const lo = new Int32Array(dims), width = new Uint32Array(dims);
    for (let k = 0; k < dims; k++) {
      const w = Math.max(1, Math.min(MAX_SYMBOLS / 2 - 1, Math.ceil(spread[k])));
      lo[k] = -w;
      width[k] = 2 * w + 1;
    }
    return new CodeHistogram(lo, width);
  }

  /** One row's codes (coded dimensions in order). */
  addRow(q: Int32Array, at: number): void {
    const { lo, width, start, counts, escapes } = this;
    for (let k = 0; k < lo.length; k++) {
      const v = q[at + k] - lo[k];
      if (v >= 0 && v < width[k]) counts[start[k] + v]++;
      else escapes[k]++;
    }
    this.total++;
  }

  /** The other histogram's counts added (same windows): blocks counted apart, combined in order. */
  add(o: Pick<CodeHistogram, 'counts' | 'escapes' | 'total'>): void {
    for (let i = 0; i < this.counts.length; i++) this.counts[i] += o.counts[i];
    for (let k = 0; k < this.escapes.length; k++) this.escapes[k] += o.escapes[k];
    this.total += o.total;
  }
}

/** Bytes of v as an LEB128 varint. */
export const varintBytes = (v: number) => (v < 0x80 ? 1 : v < 0x4000 ? 2 : v < 0x200000 ? 3 : v < 0x10000000 ? 4 : 5);

/**
 * Bits that `count` occurrences of one symbol cost under frequencies of precision 2^S (M) among
 * `total` values: its own codes at the frequency it will get (at least 1, so a symbol rarer than
 * 1/M costs log2 M), plus what that floor takes from the others (they lose f/M − count/total of
 * probability: about total · that · log2 e bits).
 */
export function symbolBits(count: number, total: number, M: number): number {
  if (!(count > 0)) return 0;
  const f = Math.max(1, Math.round((count * M) / total));
  return count * Math.log2(M / f) + total * Math.max(0, f / M - count / total) * Math.LOG2E;
}

/**
 * Each dimension's alphabet from its histogram: the window less the tails whose escape costs fewest
 * bits — escaped, a code's occurrences cost the escape symbol's bits and their zigzag varints in
 * the escape bytes; kept, their own bits and its frequency's varint in the models (symbolBits) — at
 * most MAX_SYMBOLS − 1 codes. `rows`: the rows
 * the counts stand for (more than were counted when a sample sizes a whole set): the codes' bits
 * scale with it, the models' bytes do not. Deterministic: the same counts give the same alphabet.
 */
export function alphabetOf(h: CodeHistogram, scaleBits: number, rows = h.total): Alphabet {
  const dims = h.lo.length;
  const lo = new Int32Array(dims), size = new Uint32Array(dims);
  const N = h.total, M = 2 ** scaleBits, per = N > 0 ? rows / N : 0;
  const cap = Math.min(MAX_SYMBOLS, M) - 1;
  for (let k = 0; k < dims; k++) {
    const c = h.counts.subarray(h.start[k], h.start[k + 1]);
    let a = 0, b = c.length - 1;
    if (N > 0) {
      // The tails' end codes are escaped one by one, the rarer end first, down to one code; the cut
      // kept is the one with the fewest bits in all (the first escape pays for the escape symbol
      // the later ones share, so the best cut can lie past a step that costs more than it saves).
      const zeros = () => {
        const was = b - a;
        while (a < b && c[a] === 0) a++;
        while (b > a && c[b] === 0) b--;
        return was - (b - a);
      };
      zeros();
      let esc = h.escapes[k], delta = 0, best = 0, bestA = a, bestB = b;
      while (a < b) {
        const end = c[a] <= c[b] ? a : b, cnt = c[end], code = h.lo[k] + end;
        const keep = per * symbolBits(cnt, N, M) + 8 * varintBytes(Math.max(1, Math.round((cnt * M) / N)));
        const escape = per * (cnt * 8 * varintBytes(code < 0 ? -2 * code - 1 : 2 * code) + symbolBits(esc + cnt, N, M) - symbolBits(esc, N, M));
        delta += escape - keep;
        esc += cnt;
        if (end === a) a++;
        else b--;
        delta -= 8 * zeros(); // a code never seen, kept inside the alphabet, costs its frequency's byte
        if (delta < best) (best = delta), (bestA = a), (bestB = b);
      }
      (a = bestA), (b = bestB);
    }
    // Too wide: keep the busiest window of cap codes (ties: the lower one).
    if (b - a + 1 > cap) {
      let sum = 0;
      for (let i = a; i < a + cap; i++) sum += c[i];
      let best = sum, at = a;
      for (let i = a + cap; i <= b; i++) {
        sum += c[i] - c[i - cap];
        if (sum > best) (best = sum), (at = i - cap + 1);
      }
      (a = at), (b = at + cap - 1);
    }
    lo[k] = h.lo[k] + a;
    size[k] = b - a + 1;
  }
  return { lo, size };
}

/** The rANS models of the alphabets under the histogram's counts (codes cut from the window count as escapes). */
export function modelsOf(h: CodeHistogram, alpha: Alphabet, scaleBits: number): RansModels {
  const dims = alpha.lo.length;
  const start = new Uint32Array(dims + 1);
  for (let k = 0; k < dims; k++) start[k + 1] = start[k] + alpha.size[k] + 1;
  const freq = new Uint32Array(start[dims]);
  for (let k = 0; k < dims; k++) {
    const A = alpha.size[k], off = alpha.lo[k] - h.lo[k];
    const c = new Float64Array(A + 1);
    let esc = h.escapes[k];
    const win = h.counts.subarray(h.start[k], h.start[k + 1]);
    for (let i = 0; i < win.length; i++) {
      if (i >= off && i < off + A) c[i - off] = win[i];
      else esc += win[i];
    }
    c[A] = esc;
    // A dimension never seen (no rows) still needs a valid model: code 0 certain.
    if (h.total === 0) c[Math.min(A - 1, Math.max(0, -alpha.lo[k]))] = 1;
    freq.set(quantizeFreqs(c, scaleBits), start[k]);
  }
  return new RansModels(scaleBits, start, freq);
}

/** LEB128 writer into a growing byte array. */
export class VarintWriter {
  private buf = new Uint8Array(256);
  length = 0;

  uint(v: number): void {
    if (this.length + 10 > this.buf.length) {
      const g = new Uint8Array(this.buf.length * 2);
      g.set(this.buf);
      this.buf = g;
    }
    while (v >= 0x80) {
      this.buf[this.length++] = (v % 0x80) | 0x80;
      v = Math.floor(v / 0x80);
    }
    this.buf[this.length++] = v;
  }

  int(v: number): void {
    this.uint(v < 0 ? -2 * v - 1 : 2 * v);
  }

  bytes(): Uint8Array {
    return this.buf.slice(0, this.length);
  }
}

/** LEB128 reader over bytes[at .. end) that throws `fail(what)` instead of reading past end. */
export class VarintReader {
  constructor(private readonly b: Uint8Array, public at: number, readonly end: number, private readonly fail: (what: string) => Error) {}

  /** An unsigned value of at most 2^35 (five bytes: every value the section stores). */
  uint(): number {
    let v = 0, mul = 1;
    for (let i = 0; i < 5; i++) {
      if (this.at >= this.end) throw this.fail('a number runs past its end');
      const c = this.b[this.at++];
      v += (c & 0x7f) * mul;
      if (c < 0x80) return v;
      mul *= 0x80;
    }
    throw this.fail('a number is longer than 5 bytes');
  }

  int(): number {
    const z = this.uint();
    return z % 2 === 1 ? -(z + 1) / 2 : z / 2;
  }
}

/** The stored form of the alphabets and models. */
export function writeModels(alpha: Alphabet, models: RansModels): Uint8Array {
  const w = new VarintWriter();
  for (let k = 0; k < alpha.lo.length; k++) {
    w.int(alpha.lo[k]);
    w.uint(alpha.size[k]);
    for (let s = models.start[k]; s < models.start[k + 1]; s++) w.uint(models.freq[s]);
  }
  return w.bytes();
}

/** Reads `dims` dimensions' alphabets and models back; every count and sum checked. */
export function readModels(
  bytes: Uint8Array, at: number, end: number, dims: number, scaleBits: number, corrupt: (what: string) => Error,
): { alpha: Alphabet; models: RansModels } {
  const r = new VarintReader(bytes, at, end, (what) => corrupt(`model bytes: ${what}`));
  const lo = new Int32Array(dims), size = new Uint32Array(dims), start = new Uint32Array(dims + 1);
  const M = 2 ** scaleBits;
  const freqs: number[] = [];
  for (let k = 0; k < dims; k++) {
    const l = r.int(), A = r.uint();
    if (Math.abs(l) > MAX_CODE) throw corrupt(`dimension ${k}'s first code ${l} is beyond ±2^24`);
    if (A < 1 || A + 1 > Math.min(MAX_SYMBOLS, M)) throw corrupt(`dimension ${k} has ${A} codes (1 to ${Math.min(MAX_SYMBOLS, M) - 1})`);
    if (l + A - 1 > MAX_CODE) throw corrupt(`dimension ${k}'s codes run past 2^24`);
    let sum = 0;
    for (let s = 0; s <= A; s++) {
      const f = r.uint();
      sum += f;
      freqs.push(f);
    }
    if (sum !== M) throw corrupt(`dimension ${k}'s frequencies sum to ${sum}, not 2^${scaleBits}`);
    lo[k] = l;
    size[k] = A;
    start[k + 1] = start[k] + A + 1;
  }
  if (r.at !== end) throw corrupt(`${end - r.at} bytes left after the models`);
  return { alpha: { lo, size }, models: new RansModels(scaleBits, start, Uint32Array.from(freqs)) };
}
