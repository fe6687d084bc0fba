// Gathers rows that arrive in pieces (Arrow batches, Parquet row groups, JSONL lines). When the
// reader knows the row count up front (Arrow file footers, Parquet metadata) the rows go straight
// into the final shared memory; otherwise they are gathered in chunks and copied once at the end.
import { allocStore, elements, f32ToF16, pieceRows, type VectorDtype, type VectorStore } from '../../vectors/dataset.js';

import { firstSuspect } from './validate.js';

/** Elements copied (then scanned) at a time: 1 MiB of f32, comfortably inside L2. */
const SCAN_PIECE = 1 << 18;

type Values = Float32Array | Float64Array | Uint16Array | ArrayLike<number>;
type Chunk = { store: VectorStore; rows: number; capacity: number };

export class RowCollector {
  rows = 0;
  private firstBad = -1;
  private readonly chunks: Chunk[] = [];
  private readonly rowsPerChunk: number;
  /** Rows written through one view of a chunk. */
  private readonly perView: number;

  /** `expectedRows`: the count announced by the file, when known (more or fewer rows still work). */
  constructor(readonly d: number, readonly dtype: VectorDtype, expectedRows?: number) {
    this.perView = pieceRows(d, dtype);
    this.rowsPerChunk = Math.max(1, Math.min(this.perView, Math.floor((8 << 20) / (d * (dtype === 'f32' ? 4 : 2)))));
    if (expectedRows !== undefined && expectedRows > 0)
      this.chunks.push({ store: allocStore(expectedRows, d, dtype), rows: 0, capacity: expectedRows });
  }

  /**
   * Append k rows held in values[start .. start + k*d). For an f16 collector, a Uint16Array
   * holds half bits (copied as is) and plain numbers are rounded to half.
   */
  append(values: Values, start: number, k: number): void {
    const d = this.d;
    let done = 0;
    while (done < k) {
      let chunk = this.chunks[this.chunks.length - 1];
      if (!chunk || chunk.rows === chunk.capacity) {
        chunk = { store: allocStore(this.rowsPerChunk, d, this.dtype), rows: 0, capacity: this.rowsPerChunk };
        this.chunks.push(chunk);
      }
      const take = Math.min(k - done, chunk.capacity - chunk.rows, this.perView);
      const from = start + done * d;
      const to = from + take * d;
      const dst = elements(chunk.store, chunk.rows * d, take * d);
      const roundToHalf = this.dtype === 'f16' && !(values instanceof Uint16Array);
      if (!roundToHalf && ArrayBuffer.isView(values)) {
        // Typed source: copy in cache-sized pieces, scanning each for NaN/Inf while still in cache.
        const view = values as Float32Array;
        for (let p = from; p < to; p += SCAN_PIECE) {
          const q = Math.min(to, p + SCAN_PIECE);
          dst.set(view.subarray(p, q), p - from);
          if (this.firstBad < 0) this.noteBad(firstSuspect(dst, p - from, q - from), chunk);
        }
      } else {
        // Plain numbers (JSON lines, Parquet rows), or rounding to half: element by element.
        const nums = values as ArrayLike<number>;
        for (let i = from; i < to; i++) dst[i - from] = roundToHalf ? f32ToF16(nums[i]) : nums[i];
        if (this.firstBad < 0) this.noteBad(firstSuspect(dst, 0, take * d), chunk);
      }
      chunk.rows += take;
      this.rows += take;
      done += take;
    }
  }

  /** Index of the first collected row holding NaN/Inf, or -1 (scanned while appending). */
  get firstBadRow(): number {
    return this.firstBad;
  }

  /** `element` counts from the start of the rows being appended to `chunk` (its rows so far). */
  private noteBad(element: number, chunk: Chunk): void {
    if (element < 0) return;
    const rowsBefore = this.rows - chunk.rows; // rows in earlier chunks
    this.firstBad = rowsBefore + chunk.rows + Math.floor(element / this.d);
  }

  /** All rows in one store, with their dtype: the preallocated one when the count was right, else a copy. */
  finish(): VectorStore {
    const first = this.chunks[0];
    if (this.chunks.length === 1 && first.rows === first.capacity) return first.store;
    const out = allocStore(this.rows, this.d, this.dtype);
    let at = 0;
    while (this.chunks.length > 0) {
      const chunk = this.chunks.shift()!; // released as soon as it is copied
      for (let r0 = 0; r0 < chunk.rows; r0 += this.perView) {
        const k = Math.min(this.perView, chunk.rows - r0);
        elements(out, at, k * this.d).set(elements(chunk.store, r0 * this.d, k * this.d));
        at += k * this.d;
      }
    }
    return out;
  }
}

/**
 * A row count claimed by a file (a Parquet footer) decides an up-front allocation only when the
 * file could plausibly hold that many rows: pages can encode repeated values in far fewer bytes
 * than they decode to (dictionary, RLE), so a larger claim is gathered as rows actually arrive.
 */
export function plausibleRows(claimed: number, d: number, inputBytes: number): number | undefined {
  return claimed * d * 4 <= 64 * inputBytes + (64 << 20) ? claimed : undefined;
}
