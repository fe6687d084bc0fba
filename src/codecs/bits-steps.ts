// The 'bits' encoder's step table (bits-train.ts): for every dimension and bit count, the step with
// the least squared error on the residual sample. Dimensions are independent, so with a large sample
// they are shared among threads (dims-on-threads.ts): each writes its dimensions' rows of the table,
// and the table is the one thread's, whatever claimed what.
import { MAX_BITS, levelOffset } from './bits.js';
import { dimsThreadCount, onDimensions, resultsF64, sharedF64, type DimWork } from './dims-on-threads.js';

/** Candidate ranges, in RMS residuals of the dimension (the largest |r| is tried too). */
const RANGES = [1, 1.5, 2, 2.6, 3, 3.5, 4, 5, 6, 8];

export interface StepTable {
  /** err[k·9 + b]: the sample's squared error of dimension k at b bits (b = 0: no code, r̂ = 0). */
  err: Float64Array;
  /** step[k·9 + b]: the step that gives it. */
  step: Float64Array;
}

/** The table's work as a worker receives it: the sample (rows × d) and the table's arrays, shared. */
export interface StepsTask {
  kind: 'bits-steps';
  sample: Float64Array;
  d: number;
  err: Float64Array;
  step: Float64Array;
}

/** The step table of `sample` (rows × d, row-major), on `threads` threads (this one included). */
export function stepTable(sample: Float64Array, d: number, threads = dimsThreadCount(sample.length)): StepTable {
  const W = MAX_BITS + 1;
  const t = d > 1 ? threads : 1;
  const task: StepsTask = { kind: 'bits-steps', sample: t > 1 ? sharedF64(sample) : sample, d, err: resultsF64(d * W, t), step: resultsF64(d * W, t) };
  onDimensions(task, d, t, stepsWork(task));
  return { err: Float64Array.from(task.err), step: Float64Array.from(task.step) };
}

/** A thread's work on the table: dimension k's row (tableDimension), its column scratch made once. */
export function stepsWork(task: StepsTask): DimWork {
  const col = new Float64Array(task.sample.length / Math.max(1, task.d));
  return (k) => tableDimension(task.sample, task.d, k, col, task);
}

/** Dimension k's row of the table: for each bit count, every candidate range's error, the least kept (ties: the first). */
function tableDimension(sample: Float64Array, d: number, k: number, col: Float64Array, { err, step }: StepTable): void {
  const rows = col.length;
  let sq = 0, mx = 0;
  for (let j = 0; j < rows; j++) {
    const r = (col[j] = sample[j * d + k]);
    sq += r * r;
    if (Math.abs(r) > mx) mx = Math.abs(r);
  }
  err[k * (MAX_BITS + 1)] = sq;
  const rms = Math.sqrt(sq / Math.max(1, rows));
  for (let b = 1; b <= MAX_BITS; b++) {
    let best = Infinity, bestStep = 0;
    const L = (1 << b) - 1, off = levelOffset(b);
    let last = -1; // a range equal to the one before (several clip at the largest |r|) cannot win: ties keep the first
    if (mx > 0)
      for (const range of [...RANGES.map((c) => Math.min(mx, c * rms)), mx]) {
        const s = Math.fround((2 * range) / L);
        if (!(s > 0) || s === last) continue;
        last = s;
        let e = 0;
        for (let j = 0; j < rows; j++) {
          // The code as bits-rows.ts computes it: this loop is most of the encoder's time.
          const v = col[j];
          let q = Math.round(v / s) + off;
          q = q < 0 ? 0 : q > L ? L : q;
          const t = v - s * (q - off);
          e += t * t;
        }
        if (e < best) {
          best = e;
          bestStep = s;
        }
      }
    err[k * (MAX_BITS + 1) + b] = mx > 0 ? best : 0;
    step[k * (MAX_BITS + 1) + b] = bestStep;
  }
}
