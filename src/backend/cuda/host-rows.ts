// The host side of a CUDA engine's rows: every row of a dataset, or the listed rows of one (a
// training sample, init's subset) read in place through the list — row i of the engine is row
// list[i] of the dataset — so that opening an engine on a sample makes no host copy of it. The
// resident upload gathers the listed rows a bounded chunk at a time (chunks()); row() and the
// screen's mean read the parent's rows. Streamed engines (spans.ts tiles) copy tiles from
// contiguous host memory: for them the listed rows are gathered into a host copy first
// (contiguous()), as every engine on a sample did before.
import { elementBytes, gatherRows, listedRowsF32, rowF32, rowsF32, selectRows, type Dataset } from '../../vectors/dataset.js';

export class HostRows {
  readonly n: number;
  readonly d: number;
  readonly dtype: 'f32' | 'f16';

  /** Rows of `ds`: all of them, or those of `list` (indices into ds, in the order given). */
  constructor(
    readonly ds: Dataset,
    readonly list?: Int32Array,
  ) {
    this.n = list ? list.length : ds.n;
    this.d = ds.d;
    this.dtype = ds.dtype;
    if (list) checkRows(list, ds.n);
  }

  get rowBytes(): number {
    return this.d * elementBytes(this.dtype);
  }

  /** Row i (of these rows) as a fresh f32 array. */
  row(i: number): Float32Array {
    return rowF32(this.ds, this.list ? this.list[i] : i);
  }

  /** The listed rows (of these rows) as f32, one after another, into `out` (else a fresh array). */
  listed(rows: ArrayLike<number>, out?: Float32Array): Float32Array {
    const { list } = this;
    if (list) for (let k = 0; k < rows.length; k++) if (!(rows[k] >= 0 && rows[k] < this.n)) throw new Error(`row ${rows[k]} out of range 0..${this.n - 1}`);
    return listedRowsF32(this.ds, list ? Int32Array.from(rows, (k) => list[k]) : rows, out);
  }

  /** Row i (of these rows) in f32: a view of f32 data (do not write to it), or decoded into `scratch` (d values). */
  rowView(i: number, scratch: Float32Array): Float32Array {
    const j = this.list ? this.list[i] : i;
    return rowsF32(this.ds, j, j + 1, scratch);
  }

  /** The listed rows of these rows (indices into them), still read in place. */
  subset(rows: Int32Array): HostRows {
    const { list } = this;
    return new HostRows(this.ds, list ? rows.map((k) => list[k]) : rows);
  }

  /** These rows in contiguous host memory: themselves, or a gathered copy of the listed rows. */
  contiguous(): HostRows {
    return this.list ? new HostRows(selectRows(this.ds, this.list)) : this;
  }

  /**
   * The bytes of every row, in order, as consecutive pieces of at most `step` bytes (at least one
   * row when listed): views of contiguous rows, or listed rows gathered into ONE reused scratch
   * buffer — use each piece before asking for the next. Yields [bytes, byte offset].
   */
  *chunks(step: number): Generator<[Uint8Array, number]> {
    const { ds, list, rowBytes } = this;
    const total = this.n * rowBytes;
    if (!list) {
      for (let off = 0; off < total; off += step) yield [new Uint8Array(ds.buffer, ds.byteOffset + off, Math.min(step, total - off)), off];
      return;
    }
    const per = Math.max(1, Math.floor(step / rowBytes));
    const scratch = new Uint8Array(Math.min(per, this.n) * rowBytes);
    for (let r0 = 0; r0 < this.n; r0 += per) {
      const r1 = Math.min(this.n, r0 + per);
      gatherRows(ds, list, r0, r1, scratch);
      yield [scratch.subarray(0, (r1 - r0) * rowBytes), r0 * rowBytes];
    }
  }
}

/** Every listed row inside 0..n − 1 (an indexed loop: 16.8M sample rows took 0.35 s through for…of). */
function checkRows(list: Int32Array, n: number): void {
  for (let k = 0; k < list.length; k++) {
    const i = list[k];
    if (!(i >= 0 && i < n)) throw new Error(`row ${i} out of range 0..${n - 1}`);
  }
}
