// The similarity a file is searched with (`--metric`): squared L2 distance (the default, and what
// every file written before the metric was recorded holds), inner product (the largest dot product
// is nearest) or cosine (the inner product of the vectors scaled to unit length; a zero vector's
// cosine to anything is 0). Here: the names and the row scaling cosine needs, used by every layer.
import { allocDataset, forEachF32Rows, inputDtypeOf, pieceRows, rows, type Dataset } from './dataset.js';

export const METRICS = ['l2', 'ip', 'cosine'] as const;
export type Metric = (typeof METRICS)[number];

/** What each metric ranks by, as messages and help say it. */
export const METRIC_HELP: Record<Metric, string> = {
  l2: 'squared Euclidean distance, smallest first',
  ip: 'inner product (dot product), largest first',
  cosine: 'cosine similarity, largest first (the vectors scaled to unit length; their norms are stored)',
};

export function isMetric(v: unknown): v is Metric {
  return typeof v === 'string' && (METRICS as readonly string[]).includes(v);
}

/** ‖row‖ of each of n rows of d values, in f64 summed in dimension order, rounded to f32. */
export function rowNorms(x: Float32Array, n: number, d: number, out = new Float32Array(n)): Float32Array {
  for (let i = 0, o = 0; i < n; i++, o += d) {
    let s = 0;
    for (let k = 0; k < d; k++) s += x[o + k] * x[o + k];
    out[i] = Math.sqrt(s);
  }
  return out;
}

/**
 * Each of n rows of x divided by its norm, in place (a zero row stays zero); returns x. `norms`:
 * the rows' norms when known (rowNorms).
 */
export function normalizeRows(x: Float32Array, n: number, d: number, norms?: Float32Array): Float32Array {
  for (let i = 0, o = 0; i < n; i++, o += d) {
    let len: number;
    if (norms) len = norms[i];
    else {
      let s = 0;
      for (let k = 0; k < d; k++) s += x[o + k] * x[o + k];
      len = Math.sqrt(s);
    }
    if (!(len > 0)) continue;
    const inv = 1 / len;
    for (let k = 0; k < d; k++) x[o + k] *= inv;
  }
  return x;
}

/**
 * Cosine's training data: the vectors of ds scaled to unit length, in a new f32 dataset (ds itself,
 * perhaps a caller's memory, is left as it is), with each row's norm and the count of zero rows
 * (kept as zero: a zero vector's cosine to anything is 0, and its norm 0 decodes it to zero again).
 */
export function unitDataset(ds: Dataset): { ds: Dataset; norms: Float32Array; zero: number } {
  const { n, d } = ds;
  const out = allocDataset(n, d, 'f32', ds.format);
  const norms = new Float32Array(n);
  let zero = 0;
  forEachF32Rows(ds, 0, n, (v, c0, c1) => {
    const dst = rows(out, c0, c1) as Float32Array;
    dst.set(v);
    rowNorms(dst, c1 - c0, d, norms.subarray(c0, c1));
    normalizeRows(dst, c1 - c0, d, norms.subarray(c0, c1));
  }, pieceRows(d, 'f32'));
  for (let i = 0; i < n; i++) if (norms[i] === 0) zero++;
  return {
    ds: { ...out, dropped: ds.dropped, ...(ds.droppedRows ? { droppedRows: ds.droppedRows } : {}), inputDtype: inputDtypeOf(ds) },
    norms,
    zero,
  };
}
