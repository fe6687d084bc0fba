// How far a compressed file's reconstructions are from the original vectors: the figures every
// command reports under the same names (compress, info, eval; docs/json.md).
import { rangeGetter, rowGetter, type Originals } from './originals.js';
import { rowAt, rowCount, type Rows } from './sample.js';

/** Writes vector i's reconstruction into `out` (length d). */
export type DecodeRow = (i: number, out: Float32Array) => void;

export interface ReconstructionQuality {
  /** Mean over vectors of ‖x − x̂‖² (squared L2, summed over dimensions): the training "energy" of the reconstruction. */
  mse: number;
  /** ‖X − X̂‖_F / ‖X‖_F over the measured vectors. */
  relative_error: number;
  /** Mean cosine similarity between each vector and its reconstruction (1 when both are zero). */
  mean_cosine: number;
  /** How many vectors were measured (n when exact). */
  measured: number;
}

/** Rows between two progress reports (the loop runs in line: each report draws the progress line). */
const REPORT_EVERY = 1 << 16;

/**
 * The figures summed a row at a time, in the order rows are added: from each row's Σ (x − x̂)²,
 * Σ x², Σ x̂², Σ x·x̂ (f64, over k in order). The host's loop below and the GPU's residual encoder
 * (backend/cuda/residual.ts, which makes the same row sums on the device: figuresFromRowSums) both
 * end here, so the same rows give the same figures to the bit.
 */
export class FigureSums {
  private sqErr = 0;
  private sqNorm = 0;
  private cosSum = 0;
  private count = 0;

  add(e: number, xx: number, rr: number, xr: number): void {
    this.sqErr += e;
    this.sqNorm += xx;
    this.cosSum += xx === 0 && rr === 0 ? 1 : xx === 0 || rr === 0 ? 0 : xr / Math.sqrt(xx * rr);
    this.count++;
  }

  figures(): ReconstructionQuality {
    const { sqErr, sqNorm, cosSum, count } = this;
    return {
      mse: count ? sqErr / count : 0,
      relative_error: sqNorm > 0 ? Math.sqrt(sqErr / sqNorm) : 0,
      mean_cosine: count ? cosSum / count : 1,
      measured: count,
    };
  }
}

/** The figures from row sums made elsewhere (4 per row: Σ (x − x̂)², Σ x², Σ x̂², Σ x·x̂), added in their order. */
export function figuresFromRowSums(sums: Float64Array): ReconstructionQuality {
  const f = new FigureSums();
  for (let r = 0; r + 3 < sums.length; r += 4) f.add(sums[r], sums[r + 1], sums[r + 2], sums[r + 3]);
  return f.figures();
}

/** Rows [r0, r1) decoded into out ((r1 − r0) × d, row-major), each as DecodeRow gives it. */
export type DecodeRange = (r0: number, r1: number, out: Float32Array) => void;

/**
 * The figures over `rows` of the n×d vectors x (all rows when null; in memory, or read by the caller
 * in blocks), accumulated in f64. Over all rows with `decodeRange`, the rows are decoded and read a
 * chunk at a time (no call, copy or view per row); the sums are the same, in the same order.
 */
export function reconstructionQuality(
  xs: Originals, n: number, d: number, decode: DecodeRow, rows: Rows = null, onRows?: (done: number, total: number) => void, decodeRange?: DecodeRange,
): ReconstructionQuality {
  const sums = new FigureSums();
  if (rows === null && decodeRange) {
    const chunk = Math.max(1, Math.floor(CHUNK_FLOATS / Math.max(1, d)));
    const r = new Float32Array(Math.min(n, chunk) * d);
    const x = new Float32Array(r.length);
    const original = rangeGetter(xs, n, d);
    for (let r0 = 0; r0 < n; r0 += chunk) {
      const r1 = Math.min(n, r0 + chunk);
      decodeRange(r0, r1, r);
      const xv = original(r0, r1, x);
      for (let o = 0; o < (r1 - r0) * d; o += d) addRow(sums, xv, r, o, d);
      if (onRows && Math.floor(r1 / REPORT_EVERY) > Math.floor(r0 / REPORT_EVERY)) onRows(r1, n);
    }
    return sums.figures();
  }
  const original = rowGetter(xs, n, d);
  const count = rowCount(rows, n);
  const r = new Float32Array(d);
  const xi = new Float32Array(d);
  for (let s = 0; s < count; s++) {
    const i = rowAt(rows, s);
    decode(i, r);
    original(i, xi);
    addRow(sums, xi, r, 0, d);
    if (onRows && (s + 1) % REPORT_EVERY === 0) onRows(s + 1, count);
  }
  return sums.figures();
}

/** Floats a chunk of decoded rows holds (4 MiB; the originals' chunk beside it). */
const CHUNK_FLOATS = 1 << 20;

/** One row's four sums (original x, reconstruction r, both from offset o), over k in order, into `sums`. */
function addRow(sums: FigureSums, x: Float32Array, r: Float32Array, o: number, d: number): void {
  let e = 0;
  let xx = 0;
  let rr = 0;
  let xr = 0;
  for (let k = o; k < o + d; k++) {
    const a = x[k];
    const b = r[k];
    e += (a - b) * (a - b);
    xx += a * a;
    rr += b * b;
    xr += a * b;
  }
  sums.add(e, xx, rr, xr);
}
