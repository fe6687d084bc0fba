// The original vectors as the quality figures read them: in memory (a Dataset or an array), or
// read by the caller a block of rows at a time (eval of a file larger than memory: the .npy or
// .fvecs read where it lies, api/evaluate.ts). Rows asked in ascending order — every pass of the
// figures — come from one block held at a time; the few rows asked out of order (the queries) are
// gathered.
import { asRows, pieceRows, rowInto, rowsF32, type VectorsLike } from '../vectors/dataset.js';

/** Original vectors read a block of rows at a time by the caller. */
export interface RowsReader {
  readonly n: number;
  readonly d: number;
  /** The largest |x| over every row (as vectors/scale.ts maxAbsOf gives it of all rows). */
  maxAbs(): number;
  /** Rows [r0, r1) as f32 into out ((r1 − r0) × d). */
  read(r0: number, r1: number, out: Float32Array): void;
  /** The listed rows, in that order, as f32 into out. */
  gather(list: readonly number[], out: Float32Array): void;
}

export type Originals = VectorsLike | RowsReader;

export function isRowsReader(x: Originals): x is RowsReader {
  return typeof (x as RowsReader).gather === 'function';
}

/** Floats of the block a RowsReader's rows are read in (16 MiB). */
const READ_FLOATS = 1 << 22;
let readFloats = READ_FLOATS;

/** Tests: read a RowsReader's rows in blocks of `floats` (undefined restores the default). */
export function setReadFloatsForTests(floats?: number): void {
  readFloats = floats ?? READ_FLOATS;
}

/** Row i of the originals into `out` (f32, length d); from a RowsReader, rows in ascending order read a block at a time. */
export function rowGetter(x: Originals, n: number, d: number): (i: number, out: Float32Array) => void {
  if (!isRowsReader(x)) {
    const rows = asRows(x, n, d);
    return (i, out) => void rowInto(rows, i, out);
  }
  const per = Math.max(1, Math.floor(readFloats / d));
  let buf: Float32Array | undefined;
  let held = -1;
  return (i, out) => {
    const b0 = i - (i % per);
    if (b0 !== held) {
      buf ??= new Float32Array(Math.min(n, per) * d);
      x.read(b0, Math.min(n, b0 + per), buf);
      held = b0;
    }
    out.set(buf!.subarray((i - b0) * d, (i - b0 + 1) * d));
  };
}

/**
 * Rows [r0, r1) of the originals as f32 (r1 − r0 at most `out`'s rows): read by a RowsReader into
 * `out`, or from memory a view of f32 data or f16 decoded into `out`. Rows in any order.
 */
export function rangeGetter(x: Originals, n: number, d: number): (r0: number, r1: number, out: Float32Array) => Float32Array {
  if (isRowsReader(x)) {
    return (r0, r1, out) => {
      const v = out.subarray(0, (r1 - r0) * d);
      x.read(r0, r1, v);
      return v;
    };
  }
  const rows = asRows(x, n, d);
  const per = pieceRows(d, rows.dtype); // the most rows one view holds
  return (r0, r1, out) => {
    if (r1 - r0 <= per) return rowsF32(rows, r0, r1, out);
    for (let c0 = r0; c0 < r1; c0 += per) {
      const c1 = Math.min(r1, c0 + per), at = (c0 - r0) * d;
      out.set(rowsF32(rows, c0, c1, out.subarray(at)), at);
    }
    return out.subarray(0, (r1 - r0) * d);
  };
}
