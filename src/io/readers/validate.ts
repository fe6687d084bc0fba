// Values vlc cannot compute with are refused up front, or (with --drop-invalid) their rows are
// removed and counted: NaN and Inf, which would poison every distance computed from them, and
// finite values so large that a squared distance overflows float32 (both backends compute
// distances in f32: a CPU SIMD kernel and CUDA kernels). The limit depends on d: the squared
// distance between two vectors with coordinates in [-M, M] is at most 4·M²·d, kept below 2^120
// (2^8 under f32's largest value, room for sums of a few such terms). The rows are scanned a view
// at a time (they may be more than a typed array holds: ../dataset.ts).
import { allocStore, elements, pieceRows, rows, type Dataset, type VectorView } from '../../vectors/dataset.js';
import { composeDropped } from '../../vectors/row-ids.js';
import type { UsageError } from '../../errors.js';
import { badInput } from './source.js';

/** The error for rows vlc cannot compute with, where --drop-invalid was not given: the problem, and the way out. */
export function badRows(src: { name: string } | string, problem: string): UsageError {
  return badInput(src, `${problem}; fix the data or pass --drop-invalid to skip such rows`);
}
import type { RawDataset } from './types.js';

/** log2 of the largest squared distance allowed (f32's largest value is just under 2^128). */
const SQUARED_DISTANCE_EXP = 120;

/** The largest |x| vlc accepts for d-dimensional vectors: 4·M²·d <= 2^120. */
export function maxAbsValue(d: number): number {
  return 2 ** ((SQUARED_DISTANCE_EXP - 2 - Math.log2(d)) / 2);
}

/**
 * Below this magnitude a value is always fine (2^48 ≈ 2.8e14; maxAbsValue(d) is larger for
 * every d below 2^22). Scans flag values at or above it, cheaply, by their exponent bits; the
 * exact per-d check then runs on the (rare) flagged rows only.
 */
const SUSPECT_EXP_BITS = (127 + 48) << 23;

/**
 * Index of the first element in data[from, to) that is NaN, ±Inf, or so large (|x| >= 2^48) that
 * it needs the exact check of checkFinite; -1 for none. Testing exponent bits on the raw integer
 * view is a never-taken branch in the common case (measured no slower than float tricks).
 * f16 data (|x| <= 65504) can only hold NaN/Inf.
 */
export function firstSuspect(data: VectorView, from: number, to: number): number {
  if (data instanceof Uint16Array) {
    for (let i = from; i < to; i++) if ((data[i] & 0x7c00) === 0x7c00) return i;
    return -1;
  }
  const bits = new Int32Array(data.buffer, data.byteOffset, data.length);
  for (let i = from; i < to; i++) if ((bits[i] & 0x7f800000) >= SUSPECT_EXP_BITS) return i;
  return -1;
}

/** The first row at or after `row` with a suspect value, or -1 (scanned view by view). */
function suspectRowFrom(ds: Dataset, row: number): number {
  const per = pieceRows(ds.d, ds.dtype);
  for (let r0 = row; r0 < ds.n; r0 += per) {
    const r1 = Math.min(ds.n, r0 + per);
    const bad = firstSuspect(rows(ds, r0, r1), 0, (r1 - r0) * ds.d);
    if (bad >= 0) return r0 + Math.floor(bad / ds.d);
  }
  return -1;
}

/** What is wrong with row `row` (undefined: its flagged values are large but within the limit). */
function rowProblem(ds: Dataset, row: number, limit: number, rowOffset = 0): string | undefined {
  const { d } = ds;
  const data = rows(ds, row, row + 1);
  const f16 = ds.dtype === 'f16';
  for (let k = 0; k < d; k++) {
    const v = data[k];
    if (f16 ? (v & 0x7c00) === 0x7c00 : !Number.isFinite(v)) {
      const shown = f16 ? (v & 0x3ff ? 'NaN' : 'Inf') : String(v);
      return `row ${rowOffset + row} has a non-finite value (${shown} in dimension ${k})`;
    }
  }
  if (f16) return undefined;
  for (let k = 0; k < d; k++) {
    const v = data[k];
    if (Math.abs(v) > limit)
      return (
        `row ${rowOffset + row} has a value too large to compute with (${v.toPrecision(4)} in dimension ${k}): distances are float32, ` +
        `which overflows beyond |x| = ${limit.toPrecision(3)} at d = ${d}; rescale the data`
      );
  }
  return undefined;
}

/**
 * What is wrong with the first bad row of `ds`, rows numbered from `rowOffset` (a block of a larger
 * input, read by io/readers/blocks.ts), with the same words as checkFinite; undefined: none.
 */
export function blockProblem(ds: Dataset, rowOffset: number): string | undefined {
  const limit = maxAbsValue(ds.d);
  for (let r = suspectRowFrom(ds, 0); r >= 0; r = suspectRowFrom(ds, r + 1)) {
    const problem = rowProblem(ds, r, limit, rowOffset);
    if (problem) return problem;
  }
  return undefined;
}

export function checkFinite(found: RawDataset, name: string, dropInvalid: boolean): Dataset {
  const { firstBadRow, ...raw } = found;
  const ds: Dataset = { ...raw, dropped: raw.dropped ?? 0, ...(raw.dropped ? { droppedRows: raw.droppedRows ?? [] } : {}) };
  const { n, d } = ds;
  const limit = maxAbsValue(d);
  /** The first row at or after `row` with a real problem, and what it is; row -1 for none. */
  const nextBad = (row: number, flagged?: number): { row: number; problem?: string } => {
    for (let r = flagged ?? suspectRowFrom(ds, row); r >= 0; r = suspectRowFrom(ds, r + 1)) {
      const problem = rowProblem(ds, r, limit);
      if (problem) return { row: r, problem };
    }
    return { row: -1 };
  };
  // Readers that load straight into memory scan each chunk while it is still in cache.
  const first = nextBad(0, firstBadRow);
  if (first.row < 0) return ds;
  if (!dropInvalid) throw badRows(name, first.problem!);
  // Keep the good rows, in order, in fresh memory of the exact size.
  const bad: number[] = [];
  for (let r = first.row; r >= 0; r = nextBad(r + 1).row) bad.push(r);
  const kept = n - bad.length;
  if (kept === 0) throw badInput(name, `all ${n} rows have NaN or Inf (or too large) values; nothing left after --drop-invalid`);
  const out = allocStore(kept, d, ds.dtype);
  let at = 0; // rows written
  let from = 0; // next row to keep
  for (const b of [...bad, n]) {
    // Copy the good run [from, b) in view-sized pieces.
    for (let r0 = from; r0 < b; ) {
      const r1 = Math.min(b, r0 + pieceRows(d, ds.dtype));
      elements(out, at * d, (r1 - r0) * d).set(rows(ds, r0, r1));
      at += r1 - r0;
      r0 = r1;
    }
    from = b + 1;
  }
  // Input ids: the reader's own drops (null rows) come first; `bad` counts among the rows it kept.
  const droppedRows = composeDropped(ds.droppedRows ?? [], bad);
  return { ...ds, ...out, n: kept, dropped: droppedRows.length, droppedRows };
}
