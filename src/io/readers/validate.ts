// NaN and Inf would poison every distance computed from them, so they are refused up front,
// or (with --drop-invalid) their rows are removed and counted.
import { allocVectors, type Dataset } from '../dataset.js';
import { badInput } from './source.js';
import type { RawDataset } from './types.js';

function isBadRow(data: Float32Array | Uint16Array, f16: boolean, row: number, d: number): boolean {
  const base = row * d;
  if (f16) {
    // Exponent all ones = Inf or NaN.
    for (let k = 0; k < d; k++) if ((data[base + k] & 0x7c00) === 0x7c00) return true;
  } else {
    // x - x is 0 for every finite x and NaN for NaN and ±Inf.
    for (let k = 0; k < d; k++) {
      const x = data[base + k];
      if (x - x !== 0) return true;
    }
  }
  return false;
}

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
  // Readers that load straight into `data` scan each chunk while it is still in cache.
  const firstBad = firstBadRow ?? Math.floor(firstNonFinite(data, 0, n * d) / d);
  const alreadyDropped = raw.dropped ?? 0;
  if (firstBad < 0) return { ...raw, dropped: alreadyDropped };
  if (!dropInvalid) {
    const base = firstBad * d;
    let k = 0;
    while (k < d - 1 && !isBadRow(data.subarray(base + k, base + k + 1), f16, 0, 1)) k++;
    const v = f16 ? (data[base + k] & 0x3ff ? 'NaN' : 'Inf') : String(data[base + k]);
    throw badInput(name, `row ${firstBad} has a non-finite value (${v} in dimension ${k}); fix the data or pass --drop-invalid to skip such rows`);
  }
  // Keep the good rows, in order, in a fresh array of the exact size.
  const keep: number[] = [];
  for (let i = 0; i < n; i++) if (i < firstBad || !isBadRow(data, f16, i, d)) keep.push(i);
  if (keep.length === 0) throw badInput(name, `all ${n} rows have NaN or Inf values; nothing left after --drop-invalid`);
  const out = allocVectors(keep.length, d, raw.dtype);
  keep.forEach((row, j) => out.set(data.subarray(row * d, (row + 1) * d), j * d));
  return { ...raw, n: keep.length, data: out, dropped: alreadyDropped + n - keep.length };
}
