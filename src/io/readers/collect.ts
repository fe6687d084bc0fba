// Gathers rows that arrive in pieces (Arrow batches, Parquet row groups, JSONL lines) when the
// total count is not known up front, then moves them into one shared array.
import { allocVectors, f32ToF16, type VectorDtype } from '../dataset.js';

type Values = Float32Array | Float64Array | Uint16Array | ArrayLike<number>;

export class RowCollector {
  rows = 0;
  private readonly chunks: (Float32Array | Uint16Array)[] = [];
  private readonly rowsPerChunk: number;
  private filled = 0; // rows used in the last chunk

  constructor(readonly d: number, readonly dtype: VectorDtype) {
    this.rowsPerChunk = Math.max(1, Math.floor((8 << 20) / (d * (dtype === 'f32' ? 4 : 2))));
  }

  /**
   * Append k rows held in values[start .. start + k*d). For an f16 collector, a Uint16Array
   * holds half bits (copied as is) and plain numbers are rounded to half.
   */
  append(values: Values, start: number, k: number): void {
    const d = this.d;
    let done = 0;
    while (done < k) {
      if (this.chunks.length === 0 || this.filled === this.rowsPerChunk) {
        const len = this.rowsPerChunk * d;
        this.chunks.push(this.dtype === 'f32' ? new Float32Array(len) : new Uint16Array(len));
        this.filled = 0;
      }
      const chunk = this.chunks[this.chunks.length - 1];
      const take = Math.min(k - done, this.rowsPerChunk - this.filled);
      const from = start + done * d;
      const to = from + take * d;
      const at = this.filled * d;
      const halfBitsIntoNumbers = this.dtype === 'f16' && !(values instanceof Uint16Array);
      if (halfBitsIntoNumbers) {
        for (let i = from; i < to; i++) chunk[at + i - from] = f32ToF16((values as ArrayLike<number>)[i]);
      } else if (ArrayBuffer.isView(values)) {
        chunk.set((values as Float32Array).subarray(from, to), at);
      } else {
        for (let i = from; i < to; i++) chunk[at + i - from] = values[i];
      }
      this.filled += take;
      this.rows += take;
      done += take;
    }
  }

  /** All rows in one shared array (the pieces are released as they are copied). */
  finish(): Float32Array | Uint16Array {
    const out = allocVectors(this.rows, this.d, this.dtype);
    let at = 0;
    while (this.chunks.length > 0) {
      const chunk = this.chunks.shift()!;
      const len = this.chunks.length === 0 ? this.filled * this.d : chunk.length;
      out.set(chunk.subarray(0, len), at);
      at += len;
    }
    return out;
  }
}
