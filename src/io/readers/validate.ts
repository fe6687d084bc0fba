// NaN and Inf would poison every distance computed from them, so they are refused up front,
// or (with --drop-invalid) their rows are removed and counted.
import { allocVectors, type Dataset } from '../dataset.js';
import { badInput } from './source.js';
import type { RawDataset } from './types.js';

/**
 * Index of the first NaN/Inf element in data[from, to), or -1. A value is NaN or ±Inf exactly when
 * its exponent bits are all ones; testing that on the raw integer bits is a never-taken branch in
 * the common all-finite case (measured no slower than float tricks such as x - x !== 0).
 */
export function firstNonFinite(data: Float32Array | Uint16Array, from: number, to: number): number {
  if (data instanceof Uint16Array) {
    for (let i = from; i < to; i++) if ((data[i] & 0x7c00) === 0x7c00) return i;
    return -1;
  }
  const bits = new Int32Array(data.buffer, data.byteOffset, data.length);
  for (let i = from; i < to; i++) if ((bits[i] & 0x7f800000) === 0x7f800000) return i;
  return -1;
}

export function checkFinite(found: RawDataset, name: string, dropInvalid: boolean): Dataset {
  const { firstBadRow, ...raw } = found;
  const { n, d, data } = raw;
  const f16 = raw.dtype === 'f16';
  /** The first row at or after `row` holding NaN/Inf, or -1. */
  const badRowFrom = (row: number) => Math.floor(firstNonFinite(data, row * d, n * d) / d);
  // Readers that load straight into `data` scan each chunk while it is still in cache.
  const firstBad = firstBadRow ?? badRowFrom(0);
  const alreadyDropped = raw.dropped ?? 0;
  if (firstBad < 0) return { ...raw, dropped: alreadyDropped };
  if (!dropInvalid) {
    const base = firstBad * d;
    const k = firstNonFinite(data, base, base + d) - base;
    const v = f16 ? (data[base + k] & 0x3ff ? 'NaN' : 'Inf') : String(data[base + k]);
    throw badInput(name, `row ${firstBad} has a non-finite value (${v} in dimension ${k}); fix the data or pass --drop-invalid to skip such rows`);
  }
  // Keep the good rows, in order, in a fresh array of the exact size.
  const keep: number[] = [];
  for (let i = 0, bad = firstBad; i < n; i++) {
    if (i !== bad) keep.push(i);
    else bad = badRowFrom(i + 1);
  }
  if (keep.length === 0) throw badInput(name, `all ${n} rows have NaN or Inf values; nothing left after --drop-invalid`);
  const out = allocVectors(keep.length, d, raw.dtype);
  keep.forEach((row, j) => out.set(data.subarray(row * d, (row + 1) * d), j * d));
  return { ...raw, n: keep.length, data: out, dropped: alreadyDropped + n - keep.length };
}
