// The scalar (int8, int4) and bits encoders over rows spread across processes (MPI ranks:
// api/rank-encode.ts), each process coding its own rows (bits on its device: a GPU's kernel or
// the host's threads; int8 and int4 on the host's threads). Both encoders are built from fixed
// blocks of rows (scalar-rows.ts BLOCK_ROWS) whose sums do not depend on who runs them, and from
// a sample of fixed rows: each process runs the same block loops as encodeScalar / encodeBits on
// the blocks in its runs, the per-block figures (each block's largest |r| and Σ r², each block's
// error) are added over the processes — every entry filled by one process, zero at the others,
// so the sum is exact — and the sample's rows come from whichever process holds them. The scales
// or bits, the codes and the error are then the one-process encoder's, bit for bit.
import { BitsResiduals } from './bits.js';
import { bitsPlanOfSample, SAMPLE_ROWS as BITS_SAMPLE_ROWS } from './bits-train.js';
import type { BitsPlan } from './bits-rows.js';
import { blocksOnThreads, CLIP_SAMPLE_ROWS, LEVELS, PARALLEL_MIN_VALUES, ScalarResiduals, scalesOf, type ScalarMode } from './scalar.js';
import { BLOCK_ROWS, blockCodes, blockRanges, blocksOf, residualSample, type RowsInput } from './scalar-rows.js';
import type { ScalarJob } from './scalar-worker.js';
import type { ResidualInput, SpreadEncoded, SpreadPart, SpreadPeers } from './types.js';
import { allocCodes, type Codes } from '../vectors/codes.js';
import type { Rows } from '../vectors/dataset.js';

/** int8 / int4 over the processes' rows: encodeScalar's scales, codes and error. */
export async function spreadScalar(mode: ScalarMode, part: SpreadPart, peers: SpreadPeers): Promise<SpreadEncoded> {
  const { n, d } = part;
  const blocks = blocksOf(n);
  const L = LEVELS[mode];
  // Each block's largest |r| and Σ r² per dimension, the whole data's blocks side by side (maxima then sums).
  const ranges = new Float64Array(2 * blocks * d);
  for (const run of part.runs) {
    const rb = blocksOf(run.x.n);
    const maxAbs = new Float64Array(new SharedArrayBuffer(Math.max(1, rb * d) * 8));
    const sumSq = new Float64Array(new SharedArrayBuffer(Math.max(1, rb * d) * 8));
    const job: Partial<ScalarJob> = { phase: 'ranges', maxAbs: maxAbs.buffer as SharedArrayBuffer, sumSq: sumSq.buffer as SharedArrayBuffer };
    await onRun(part, run, job, (inp, b) => (blockRanges(inp, run.x.n, b, maxAbs, sumSq), 0));
    ranges.set(maxAbs.subarray(0, rb * d), firstBlock(run) * d);
    ranges.set(sumSq.subarray(0, rb * d), (blocks + firstBlock(run)) * d);
  }
  const all = await peers.sum(ranges);
  const clip = mode === 'int4' ? await sampleResiduals(part, peers, CLIP_SAMPLE_ROWS) : undefined;
  const scales = scalesOf(mode, n, d, blocks, all.subarray(0, blocks * d), all.subarray(blocks * d), clip);
  const { codes, residualEnergy } = await codeRuns(part, peers, async (run) => {
    const c = allocCodes<Int8Array>('i8', run.x.n, d);
    const job: Partial<ScalarJob> = { phase: 'codes', scales, levels: L, codes: c.handle() };
    return { codes: c, errs: await onRun(part, run, job, (inp, b) => blockCodes(inp, run.x.n, b, scales, L, c)) };
  });
  return { kind: 'i8', width: d, codes, residualEnergy, residuals: (c) => new ScalarResiduals(mode, n, d, scales, c as Codes<Int8Array>) };
}

/** The bits codec's rows under a plan, on the process's device (CodecDevice.encodeBitsRows: its GPU, when it has one), and each block's error. */
export type BitsRowsOn = (input: ResidualInput, plan: BitsPlan) => Promise<{ codes: Codes<Uint8Array>; blockErrs: Float64Array }>;

/**
 * bits with R code bytes a vector over the processes' rows: encodeBits's bits, steps, codes and
 * error, each run's rows coded by `rowsOn` (the process's device: a GPU's kernel, or its threads).
 */
export async function spreadBits(R: number, part: SpreadPart, peers: SpreadPeers, rowsOn: BitsRowsOn): Promise<SpreadEncoded> {
  const { n, d } = part;
  const plan = bitsPlanOfSample(await sampleResiduals(part, peers, BITS_SAMPLE_ROWS), d, R);
  const { codes, residualEnergy } = await codeRuns(part, peers, async (run) => {
    const got = await rowsOn({ x: run.x, n: run.x.n, d, anchors: part.anchors, assign: part.assign.slice(run.r0, run.r0 + run.x.n) }, plan);
    return { codes: got.codes, errs: got.blockErrs };
  });
  return { kind: 'u8', width: R, codes, residualEnergy, residuals: (c) => new BitsResiduals(n, d, R, plan.bits, plan.steps, c as Codes<Uint8Array>) };
}

/** The run's first block of the whole data's (runs start at multiples of BLOCK_ROWS). */
function firstBlock(run: { r0: number }): number {
  if (run.r0 % BLOCK_ROWS !== 0) throw new Error(`spread encoder: a run from row ${run.r0}, not a multiple of ${BLOCK_ROWS}`);
  return run.r0 / BLOCK_ROWS;
}

/** The run's rows as the block loops read them (their anchors in shared memory: worker threads read them). */
function runInput(part: SpreadPart, run: { x: Rows; r0: number }): RowsInput {
  const anchors = new Float32Array(new SharedArrayBuffer(Math.max(1, part.anchors.length) * 4));
  anchors.set(part.anchors);
  const assign = new Uint32Array(new SharedArrayBuffer(Math.max(1, run.x.n) * 4));
  assign.set(part.assign.subarray(run.r0, run.r0 + run.x.n));
  return { x: run.x, d: part.d, anchors, assign };
}

/** One phase over a run's blocks, on the process's threads (one: here); each block's error. */
function onRun(part: SpreadPart, run: { x: Rows; r0: number }, job: Partial<ScalarJob>, here: (inp: RowsInput, b: number) => number): Promise<Float64Array> {
  const inp = runInput(part, run);
  const threads = run.x.n * part.d < PARALLEL_MIN_VALUES ? 1 : part.threads; // as encodeScalar: workers only where they pay
  return blocksOnThreads(inp, run.x.n, threads, job, (b) => here(inp, b));
}

/** Each run's codes (`codeRun`) and the whole data's error: the blocks' errors added over the processes, then in block order, over n. */
async function codeRuns(
  part: SpreadPart, peers: SpreadPeers, codeRun: (run: { x: Rows; r0: number }) => Promise<{ codes: Codes; errs: Float64Array }>,
): Promise<{ codes: Codes[]; residualEnergy: number }> {
  const errs = new Float64Array(blocksOf(part.n));
  const codes: Codes[] = [];
  for (const run of part.runs) {
    const got = await codeRun(run);
    errs.set(got.errs, firstBlock(run));
    codes.push(got.codes);
  }
  let sum = 0;
  for (const e of await peers.sum(errs)) sum += e;
  return { codes, residualEnergy: part.n ? sum / part.n : 0 };
}

/** residualSample's rows (⌊j·n/s⌋, s = min(n, rows)) of the whole data, from the processes that hold them, as residualSample gives them. */
async function sampleResiduals(part: SpreadPart, peers: SpreadPeers, rows: number): Promise<Float64Array> {
  const { n, d, anchors, assign } = part;
  const s = Math.min(n, rows);
  const list = Array.from({ length: s }, (_, j) => Math.floor((j * n) / s));
  const x = await peers.rows(list);
  return residualSample({ x, d, anchors, assign: Uint32Array.from(list, (i) => assign[i]) }, s, s);
}
