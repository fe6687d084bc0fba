// The 'bits' codec's encoder (codecs/bits.ts): which bits and step each dimension gets, chosen on a
// sample of residuals, then every vector's codes. Deterministic: the sample is fixed rows
// (residualSample), the allocation breaks ties by dimension, so the same input gives the same bytes.
import { BitsResiduals, MAX_BITS } from './bits.js';
import { stepTable, type StepTable } from './bits-steps.js';
import { blockBits, type BitsPlan } from './bits-rows.js';
import { blocksOnThreads, encoderThreadCount, PARALLEL_MIN_VALUES, rowsInput } from './scalar.js';
import { residualSample, type RowsInput } from './scalar-rows.js';
import type { ResidualInput } from './types.js';
import { allocCodes, type Codes } from '../vectors/codes.js';

/** Rows of the sample the bits and steps are chosen on (all rows when fewer). */
export const SAMPLE_ROWS = 4096;
/**
 * Bits per dimension, at most 8·R in all: repeatedly the dimension and the number of bits to add
 * to it (one or more) that lower the sample's error most per bit added (ties: the lower dimension,
 * then fewer bits). More than one at a time because the error need not fall evenly: 1 bit (levels at
 * ±range) can cost a dimension more than 0 bits where 2 or more pay well.
 */
export function allocateBits(err: Float64Array, d: number, R: number): Uint8Array {
  const bits = new Uint8Array(d);
  const W = MAX_BITS + 1;
  for (let left = 8 * R; left > 0; ) {
    let bestK = -1, bestAdd = 0, bestRate = 0;
    for (let k = 0; k < d; k++) {
      const b = bits[k], e = err[k * W + b];
      for (let to = b + 1; to <= Math.min(MAX_BITS, b + left); to++) {
        const rate = (e - err[k * W + to]) / (to - b);
        if (rate > bestRate) {
          bestRate = rate;
          bestK = k;
          bestAdd = to - b;
        }
      }
    }
    if (bestK < 0) break; // no bits lower the error any more
    bits[bestK] += bestAdd;
    left -= bestAdd;
  }
  return bits;
}

/**
 * The last step table made, with the sample it was made on: --quality measures bits at several R on
 * the same rows (quality/search.ts), and the table, most of the plan's time, depends on the sample
 * alone (not on R). The sample (SAMPLE_ROWS rows' residuals) is made afresh each time and compared,
 * never the n rows' anchors: copying and comparing every row's anchor id took most of a 50M-row
 * plan's time.
 */
let lastTable: { sample: Float64Array; d: number; table: StepTable } | undefined;

const same = (a: Float64Array, b: Float64Array) => {
  if (a.length !== b.length) return false;
  for (let i = 0; i < a.length; i++) if (a[i] !== b[i] && !(a[i] !== a[i] && b[i] !== b[i])) return false;
  return true;
};

function stepTableOf(rows: RowsInput, n: number, d: number): StepTable {
  const sample = residualSample(rows, n, SAMPLE_ROWS);
  if (lastTable && lastTable.d === d && same(lastTable.sample, sample)) return lastTable.table;
  const table = stepTable(sample, d);
  lastTable = { sample, d, table };
  return table;
}

/** The bits and steps of every dimension for R code bytes a vector, chosen on the rows' sample (any encoder's first step). */
export function bitsPlanOf(rows: RowsInput, n: number, d: number, R: number): BitsPlan {
  return planOfTable(stepTableOf(rows, n, d), d, R);
}

/** bitsPlanOf's plan from the sample's residuals (residualSample's rows) given: an encoder whose rows are spread over processes (spread.ts). */
export function bitsPlanOfSample(sample: Float64Array, d: number, R: number): BitsPlan {
  return planOfTable(stepTable(sample, d), d, R);
}

function planOfTable({ err, step }: StepTable, d: number, R: number): BitsPlan {
  const bits = allocateBits(err, d, R);
  return { bits, steps: Float32Array.from(bits, (b, k) => step[k * (MAX_BITS + 1) + b]), R };
}

/**
 * The 'bits' residuals of every vector with R code bytes each, and their mean squared error (x
 * against the reconstruction as a decoder holds it), summed block by block as it codes: on the
 * scalar encoder's kept threads when there are many values (the same bytes and sum on any number).
 */
export async function encodeBits(
  input: ResidualInput, R: number, threads = input.n * input.d < PARALLEL_MIN_VALUES ? 1 : encoderThreadCount(),
): Promise<{ residuals: BitsResiduals; residualEnergy: number }> {
  const { n, d } = input;
  const rows = rowsInput(input, threads > 1);
  const plan = bitsPlanOf(rows, n, d, R);
  const codes = allocCodes<Uint8Array>('u8', n, R, threads > 1);
  const errs = await blocksOnThreads(rows, n, threads, { phase: 'bits', bitsPlan: plan, codes: codes.handle() }, (b) => blockBits(rows, n, b, plan, codes));
  let sum = 0;
  for (const e of errs) sum += e;
  return { residuals: new BitsResiduals(n, d, R, plan.bits, plan.steps, codes), residualEnergy: n ? sum / n : 0 };
}

/**
 * The rows' codes under a plan chosen elsewhere (the whole data's sample: rows split over devices or
 * spread over MPI ranks, split.ts, spread.ts) into `codes` (n × R, zero), and each block's error in
 * block order: encodeBits's loop without its plan.
 */
export async function bitsRows(
  input: ResidualInput, plan: BitsPlan, codes: Codes<Uint8Array>,
  threads = input.n * input.d < PARALLEL_MIN_VALUES || !(codes.buffer instanceof SharedArrayBuffer) ? 1 : encoderThreadCount(),
): Promise<Float64Array> {
  const { n } = input;
  const rows = rowsInput(input, threads > 1);
  return blocksOnThreads(rows, n, threads, { phase: 'bits', bitsPlan: plan, codes: codes.handle() }, (b) => blockBits(rows, n, b, plan, codes));
}
