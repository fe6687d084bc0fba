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
import { decodeBlock, readSection, writeSection, type EcLayout } from './blocks.js';
import { writeModels } from './model.js';

/** A block's bytes: bytes[at .. at + size). */
interface BlockRef {
  bytes: Uint8Array;
  at: number;
  size: number;
}

export class EcResiduals {
  readonly mode = 'ec' as const;
  private cached = -1;
  private q: Int32Array;
  private readonly stepOf: Float32Array;
  private readonly offsetOf: Float32Array;

  constructor(
    readonly n: number,
    readonly d: number,
    readonly layout: EcLayout,
    /** Block b's bytes. */
    private readonly blocks: (b: number) => BlockRef,
    /** The error a damaged block is reported with. */
    private readonly corrupt: (what: string) => Error = (what) => new Error(`ec residuals: ${what}`),
  ) {
    this.q = new Int32Array(Math.min(n, layout.blockRows) * layout.dims.length);
    this.stepOf = Float32Array.from(layout.dims, (k) => layout.steps[k]);
    this.offsetOf = Float32Array.from(layout.dims, (k) => layout.offsets[k]);
  }

  get blockCount(): number {
    return this.layout.blockAt.length - 1;
  }

  /** The codes of block b (rows × coded dimensions), decoded into `out` (or a fresh array). */
  decodeBlock(b: number, out?: Int32Array): Int32Array {
    const { blockRows, dims, alpha, models } = this.layout;
    const rows = Math.min(blockRows, this.n - b * blockRows);
    const q = out ?? new Int32Array(rows * dims.length);
    const { bytes, at, size } = this.blocks(b);
    decodeBlock(bytes, at, size, rows, alpha, models, q, (what) => this.corrupt(`block ${b}: ${what}`));
    return q;
  }

  /** Adds vector i's decoded residual to out[at .. at + d), which holds its anchor. */
  addTo(i: number, out: Float32Array, at = 0): void {
    const { blockRows, dims } = this.layout;
    const b = Math.floor(i / blockRows);
    if (b !== this.cached) {
      this.cached = -1; // a block that fails to decode is not left half-cached
      this.decodeBlock(b, this.q);
      this.cached = b;
    }
    const D = dims.length, o = (i - b * blockRows) * D, q = this.q, s = this.stepOf, off = this.offsetOf;
    for (let c = 0; c < D; c++) {
      const v = q[o + c];
      out[at + dims[c]] += v > 0 ? s[c] * v - off[c] : v < 0 ? s[c] * v + off[c] : 0;
    }
  }

  /** The section payload: header, models, offset table, then the blocks in place. */
  payload(): Uint8Array[] {
    const { blockRows, scaleBits, steps, offsets, alpha, models } = this.layout;
    const blocks: Uint8Array[] = [];
    for (let b = 0; b < this.blockCount; b++) {
      const { bytes, at, size } = this.blocks(b);
      blocks.push(bytes.subarray(at, at + size));
    }
    return writeSection(blockRows, scaleBits, steps, offsets, writeModels(alpha, models), blocks);
  }

  /** The payload's size in bytes. */
  payloadBytes(): number {
    return this.payload().reduce((s, p) => s + p.length, 0);
  }
}

/** The 'RSDE' section: read, every block decoded once to check it, so a damaged file fails at open. */
export const ecSection = {
  tag: 'RSDE',
  payloadBytes: (): number | undefined => undefined, // the payload's own header and table say
  read(payload: Uint8Array, context: { n: number; d: number }, corrupt: (what: string) => Error): EcResiduals {
    const { n, d } = context;
    const layout = readSection(payload, n, d, corrupt);
    const res = new EcResiduals(n, d, layout, (b) => ({ bytes: payload, at: layout.blockAt[b], size: layout.blockAt[b + 1] - layout.blockAt[b] }), corrupt);
    const scratch = new Int32Array(Math.min(n, layout.blockRows) * layout.dims.length);
    for (let b = 0; b < res.blockCount; b++) res.decodeBlock(b, scratch.subarray(0, Math.min(layout.blockRows, n - b * layout.blockRows) * layout.dims.length));
    return res;
  },
};
