// The 'ec' block decoder the readers use: the same streams as rans.ts ransDecode + blocks.ts
// decodeBlock (the reference, which tests hold it to), decoded through tables built once per
// section so that the loop over symbols does no call and no allocation:
//
//   bucket table (per model, 2^R entries, R = min(S, 8)): bucket b → the symbol that owns slot
//     b · 2^(S−R), the first of its bucket; a slot's symbol is found from there by stepping
//     while the slot lies past the symbol's end (rarely: only where symbols narrower than a bucket
//     meet). A slot → symbol table of 2^S entries a model is what rANS decoders usually index, but
//     models × 2^S entries (2 MB for 128 dimensions at S = 14) miss the cache on nearly every
//     symbol, while 2^8 a model stay in it;
//   symbol table (per model, its A + 1 symbols, 4 × i32 each):
//     [(f_s − 1) << 16 | c_s,  the code q = lo + s itself (ESCAPE for the escape symbol),  c_s + f_s,
//      c_s + f_s again but 0 for the escape (what the WebAssembly loop checks a slot against)],
//
// so a symbol costs two dependent loads, one multiply and a renormalization without a branch (the
// word is read whatever happens and kept or not by a mask; the position moves by 0 or 1). The
// decoded code goes straight to the reader's array (int16 when the alphabets fit it); escapes are
// noted by position and filled in after the stream, in symbol order, from the escape bytes.
//
// Damage is found at the same points and reported in the same words as the reference: the loop
// itself never throws (a position past the words reads nothing: undefined, masked to 0), the
// checks at the end say what was wrong.
//
// The symbol loop runs in WebAssembly where it can (wasm-decode.ts: the same loop, the same codes,
// the same refusals), this one otherwise.
import { blockHead } from './blocks.js';
import { LANES, RANS_L } from './rans.js';
import { MAX_CODE, VarintReader, type Alphabet } from './model.js';
import type { RansModels } from './rans.js';
import { ecWasmAvailable, ecWasmEnabled, WasmSymbols } from './wasm-decode.js';

/** The host's byte order is the stream's: its words can be copied as u16 when aligned. */
const LITTLE_ENDIAN = new Uint8Array(new Uint16Array([1]).buffer)[0] === 1;

/** Marks the escape symbol in the symbol table: never a code (|q| ≤ 2^24). */
const ESCAPE = 2 ** 30;
/** log2 of the buckets a model of the WebAssembly loop (the JS loop's R is min(S, 8)). */
const WASM_BUCKET_BITS = 10;

/** The tables of one section's models, and the scratch one thread decodes its blocks with. */
export class BlockDecoder {
  /** The JS loop's bucket table, made when that loop first runs. */
  private bucket?: Uint16Array;
  private readonly symTab: Int32Array;
  private readonly symStart: Int32Array;
  private readonly R: number;
  /** Every alphabet's codes fit int16: blocks decode into Int16Array. */
  readonly narrow: boolean;
  private words = new Uint16Array(0);
  private escAt = new Int32Array(0);
  private readonly st = new Int32Array(LANES);
  /** decodeSymbols' answer: the words read, the escapes noted. */
  private readonly res = new Int32Array(2);
  /** The WebAssembly symbol loop, unless it is off or missing. */
  private readonly wasm?: WasmSymbols;

  constructor(readonly alpha: Alphabet, readonly models: RansModels, useWasm = ecWasmEnabled()) {
    const { scaleBits: S, start, freq, cum } = models, dims = alpha.lo.length;
    this.R = Math.min(S, 8);
    let narrow = true;
    for (let k = 0; k < dims; k++) if (alpha.lo[k] < -32768 || alpha.lo[k] + alpha.size[k] - 1 > 32767) narrow = false;
    this.narrow = narrow;
    this.symStart = Int32Array.from(start.subarray(0, dims));
    this.symTab = new Int32Array(4 * start[dims]);
    for (let k = 0; k < dims; k++) {
      const A = alpha.size[k];
      for (let s = 0; s <= A; s++) {
        const i = start[k] + s;
        this.symTab[4 * i] = freq[i] === 0 ? 0 : ((freq[i] - 1) << 16) | cum[i];
        this.symTab[4 * i + 1] = s === A ? ESCAPE : alpha.lo[k] + s;
        this.symTab[4 * i + 2] = cum[i] + freq[i];
        // The end the WebAssembly loop checks a slot against: 0 for the escape, so that one compare
        // finds both a slot past its bucket's first symbol and an escape (the JS loop reads 0 .. 2).
        this.symTab[4 * i + 3] = s === A ? 0 : cum[i] + freq[i];
      }
    }
    if (useWasm && ecWasmAvailable()) {
      // Finer buckets for the WebAssembly loop: its time goes to the steps past a bucket's first
      // symbol (a mispredicted branch each), not to the cache the larger table takes.
      // Its buckets hold indices into symTab where they fit a u16 (saving the loop an add a symbol).
      const RW = Math.min(S, WASM_BUCKET_BITS), absolute = start[dims] <= 0xffff;
      this.wasm = new WasmSymbols(S, RW, absolute, this.buckets(RW, absolute), this.symTab, this.symStart);
    }
  }

  /**
   * The bucket table at 2^R buckets a model: bucket b → the symbol owning its first slot, b · 2^(S−R)
   * (its index in the model, or in symTab when absolute). Filled a symbol's run of buckets at a time.
   */
  private buckets(R: number, absolute = false): Uint16Array {
    const { symTab, symStart } = this, dims = symStart.length, SH = this.models.scaleBits - R, B = 1 << R;
    const bucket = new Uint16Array(dims << R);
    for (let k = 0; k < dims; k++) {
      const base = absolute ? symStart[k] : 0, row = k << R;
      for (let s = 0, b = 0; s <= this.alpha.size[k] && b < B; s++) {
        // The buckets whose first slot b · 2^SH lies below the symbol's end.
        const end = Math.min(B, Math.ceil(symTab[4 * (symStart[k] + s) + 2] / 2 ** SH));
        if (end > b) bucket.fill(base + s, row + b, row + end), (b = end);
      }
    }
    return bucket;
  }

  /** Whether the symbol loop runs in WebAssembly (worker threads decode as the caller's decoder does). */
  get usesWasm(): boolean {
    return this.wasm !== undefined;
  }

  /** An array of the right width for `rows` rows' codes. */
  alloc(rows: number): Int16Array | Int32Array {
    const count = rows * this.alpha.lo.length;
    return this.narrow ? new Int16Array(count) : new Int32Array(count);
  }

  /**
   * Decodes the block at bytes[at .. at + size) of `rows` rows into out[0 .. rows × dims) (the codes
   * q), as blocks.ts decodeBlock does, with its errors. Returns false (out then unspecified) when out
   * is an Int16Array and an escaped code does not fit it: decode into an Int32Array then.
   */
  decode(bytes: Uint8Array, at: number, size: number, rows: number, out: Int16Array | Int32Array, fail: (what: string) => Error): boolean {
    const { W, E } = blockHead(bytes, at, size, fail);
    const dims = this.alpha.lo.length, count = rows * dims;
    const st = this.st;
    for (let l = 0; l < LANES; l++) {
      const x = bytes[at + 4 * l] + bytes[at + 4 * l + 1] * 256 + bytes[at + 4 * l + 2] * 65536 + bytes[at + 4 * l + 3] * 16777216;
      if (x < RANS_L) throw fail(`lane ${l}'s state ${x} is outside [2^16, 2^32)`);
      st[l] = x | 0;
    }
    const wAt = at + 4 * LANES + 8;
    const fast = this.wasm?.run(count, dims, st, bytes, wAt, W, out);
    if (fast) return this.finish(fast.p, W, fast.escapes, fast.escAt, bytes, wAt, E, dims, out, fail);
    // The words copied into scratch with one to spare (the loop reads the word at its position even
    // when it keeps none). A damaged stream can run further: reads past the end give undefined, 0
    // once masked, and the position's check below refuses the block.
    if (this.words.length < W + 1) this.words = new Uint16Array(W + 1);
    if (this.escAt.length <= count) this.escAt = new Int32Array(count + 1);
    const words = this.words;
    if (LITTLE_ENDIAN && (bytes.byteOffset + wAt) % 2 === 0) words.set(new Uint16Array(bytes.buffer, bytes.byteOffset + wAt, W));
    else for (let i = 0; i < W; i++) words[i] = bytes[wAt + 2 * i] | (bytes[wAt + 2 * i + 1] << 8);
    const res = this.res;
    decodeSymbols(count, dims, this.models.scaleBits, this.R, (this.bucket ??= this.buckets(this.R)), this.symTab, this.symStart, st, words, this.escAt, out, res);
    return this.finish(res[0], W, res[1], this.escAt, bytes, wAt, E, dims, out, fail);
  }

  /** The checks after the symbol loop (p words read, the lanes' states in this.st), then the escapes filled in. */
  private finish(p: number, W: number, escapes: number, escAt: Int32Array, bytes: Uint8Array, wAt: number, E: number, dims: number, out: Int16Array | Int32Array, fail: (what: string) => Error): boolean {
    const st = this.st;
    if (p > W) throw fail('the stream ends before its symbols do');
    if (p < W) throw fail(`${W - p} words left after the last symbol`);
    for (let l = 0; l < LANES; l++) if (st[l] >>> 0 !== RANS_L) throw fail(`lane ${l} ends in state ${st[l] >>> 0}, not 2^16`);
    return this.fillEscapes(bytes, wAt + 2 * W, E, escapes, escAt, dims, out, fail);
  }

  /** The escaped codes, in symbol order, from the escape bytes; false when one does not fit an Int16Array out. */
  private fillEscapes(bytes: Uint8Array, eAt: number, E: number, escapes: number, escAt: Int32Array, dims: number, out: Int16Array | Int32Array, fail: (what: string) => Error): boolean {
    const r = new VarintReader(bytes, eAt, eAt + E, (what) => fail(`escape bytes: ${what}`));
    const { lo, size: A } = this.alpha;
    const narrow = out instanceof Int16Array;
    let fits = true;
    for (let e = 0; e < escapes; e++) {
      const t = escAt[e], k = t % dims;
      const q = r.int();
      if (q >= lo[k] && q < lo[k] + A[k]) throw fail(`escaped code ${q} of dimension ${k} is inside its alphabet`);
      if (Math.abs(q) > MAX_CODE) throw fail(`escaped code ${q} is beyond ±2^24`);
      if (narrow && q !== (q << 16) >> 16) fits = false;
      out[t] = q;
    }
    if (r.at !== r.end) throw fail(`${r.end - r.at} escape bytes left over`);
    return fits;
  }
}

/**
 * The symbol loop: count symbols (row-major, dims a row) into out from the lanes' states st and
 * the words; res gets the words read and the escapes noted in escAt. A free function of its
 * arguments only: a property first read after the loop was compiled would send the rest of a
 * block back to the interpreter.
 */
function decodeSymbols(
  count: number, dims: number, S: number, R: number, bucket: Uint16Array, symTab: Int32Array, symStart: Int32Array,
  st: Int32Array, words: Uint16Array, escAt: Int32Array, out: Int16Array | Int32Array, res: Int32Array,
): void {
  const mask = (1 << S) - 1, SH = S - R;
  let p = 0, esc = 0;
  for (let t = 0; t < count; ) {
    for (let k = 0; k < dims; k++, t++) {
      const l = t & (LANES - 1);
      let x = st[l];
      const slot = x & mask;
      let i = (symStart[k] + bucket[(k << R) + (slot >>> SH)]) << 2;
      while (slot >= symTab[i + 2]) i += 4;
      const fc = symTab[i], q = symTab[i + 1];
      x = (Math.imul((fc >>> 16) + 1, x >>> S) + slot - (fc & 0xffff)) | 0;
      // Renormalize without a branch: need is 1 when x < 2^16.
      const need = ((x >>> 16) - 1) >>> 31;
      x = (x << (need << 4)) | (words[p] & -need);
      p += need;
      st[l] = x;
      out[t] = q;
      // Escapes noted without a branch (one first taken after compiling would deoptimize the loop).
      escAt[esc] = t;
      esc += +(q === ESCAPE);
    }
  }
  res[0] = p;
  res[1] = esc;
}
