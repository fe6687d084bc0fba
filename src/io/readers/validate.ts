// Values vlc cannot compute with are refused up front, or (with --drop-invalid) their rows are
// removed and counted: NaN and Inf, which would poison every distance computed from them, and
// finite values so large that a squared distance overflows float32 (both backends compute
// distances in f32: a CPU SIMD kernel and CUDA kernels). The limit depends on d: the squared
// distance between two vectors with coordinates in [-M, M] is at most 4·M²·d, kept below 2^120
// (2^8 under f32's largest value, room for sums of a few such terms).
import { allocVectors, type Dataset } from '../dataset.js';
import { badInput } from './source.js';
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
export function firstSuspect(data: Float32Array | Uint16Array, from: number, to: number): number {
  if (data instanceof Uint16Array) {
    for (let i = from; i < to; i++) if ((data[i] & 0x7c00) === 0x7c00) return i;
    return -1;
  }
  const bits = new Int32Array(data.buffer, data.byteOffset, data.length);
  for (let i = from; i < to; i++) if ((bits[i] & 0x7f800000) >= SUSPECT_EXP_BITS) return i;
  return -1;
}

/** What is wrong with row `row` (undefined: its flagged values are large but within the limit). */
function rowProblem(raw: RawDataset, row: number, limit: number): string | undefined {
  const { d, data } = raw;
  const f16 = raw.dtype === 'f16';
  for (let k = 0; k < d; k++) {
    const v = data[row * d + k];
    if (f16 ? (v & 0x7c00) === 0x7c00 : !Number.isFinite(v)) {
      const shown = f16 ? (v & 0x3ff ? 'NaN' : 'Inf') : String(v);
      return `row ${row} has a non-finite value (${shown} in dimension ${k})`;
    }
  }
  if (f16) return undefined;
  for (let k = 0; k < d; k++) {
    const v = data[row * d + k];
    if (Math.abs(v) > limit)
      return (
        `row ${row} has a value too large to compute with (${v.toPrecision(4)} in dimension ${k}): distances are float32, ` +
        `which overflows beyond |x| = ${limit.toPrecision(3)} at d = ${d}; rescale the data`
      );
  }
  return undefined;
}

export function checkFinite(found: RawDataset, name: string, dropInvalid: boolean): Dataset {
  const { firstBadRow, ...raw } = found;
  const { n, d, data } = raw;
  const limit = maxAbsValue(d);
  /** The first row at or after `row` with a real problem, and what it is; row -1 for none. */
  const nextBad = (row: number, flagged?: number): { row: number; problem?: string } => {
    for (let r = flagged ?? Math.floor(firstSuspect(data, row * d, n * d) / d); r >= 0; r = Math.floor(firstSuspect(data, (r + 1) * d, n * d) / d)) {
      const problem = rowProblem(found, r, limit);
      if (problem) return { row: r, problem };
    }
    return { row: -1 };
  };
  // Readers that load straight into `data` scan each chunk while it is still in cache.
  const first = nextBad(0, firstBadRow);
  const alreadyDropped = raw.dropped ?? 0;
  if (first.row < 0) return { ...raw, dropped: alreadyDropped };
  if (!dropInvalid) throw badInput(name, `${first.problem}; fix the data or pass --drop-invalid to skip such rows`);
  // Keep the good rows, in order, in a fresh array of the exact size.
  const keep: number[] = [];
  for (let i = 0, bad = first.row; i < n; i++) {
    if (i !== bad) keep.push(i);
    else bad = nextBad(i + 1).row;
  }
  if (keep.length === 0) throw badInput(name, `all ${n} rows have NaN or Inf (or too large) values; nothing left after --drop-invalid`);
  const out = allocVectors(keep.length, d, raw.dtype);
  keep.forEach((row, j) => out.set(data.subarray(row * d, (row + 1) * d), j * d));
  return { ...raw, n: keep.length, data: out, dropped: alreadyDropped + n - keep.length };
}
