// rANS with 32 interleaved lanes and static models: the entropy coder of the 'ec' residual codec.
//
// Layout (the one facebookresearch/dietgpu and nvCOMP's ANS use, so a GPU warp decodes a stream
// with one lane per thread): symbol t of a stream belongs to lane t mod 32; each lane has a u32
// state; all lanes share ONE stream of 16-bit words, in the order the decoder consumes them —
// symbol after symbol (t = 0, 1, 2, …), a lane reading one word right after decoding its symbol when
// its state fell below 2^16. A warp decodes 32 symbols at once and finds each reading lane's word by
// a prefix count of the lanes before it that read; one CPU thread does the same in lane order.
//
//   states x ∈ [L, 2^32), L = 2^16; words of 16 bits; a model's frequencies f_s sum to M = 2^S,
//   S = scaleBits ≤ 16, cumulative c_s = Σ_{s' < s} f_s'
//   encode s (symbols in reverse):  if x ≥ f_s · 2^(32−S): emit x mod 2^16, x ← ⌊x / 2^16⌋
//                                   x ← ⌊x / f_s⌋ · M + (x mod f_s) + c_s
//   decode:  slot = x mod M, s = the symbol with c_s ≤ slot < c_s + f_s,
//            x ← f_s · ⌊x / M⌋ + slot − c_s;  if x < L: x ← x · 2^16 + next word
//
// One renormalization step always suffices each way (16-bit words, L = 2^16: byte-wise steps
// would need a loop). The encoder starts every lane at L and the words it emits come out in reverse;
// the block stores the lanes' final states, which the decoder starts from, and decoding must end
// with every lane back at L and every word read: a check that the stream was whole.
//
// Each symbol t uses model t mod `period` (the residual codec: one model per coded dimension, the
// symbols row after row). Arithmetic is plain JS numbers (states < 2^32, products < 2^48: exact).

export const LANES = 32;
export const RANS_L = 2 ** 16;
export const MIN_SCALE_BITS = 8;
export const MAX_SCALE_BITS = 16;

/** A damaged stream: the decoder's answer, which a section reader turns into its own error. */
export class RansError extends Error {}

/**
 * `counts` (any non-negative numbers) as frequencies summing to 2^scaleBits: every symbol with a
 * count > 0 gets at least 1 and none with 0 does. Proportional, then the remainder placed greedily
 * where it costs least (Σ count · log2 of the frequency: the coded size), ties to the lower symbol,
 * so the same counts always give the same table. Throws when more symbols occur than 2^scaleBits.
 */
export function quantizeFreqs(counts: ArrayLike<number>, scaleBits: number): Uint32Array {
  const M = 2 ** scaleBits, A = counts.length;
  const f = new Uint32Array(A);
  let total = 0, used = 0;
  for (let s = 0; s < A; s++) if (counts[s] > 0) (total += counts[s]), used++;
  if (used === 0) throw new RangeError('no symbol has a count');
  if (used > M) throw new RangeError(`${used} symbols do not fit frequencies summing to ${M}`);
  let sum = 0;
  for (let s = 0; s < A; s++)
    if (counts[s] > 0) {
      f[s] = Math.max(1, Math.round((counts[s] * M) / total));
      sum += f[s];
    }
  // Each step moves one unit: up where count · log2((f+1)/f) gains most, down where
  // count · log2(f/(f−1)) loses least. Few steps: rounding leaves the sum off by about √A, plus
  // one for each rare symbol raised to 1.
  while (sum !== M) {
    let best = -1, bestV = sum < M ? -Infinity : Infinity;
    for (let s = 0; s < A; s++) {
      if (!(counts[s] > 0)) continue;
      if (sum < M) {
        const v = counts[s] * Math.log2((f[s] + 1) / f[s]);
        if (v > bestV) (bestV = v), (best = s);
      } else if (f[s] > 1) {
        const v = counts[s] * Math.log2(f[s] / (f[s] - 1));
        if (v < bestV) (bestV = v), (best = s);
      }
    }
    f[best] += sum < M ? 1 : -1;
    sum += sum < M ? 1 : -1;
  }
  return f;
}

/**
 * Static models, one per position mod `period`: model j's symbols 0 .. size_j − 1, frequencies
 * freq[start_j + s] summing to 2^scaleBits (0 allowed: that symbol cannot occur), cumulative cum.
 * The decoder's slot table (slot → symbol, M entries a model) is built on first decode.
 */
export class RansModels {
  readonly M: number;
  readonly cum: Uint32Array;
  private slotTable?: Uint16Array;

  constructor(
    readonly scaleBits: number,
    /** Model j's symbols are freq[start[j] .. start[j + 1]). */
    readonly start: Uint32Array,
    readonly freq: Uint32Array,
  ) {
    if (!(scaleBits >= MIN_SCALE_BITS && scaleBits <= MAX_SCALE_BITS)) throw new RangeError(`scale bits ${scaleBits} outside ${MIN_SCALE_BITS}..${MAX_SCALE_BITS}`);
    this.M = 2 ** scaleBits;
    this.cum = new Uint32Array(freq.length);
    for (let j = 0; j + 1 < start.length; j++) {
      if (start[j + 1] - start[j] > 65536) throw new RangeError(`model ${j} has more than 65,536 symbols`);
      let c = 0;
      for (let s = start[j]; s < start[j + 1]; s++) (this.cum[s] = c), (c += freq[s]);
      if (c !== this.M) throw new RangeError(`model ${j}'s frequencies sum to ${c}, not ${this.M}`);
    }
  }

  get count(): number {
    return this.start.length - 1;
  }

  /** slot → symbol of every model (models × M entries), made once. */
  slots(): Uint16Array {
    if (this.slotTable) return this.slotTable;
    const { M, start, freq } = this;
    const t = new Uint16Array(this.count * M);
    for (let j = 0; j < this.count; j++) {
      let at = j * M;
      for (let s = start[j]; s < start[j + 1]; s++) {
        t.fill(s - start[j], at, at + freq[s]);
        at += freq[s];
      }
    }
    return (this.slotTable = t);
  }
}

/** What the encoder makes of a stream: the lanes' final states (the decoder's start) and the words. */
export interface RansStream {
  states: Uint32Array;
  words: Uint16Array;
}

/**
 * Encodes symbols[0 .. count) (symbol t under model t mod period; each must have a frequency > 0
 * in its model: a symbol that does not throws). Deterministic: the bytes depend only on the
 * symbols and the models.
 */
export function ransEncode(symbols: ArrayLike<number>, count: number, period: number, models: RansModels): RansStream {
  const { scaleBits, M, start, freq, cum } = models;
  if (period !== models.count) throw new RangeError(`period ${period} but ${models.count} models`);
  const states = new Uint32Array(LANES).fill(RANS_L);
  // At most one word per symbol, plus room to grow in the rare case a stream is incompressible.
  let words = new Uint16Array(Math.max(64, count + 32));
  let w = 0;
  const lim = 2 ** (32 - scaleBits);
  let j = (count - 1) % period;
  for (let t = count - 1; t >= 0; t--) {
    const lane = t & (LANES - 1);
    const s = symbols[t];
    const at = start[j] + s;
    const f = s < start[j + 1] - start[j] ? freq[at] : 0;
    if (f === 0) throw new RangeError(`symbol ${s} at ${t} has no frequency in model ${j}`);
    let x = states[lane];
    if (x >= f * lim) {
      if (w === words.length) {
        const grown = new Uint16Array(words.length * 2);
        grown.set(words);
        words = grown;
      }
      words[w++] = x & 0xffff;
      x = x >>> 16;
    }
    states[lane] = Math.floor(x / f) * M + (x % f) + cum[at];
    j = j === 0 ? period - 1 : j - 1;
  }
  const out = words.slice(0, w).reverse();
  return { states, words: out };
}

/**
 * Decodes `count` symbols into out[0 .. count) from the lanes' start states and the words at
 * bytes[wordsAt .. wordsAt + 2·wordCount) (little-endian, any alignment). Throws RansError when
 * the stream is not one the encoder made: a state out of range, words missing or left over, or a
 * lane not back at L at the end. Never reads outside the words given.
 */
export function ransDecode(
  bytes: Uint8Array, wordsAt: number, wordCount: number, startStates: ArrayLike<number>,
  count: number, period: number, models: RansModels, out: Uint16Array | Int32Array,
): void {
  const { scaleBits, M, start, freq, cum } = models;
  const slots = models.slots();
  const mask = M - 1;
  // States held as int32 bit patterns (x | 0): V8 keeps them in registers as small integers; >>> and
  // & read them unsigned, and the one comparison with L goes through >>> 0.
  const st = new Int32Array(LANES);
  for (let l = 0; l < LANES; l++) {
    const x = startStates[l];
    if (!(x >= RANS_L && x < 2 ** 32)) throw new RansError(`lane ${l}'s state ${x} is outside [2^16, 2^32)`);
    st[l] = x | 0;
  }
  let p = wordsAt;
  const end = wordsAt + 2 * wordCount;
  if (end > bytes.length) throw new RansError(`${wordCount} words run past the ${bytes.length}-byte input`);
  let j = 0, base = start[0], row = 0;
  for (let t0 = 0; t0 < count; t0 += LANES) {
    const lanes = Math.min(LANES, count - t0);
    for (let l = 0; l < lanes; l++) {
      let x = st[l];
      const slot = x & mask;
      const s = slots[row + slot];
      const at = base + s;
      x = (freq[at] * (x >>> scaleBits) + slot - cum[at]) | 0;
      if (x >>> 0 < RANS_L) {
        if (p >= end) throw new RansError('the stream ends before its symbols do');
        x = (x << 16) | bytes[p] | (bytes[p + 1] << 8);
        p += 2;
      }
      st[l] = x;
      out[t0 + l] = s;
      if (++j === period) (j = 0), (row = 0);
      else row += M;
      base = start[j];
    }
  }
  if (p !== end) throw new RansError(`${(end - p) / 2} words left after the last symbol`);
  for (let l = 0; l < LANES; l++) if (st[l] >>> 0 !== RANS_L) throw new RansError(`lane ${l} ends in state ${st[l] >>> 0}, not 2^16`);
}

/** Σ over symbols of −log2(p) under the models: the size an ideal coder would reach, in bits. */
export function modelCostBits(symbols: ArrayLike<number>, count: number, period: number, models: RansModels): number {
  let bits = 0, j = 0;
  for (let t = 0; t < count; t++) {
    bits += models.scaleBits - Math.log2(models.freq[models.start[j] + symbols[t]]);
    if (++j === period) j = 0;
  }
  return bits;
}
