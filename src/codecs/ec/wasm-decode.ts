// The 'ec' decoder's hot loops in WebAssembly SIMD (build/ec-decode.wasm, from wasm/ec-decode.c):
// the rANS symbol loop (fast-decode.ts decodeSymbols) and the codes → f32 rows of both layouts
// (residuals.ts addTo). Each gives the JS loop's bits exactly (test/codecs/ec-wasm.test.ts); the JS
// loops stay as the fallback (no WebAssembly SIMD, no build/ec-decode.wasm, a block too large for
// a 32-bit memory) and as the reference.
//
// One instance per thread and use (symbols, rows), each with its own memory: inputs are copied in
// and results out (a memcpy beside loops that cost several times more). The section's constants
// (decoder tables; steps, offsets, directions) sit at the start of the memory and are copied again
// only when another section's decoder or residuals use the instance.
import { readFileSync } from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';

interface Exports {
  memory: WebAssembly.Memory;
  __heap_base: WebAssembly.Global;
  ec_symbols(count: number, dims: number, S: number, R: number, absolute: number, bucket: number, symTab: number, kExt: number, ssExt: number, st: number, words: number, W: number, escAt: number, narrow: number, out16: number, out32: number, res: number): void;
  ec_add_axes(rows: number, D: number, d: number, narrow: number, codes: number, dims: number, step: number, off: number, out: number): void;
  ec_add_rotated(rows: number, D: number, d: number, narrow: number, codes: number, dims: number, step: number, off: number, P: number, acc: number, ys: number, ps: number, out: number): void;
}

/** build/ec-decode.wasm, from the package root (dist/codecs/ec/ → ../../../build). */
const wasmFile = (): string => path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..', '..', '..', 'build', 'ec-decode.wasm');

let compiled: WebAssembly.Module | null | undefined;
let enabled = process.env.VLC_EC_WASM !== '0';

/** The compiled module, once per thread; null where it cannot be had (then the JS loops run). */
function ecModule(): WebAssembly.Module | null {
  if (compiled === undefined) {
    try {
      compiled = new WebAssembly.Module(readFileSync(wasmFile()));
    } catch {
      compiled = null;
    }
  }
  return compiled;
}

/** Whether decoders made from now on use the WebAssembly loops (VLC_EC_WASM=0 turns them off; tests compare both). */
export function ecWasmEnabled(): boolean {
  return enabled && ecWasmAvailable();
}

/** Whether this thread has the module (a decoder told to use it falls back to JS where it has not). */
export function ecWasmAvailable(): boolean {
  return ecModule() !== null;
}

/** Tests: the WebAssembly loops on or off for decoders made from now on, on this thread. */
export function setEcWasm(on: boolean): void {
  enabled = on;
}

const align16 = (x: number) => (x + 15) & ~15;
/** Zero words after a stream: the loop reads up to four words at a position at most W (ec-decode.c). */
const PAD_WORDS = 8;

/** One instance and its memory; `owner` is whose constants it holds. */
class Arena {
  readonly ex: Exports;
  readonly base: number;
  owner: object | undefined;
  /** End of the owner's constants: per-call buffers start here. */
  constEnd = 0;

  constructor(mod: WebAssembly.Module) {
    this.ex = new WebAssembly.Instance(mod, {}).exports as unknown as Exports;
    this.base = align16(this.ex.__heap_base.value as number);
    this.constEnd = this.base;
  }

  /** Memory up to byte `end`; false when a 32-bit memory cannot hold it. */
  reserve(end: number): boolean {
    const mem = this.ex.memory, have = mem.buffer.byteLength;
    if (end <= have) return true;
    if (end > 2 ** 32 - 65536) return false;
    try {
      mem.grow(Math.ceil((end - have) / 65536));
      return true;
    } catch {
      return false;
    }
  }

  /** Makes `owner`'s constants (arrays copied in turn, each 16-aligned) the ones held; their offsets, or undefined without memory. */
  load(owner: object, consts: readonly ArrayBufferView[]): number[] | undefined {
    const offs: number[] = [];
    let at = this.base;
    for (const c of consts) (offs.push(at), (at = align16(at + c.byteLength)));
    if (this.owner !== owner) {
      if (!this.reserve(at)) return undefined;
      const u8 = new Uint8Array(this.ex.memory.buffer);
      consts.forEach((c, i) => u8.set(new Uint8Array(c.buffer, c.byteOffset, c.byteLength), offs[i]));
      this.owner = owner;
      this.constEnd = at;
    }
    return offs;
  }
}

let symbolArena: Arena | undefined;
let rowArena: Arena | undefined;
const arena = (which: 'symbols' | 'rows'): Arena => {
  const mod = ecModule()!;
  return which === 'symbols' ? (symbolArena ??= new Arena(mod)) : (rowArena ??= new Arena(mod));
};

/** What one decodeSymbols call gives back: the words read, the escapes and where they are. */
export interface SymbolResult {
  p: number;
  escapes: number;
  escAt: Int32Array;
}

/** fast-decode.ts decodeSymbols in WebAssembly, for one section's tables. */
export class WasmSymbols {
  private readonly consts: ArrayBufferView[];
  /**
   * bucket: per model, 2^R buckets → their first slot's symbol, indexed from the model's first
   * symbol, or from symTab's start when absolute; symTab: fast-decode.ts's entries, column 3 the
   * end the loop checks (0 for the escape).
   */
  constructor(private readonly S: number, private readonly R: number, private readonly absolute: boolean, bucket: Uint16Array, symTab: Int32Array, symStart: Int32Array) {
    // Model k's bucket offset and first symbol at k .. k + 3 for every k < dims, wrapping past the row's end.
    const dims = symStart.length;
    const kExt = Int32Array.from({ length: dims + 4 }, (_, i) => (i % dims) << R);
    const ssExt = Int32Array.from({ length: dims + 4 }, (_, i) => symStart[i % dims]);
    this.consts = [bucket, symTab, kExt, ssExt];
  }

  /**
   * Decodes count symbols (rows of dims) from the lane states st (updated) and the W words at
   * bytes[wAt ..) into out; undefined when memory cannot be had (decode in JS then). A stream that
   * runs out stops at the end of a row with p > W: the caller refuses it as the JS loop's result would.
   */
  run(count: number, dims: number, st: Int32Array, bytes: Uint8Array, wAt: number, W: number, out: Int16Array | Int32Array): SymbolResult | undefined {
    const a = arena('symbols');
    const c = a.load(this, this.consts);
    if (!c) return undefined;
    const narrow = out instanceof Int16Array;
    const stAt = a.constEnd, resAt = stAt + 128, wordsAt = resAt + 16;
    const escAt = align16(wordsAt + 2 * (W + PAD_WORDS)), outAt = align16(escAt + 4 * count), end = outAt + out.BYTES_PER_ELEMENT * count;
    if (!a.reserve(end)) return undefined;
    const buf = a.ex.memory.buffer, u8 = new Uint8Array(buf);
    new Int32Array(buf, stAt, 32).set(st);
    u8.set(bytes.subarray(wAt, wAt + 2 * W), wordsAt);
    // The words past the stream read as 0, as the JS loop's reads past its words do once masked.
    u8.fill(0, wordsAt + 2 * W, wordsAt + 2 * (W + PAD_WORDS));
    a.ex.ec_symbols(count, dims, this.S, this.R, this.absolute ? 1 : 0, c[0], c[1], c[2], c[3], stAt, wordsAt, W, escAt, narrow ? 1 : 0, outAt, outAt, resAt);
    st.set(new Int32Array(buf, stAt, 32));
    const res = new Int32Array(buf, resAt, 2), p = res[0], escapes = res[1];
    out.set(narrow ? new Int16Array(buf, outAt, count) : new Int32Array(buf, outAt, count));
    return { p, escapes, escAt: new Int32Array(buf, escAt, escapes).slice() };
  }
}

/** residuals.ts addTo, rows at a time, in WebAssembly: one section's steps, offsets and (rotated) directions. */
export class WasmRows {
  private readonly consts: ArrayBufferView[];
  private readonly rotated: boolean;
  /** Rows per call: the codes and rows copied in stay within a few MiB. */
  private readonly perCall: number;

  constructor(private readonly D: number, private readonly d: number, dims: Int32Array, step: Float32Array, off: Float32Array, directions?: Float32Array) {
    this.consts = [dims, Float64Array.from(step), Float64Array.from(off)];
    this.rotated = directions !== undefined;
    if (directions) this.consts.push(Float64Array.from(directions), new Float64Array(d), new Float64Array(4 * D), new Int32Array(D));
    this.perCall = Math.max(1, Math.floor((4 << 20) / (4 * (D + d))));
  }

  /**
   * Adds the residuals of `rows` rows, their codes from q[o ..) (rows × D), to out[at ..) (rows × d,
   * their anchors). False when memory cannot be had (add them in JS then).
   */
  add(q: Int16Array | Int32Array, o: number, rows: number, out: Float32Array, at: number): boolean {
    const a = arena('rows');
    const c = a.load(this, this.consts);
    if (!c) return false;
    const { D, d } = this, narrow = q instanceof Int16Array, w = q.BYTES_PER_ELEMENT;
    const most = Math.min(this.perCall, rows), qAt = a.constEnd, outAt = align16(qAt + w * most * D + 16);
    if (!a.reserve(outAt + 4 * most * d)) return false;
    for (let r0 = 0; r0 < rows; r0 += most) {
      const k = Math.min(most, rows - r0);
      const buf = a.ex.memory.buffer;
      const qs = q.subarray(o + r0 * D, o + (r0 + k) * D), os = out.subarray(at + r0 * d, at + (r0 + k) * d);
      (narrow ? new Int16Array(buf, qAt, k * D) : new Int32Array(buf, qAt, k * D)).set(qs);
      const ov = new Float32Array(buf, outAt, k * d);
      ov.set(os);
      if (this.rotated) a.ex.ec_add_rotated(k, D, d, narrow ? 1 : 0, qAt, c[0], c[1], c[2], c[3], c[4], c[5], c[6], outAt);
      else a.ex.ec_add_axes(k, D, d, narrow ? 1 : 0, qAt, c[0], c[1], c[2], outAt);
      os.set(ov);
    }
    return true;
  }
}
