// The 'ec' codec's coded form (what a reader holds) and its section reader: the residual of vector
// i is r̂_k = step_k · q_ik − sgn(q_ik) · c_k on the coded dimensions (0 elsewhere), the codes q
// decoded a block of rows at a time (blocks.ts) and kept for the next rows of the same block.
//
//   x̂_ik = f32(anchor_k + (step_k · q_ik − sgn(q_ik) · c_k)), the sums in f64 in that order
//   (|q| ≤ 2^24: step · q is exact), one rounding to f32 at the end
//
// c_k moves the levels q ≠ 0 toward 0, to the mean of the residuals that round to them: residuals
// are denser toward 0 inside every cell, so the cell's centre is too far out. On Gaussian data it
// keeps an entropy-coded uniform quantizer within ~0.25 bit of the bound at every rate, where the
// centres alone drift to 0.44 bit at 1.2 bits a value (a step of 2σ).
import { asPayload, type Payload } from '../../io/vlc/payload.js';
import { MAX_TYPED_ELEMENTS } from '../../vectors/dataset.js';
import { readSection, sectionHeadBytes, writeSection, type EcLayout } from './blocks.js';
import { decodeBlocksOnThreads, decodeThreadCount, PARALLEL_MIN_SYMBOLS } from './decode-threads.js';
import { BlockDecoder } from './fast-decode.js';
import { writeModels } from './model.js';
import { ecWasmEnabled, WasmRows } from './wasm-decode.js';
import type { ResidualSection } from '../types.js';

/** A block's bytes: bytes[at .. at + size). */
export interface BlockRef {
  bytes: Uint8Array;
  at: number;
  size: number;
}

/** A block's codes as held in memory: int16 when they all fit (nearly always), else int32. */
export type BlockCodes = Int16Array | Int32Array;

/** The codes in the narrowest array that holds them (in shared memory when `shared`: for other threads to read). */
export function narrowed(q: Int32Array, shared = false): BlockCodes {
  const alloc = (bytes: number) => (shared ? new SharedArrayBuffer(bytes) : new ArrayBuffer(bytes));
  const out = new Int16Array(alloc(2 * q.length));
  for (let t = 0; t < q.length; t++) {
    const v = q[t];
    if (v !== (v << 16) >> 16) {
      const wide = new Int32Array(alloc(4 * q.length));
      wide.set(q);
      return wide;
    }
    out[t] = v;
  }
  return out;
}

/**
 * Every row's codes are held decoded (2 bytes a coded value, n·D in all: the encoder has them, the
 * reader decodes every block once at open), so a row is reached in O(d) in any order. The coded
 * form of a file read where it lies (rowBlocks().coded) holds none: a GPU decodes the blocks'
 * bytes itself, and a row asked for on the host decodes its block (one kept).
 */
export class EcResiduals {
  readonly mode = 'ec';
  private readonly stepOf: Float32Array;
  private readonly offsetOf: Float32Array;

  constructor(
    readonly n: number,
    readonly d: number,
    readonly layout: EcLayout,
    /** Block b's bytes (a GPU decodes them itself: backend/cuda/ec.ts). */
    readonly blocks: (b: number) => BlockRef,
    /**
     * Block b's codes (rows × coded dimensions); a block left out (coded(): a device decodes the
     * bytes itself) is decoded when a row of it is asked for, and kept until another is.
     */
    private readonly codes: ReadonlyArray<BlockCodes | undefined>,
    /** The error a damaged block is reported with. */
    readonly corrupt: (what: string) => Error = (what) => new Error(`ec residuals: ${what}`),
  ) {
    this.stepOf = Float32Array.from(layout.dims, (k) => layout.steps[k]);
    this.offsetOf = Float32Array.from(layout.dims, (k) => layout.offsets[k]);
  }

  private decoder?: BlockDecoder;
  /** A block decoded on demand (one held), for codes left out. */
  private held?: { b: number; q: Int32Array };

  /** Whether every block was decoded (so checked) on the host when read; false for coded(). */
  get decodedOnHost(): boolean {
    return this.codes.every((q) => q !== undefined);
  }

  get blockCount(): number {
    return this.codes.length;
  }

  /** Block b decoded again from its bytes (rows × coded dimensions), into `out` or a fresh array. */
  decodeBlock(b: number, out?: Int32Array): Int32Array {
    const { blockRows, dims, alpha, models } = this.layout;
    const rows = Math.min(blockRows, this.n - b * blockRows);
    const q = out ?? new Int32Array(rows * dims.length);
    const { bytes, at, size } = this.blocks(b);
    (this.decoder ??= new BlockDecoder(alpha, models)).decode(bytes, at, size, rows, q, (what) => this.corrupt(`block ${b}: ${what}`));
    return q;
  }

  /** rows in WebAssembly (undefined: not yet made; null: off, or the module is missing). */
  private wasmRows?: WasmRows | null;

  /**
   * Adds the decoded residuals of vectors i0 .. i1 − 1 to out[at ..) (row after row, d values each,
   * holding their anchors): addTo's bits, a block's rows at a time in WebAssembly where it can.
   */
  addRange(i0: number, i1: number, out: Float32Array, at = 0): void {
    const { blockRows, dims, rotation } = this.layout, D = dims.length, d = this.d;
    if (this.wasmRows === undefined) this.wasmRows = ecWasmEnabled() ? new WasmRows(D, d, dims, this.stepOf, this.offsetOf, rotation?.values) : null;
    for (let i = i0; i < i1; ) {
      const b = Math.floor(i / blockRows), e = Math.min(i1, (b + 1) * blockRows), o = at + (i - i0) * d;
      if (!this.wasmRows?.add(this.codes[b] ?? this.heldBlock(b), (i - b * blockRows) * D, e - i, out, o)) for (let r = i; r < e; r++) this.addTo(r, out, o + (r - i) * d);
      i = e;
    }
  }

  private heldBlock(b: number): Int32Array {
    if (this.held?.b !== b) this.held = { b, q: this.decodeBlock(b) };
    return this.held.q;
  }

  /** Adds vector i's decoded residual to out[at .. at + d), which holds its anchor. */
  addTo(i: number, out: Float32Array, at = 0): void {
    const { blockRows, dims, rotation } = this.layout;
    const b = Math.floor(i / blockRows);
    const D = dims.length, o = (i - b * blockRows) * D, q = this.codes[b] ?? this.heldBlock(b), s = this.stepOf, off = this.offsetOf;
    if (rotation) {
      // r̂ = Σ_c ŷ_c · p_c in f64, coordinates in order (0 codes add nothing), then one f32 rounding.
      // Four coordinates a pass over acc: each acc[j] still takes its terms one by one in order (the
      // same sums), with a quarter of the loads and stores of acc.
      const acc = this.scratch(), P = this.directions(), d = this.d, ys = this.ys!, ps = this.ps!;
      acc.fill(0);
      let m = 0;
      for (let c = 0; c < D; c++) {
        const v = q[o + c];
        if (v === 0) continue;
        ys[m] = v > 0 ? s[c] * v - off[c] : s[c] * v + off[c];
        ps[m++] = dims[c] * d;
      }
      let g = 0;
      for (; g + 4 <= m; g += 4) {
        const y0 = ys[g], y1 = ys[g + 1], y2 = ys[g + 2], y3 = ys[g + 3];
        const p0 = ps[g], p1 = ps[g + 1], p2 = ps[g + 2], p3 = ps[g + 3];
        for (let j = 0; j < d; j++) acc[j] = acc[j] + y0 * P[p0 + j] + y1 * P[p1 + j] + y2 * P[p2 + j] + y3 * P[p3 + j];
      }
      for (; g < m; g++) {
        const y = ys[g], p = ps[g];
        for (let j = 0; j < d; j++) acc[j] += y * P[p + j];
      }
      for (let j = 0; j < d; j++) out[at + j] += acc[j];
      return;
    }
    // Each code's value looked up (the alphabets' values made once): no branch on its sign.
    const { lo, size } = this.layout.alpha, deq = this.values(), base = this.valueAt!;
    for (let c = 0; c < D; c++) {
      const v = q[o + c], j = v - lo[c];
      out[at + dims[c]] += j >>> 0 < size[c] ? deq[base[c] + j] : v > 0 ? s[c] * v - off[c] : v < 0 ? s[c] * v + off[c] : 0;
    }
  }

  private deq?: Float64Array;
  private valueAt?: Int32Array;
  /** step_c · q − sgn(q) · c_c (f64) of every code q of every coded dimension's alphabet, at valueAt[c] + q − lo_c. */
  private values(): Float64Array {
    if (this.deq) return this.deq;
    const { lo, size } = this.layout.alpha, D = lo.length;
    const at = (this.valueAt = new Int32Array(D + 1));
    for (let c = 0; c < D; c++) at[c + 1] = at[c] + size[c];
    const deq = new Float64Array(at[D]);
    for (let c = 0; c < D; c++) {
      const s = this.stepOf[c], off = this.offsetOf[c];
      for (let j = 0; j < size[c]; j++) {
        const v = lo[c] + j;
        deq[at[c] + j] = v > 0 ? s * v - off : v < 0 ? s * v + off : 0;
      }
    }
    return (this.deq = deq);
  }

  private acc?: Float64Array;
  private scratch(): Float64Array {
    return (this.acc ??= new Float64Array(this.d));
  }

  private ys?: Float64Array;
  private ps?: Int32Array;
  /** The rotated layout's directions, and room for a row's nonzero coordinates. */
  private directions(): Float32Array {
    if (!this.ys) {
      const D = this.layout.dims.length;
      (this.ys = new Float64Array(D)), (this.ps = new Int32Array(D));
    }
    return this.layout.rotation!.values;
  }

  /** The section payload: header, models, offset table, then the blocks in place. */
  payload(): Uint8Array[] {
    const { blockRows, scaleBits, steps, offsets, alpha, models } = this.layout;
    const blocks: Uint8Array[] = [];
    for (let b = 0; b < this.blockCount; b++) {
      const { bytes, at, size } = this.blocks(b);
      blocks.push(bytes.subarray(at, at + size));
    }
    return writeSection(blockRows, scaleBits, steps, offsets, writeModels(alpha, models), blocks, this.layout.rotation);
  }

  /** The payload's size in bytes. */
  payloadBytes(): number {
    return this.payload().reduce((s, p) => s + p.length, 0);
  }
}

/**
 * The section's header, models and offset table (one view: they are small), read from a payload
 * of any size; the blocks stay where they lie, each reached through a view of its own bytes.
 */
function readLayout(payload: Payload, n: number, d: number, corrupt: (what: string) => Error): { layout: EcLayout; at: (b: number) => BlockRef } {
  const head = payload.view(0, sectionHeadBytes(payload.view(0, Math.min(payload.length, 24)), payload.length, n, d));
  const layout = readSection(head, n, d, corrupt, payload.length);
  const at = (b: number): BlockRef => {
    const size = layout.blockAt[b + 1] - layout.blockAt[b];
    return { bytes: payload.view(layout.blockAt[b], size), at: 0, size };
  };
  return { layout, at };
}

/** Blocks b0 .. b1 − 1 decoded on this thread (their rows × coded dimensions each), a damaged one named by its number. */
function decodeRange(layout: EcLayout, n: number, at: (b: number) => BlockRef, b0: number, b1: number, corrupt: (what: string) => Error): BlockCodes[] {
  const D = layout.dims.length;
  const dec = new BlockDecoder(layout.alpha, layout.models);
  const codes: BlockCodes[] = [];
  for (let b = b0; b < b1; b++) {
    const rows = Math.min(layout.blockRows, n - b * layout.blockRows), { bytes, at: o, size } = at(b);
    const fail = (what: string) => corrupt(`block ${b}: ${what}`);
    let q = dec.alloc(rows);
    if (!dec.decode(bytes, o, size, rows, q, fail)) dec.decode(bytes, o, size, rows, (q = new Int32Array(rows * D)), fail); // a code wider than int16
    codes.push(q);
  }
  return codes;
}

/** Rows a block of rowBlocks() holds by default: whole ec blocks, about this many rows. */
const ROWS_PER_READ = 1 << 16;

/** The 'RSDE' section's reader: every block decoded at open (a damaged one fails there, with its number). */
export const ecSection: ResidualSection = {
  tag: 'RSDE',
  payloadBytes: (): number | undefined => undefined, // the payload's own header and table say
  read(given, context, corrupt): EcResiduals {
    const { n, d } = context;
    // A payload of any size (past 4 GiB too): the head in one view, each block in a view of its own;
    // a large section that one view holds is decoded on several threads.
    const payload = asPayload(given);
    const { layout, at } = readLayout(payload, n, d, corrupt);
    const threads = n * layout.dims.length >= PARALLEL_MIN_SYMBOLS && payload.length <= MAX_TYPED_ELEMENTS ? decodeThreadCount() : 1;
    const codes = threads > 1 ? decodeBlocks(payload.bytes(), layout, n, threads, corrupt) : decodeRange(layout, n, at, 0, layout.blockAt.length - 1, corrupt);
    return new EcResiduals(n, d, layout, at, codes, corrupt);
  },
  rowBlocks(payload, { n, d }, corrupt, rowsHint = ROWS_PER_READ) {
    const { layout, at } = readLayout(payload, n, d, corrupt);
    const per = Math.max(1, Math.round(rowsHint / layout.blockRows)); // ec blocks per block of rows
    const rows = per * layout.blockRows, blocks = layout.blockAt.length - 1;
    return {
      rows,
      block(b) {
        const b0 = b * per, b1 = Math.min(blocks, b0 + per), r0 = b0 * layout.blockRows;
        // The ec blocks' bytes in one read; block j of these rows is block b0 + j of the section.
        const span = payload.view(layout.blockAt[b0], layout.blockAt[b1] - layout.blockAt[b0]);
        const local = (j: number): BlockRef => ({ bytes: span, at: layout.blockAt[b0 + j] - layout.blockAt[b0], size: layout.blockAt[b0 + j + 1] - layout.blockAt[b0 + j] });
        const m = Math.min(n, r0 + rows) - r0;
        const codes = decodeRange(layout, n, (j) => local(j - b0), b0, b1, corrupt);
        return new EcResiduals(m, d, layout, local, codes, corrupt);
      },
      // The blocks' bytes read from the payload one at a time (the last kept: a device's upload asks
      // for a block twice), none decoded here.
      coded() {
        let last: { b: number; ref: BlockRef } | undefined;
        const ref = (b: number): BlockRef => {
          if (last?.b !== b) last = { b, ref: at(b) };
          return last.ref;
        };
        return new EcResiduals(n, d, layout, ref, Array.from<undefined>({ length: blocks }), corrupt);
      },
    };
  },
};

/**
 * Every block of a section's payload decoded, in block order, on `threads` threads (the same codes
 * for any count: decode-threads.ts); a damaged block is refused with its number.
 */
export function decodeBlocks(payload: Uint8Array, layout: EcLayout, n: number, threads: number, corrupt: (what: string) => Error): BlockCodes[] {
  const blocks = layout.blockAt.length - 1, D = layout.dims.length;
  const dec = new BlockDecoder(layout.alpha, layout.models);
  const fail = (b: number) => (what: string) => corrupt(`block ${b}: ${what}`);
  if (threads > 1 && blocks > 1) return decodeBlocksOnThreads(payload, layout, n, dec, threads, fail);
  const codes: BlockCodes[] = [];
  for (let b = 0; b < blocks; b++) {
    const rows = Math.min(layout.blockRows, n - b * layout.blockRows), o = layout.blockAt[b], size = layout.blockAt[b + 1] - o;
    let q = dec.alloc(rows);
    if (!dec.decode(payload, o, size, rows, q, fail(b))) dec.decode(payload, o, size, rows, (q = new Int32Array(rows * D)), fail(b));
    codes.push(q);
  }
  return codes;
}
