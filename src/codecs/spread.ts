// The scalar (int8, int4) and bits encoders over rows spread across processes (MPI ranks:
// api/rank-encode.ts), each process coding its own rows on its device (CodecDevice
// encodeScalarRows / encodeBitsRows: its GPU's kernels when it has one, else the host's threads).
// Both encoders are built from fixed blocks of rows (scalar-rows.ts BLOCK_ROWS) whose sums do not
// depend on who runs them, and from a sample of fixed rows: each process's runs start on blocks of
// the whole data, the per-block figures (each block's largest |r| and Σ r², each block's error) are
// added over the processes — every entry filled by one process, zero at the others, so the sum is
// exact — and the sample's rows come from whichever process holds them. The scales or bits, the
// codes and the error are then the one-process encoder's, bit for bit.
import { BitsResiduals } from './bits.js';
import { bitsPlanOfSample, SAMPLE_ROWS as BITS_SAMPLE_ROWS } from './bits-train.js';
import { CLIP_SAMPLE_ROWS, ScalarResiduals, scalesOf, type ScalarMode } from './scalar.js';
import { BLOCK_ROWS, blocksOf, residualSample } from './scalar-rows.js';
import { rangesMeeting, settled, type BitsRowsOn, type ScalarRowsOn } from './split.js';
import type { ResidualInput, SpreadEncoded, SpreadPart, SpreadPeers } from './types.js';
import { allocCodes, type Codes } from '../vectors/codes.js';
import type { Rows } from '../vectors/dataset.js';

/**
 * int8 / int4 over the processes' rows: encodeScalar's scales, codes and error, each run's rows
 * coded by `rowsOn` (the process's device). The runs' block ranges meet (split.ts rangesMeeting),
 * are added over the processes and make the scales every run codes under.
 */
export async function spreadScalar(mode: ScalarMode, part: SpreadPart, peers: SpreadPeers, rowsOn: ScalarRowsOn): Promise<SpreadEncoded> {
  const { n, d } = part;
  const blocks = blocksOf(n);
  const meet = rangesMeeting(blocks, d, part.runs.map(firstBlock), async (maxAbs, sumSq) => {
    // Each block's largest |r| and Σ r² per dimension, the whole data's blocks side by side (maxima then sums).
    const ranges = new Float64Array(2 * blocks * d);
    ranges.set(maxAbs);
    ranges.set(sumSq, blocks * d);
    const all = await peers.sum(ranges);
    const clip = mode === 'int4' ? await sampleResiduals(part, peers, CLIP_SAMPLE_ROWS) : undefined;
    return scalesOf(mode, n, d, blocks, all.subarray(0, blocks * d), all.subarray(blocks * d), clip);
  });
  // Every run settled before a failure is thrown (none left coding); a process with no run still
  // takes part in the sums (rangesMeeting combines at once: its ranges are zero).
  const codes = placed<Int8Array>(part, 'i8', d);
  const errs = await settled(part.runs.map((run, k) => rowsOn(runInput(part, run), meet.part(k), codes[k])), meet.fail);
  const scales = await meet.scales;
  const residualEnergy = await errorsOf(part, peers, errs);
  return { kind: 'i8', width: d, codes: codes.all, residualEnergy, residuals: (c) => new ScalarResiduals(mode, n, d, scales, c as Codes<Int8Array>) };
}

/**
 * bits with R code bytes a vector over the processes' rows: encodeBits's bits, steps, codes and
 * error, each run's rows coded by `rowsOn` (the process's device).
 */
export async function spreadBits(R: number, part: SpreadPart, peers: SpreadPeers, rowsOn: BitsRowsOn): Promise<SpreadEncoded> {
  const { n, d } = part;
  const plan = bitsPlanOfSample(await sampleResiduals(part, peers, BITS_SAMPLE_ROWS), d, R);
  const codes = placed<Uint8Array>(part, 'u8', R);
  const errs: Float64Array[] = [];
  for (const [k, run] of part.runs.entries()) errs.push(await rowsOn(runInput(part, run), plan, codes[k]));
  const residualEnergy = await errorsOf(part, peers, errs);
  return { kind: 'u8', width: R, codes: codes.all, residualEnergy, residuals: (c) => new BitsResiduals(n, d, R, plan.bits, plan.steps, c as Codes<Uint8Array>) };
}

/** The run's first block of the whole data's (runs start at multiples of BLOCK_ROWS). */
function firstBlock(run: { r0: number }): number {
  if (run.r0 % BLOCK_ROWS !== 0) throw new Error(`spread encoder: a run from row ${run.r0}, not a multiple of ${BLOCK_ROWS}`);
  return run.r0 / BLOCK_ROWS;
}

/** The run's rows as a device encodes them. */
function runInput(part: SpreadPart, run: { x: Rows; r0: number }): ResidualInput {
  firstBlock(run);
  return { x: run.x, n: run.x.n, d: part.d, anchors: part.anchors, assign: part.assign.subarray(run.r0, run.r0 + run.x.n) };
}

/** Where the runs' codes go (part.place): all of them, and each run's rows as codes of their own over the same memory. */
function placed<T extends Int8Array | Uint8Array>(part: SpreadPart, kind: 'i8' | 'u8', width: number): Codes<T>[] & { all: Codes<T> } {
  const all = part.place(kind, width, part.runs.reduce((s, r) => s + r.x.n, 0)) as Codes<T>;
  let at = 0;
  const runs = part.runs.map((r) => all.rowsView(at, (at += r.x.n)));
  return Object.assign(runs, { all });
}

/** The whole data's error: the runs' blocks' errors added over the processes, then in block order, over n. */
async function errorsOf(part: SpreadPart, peers: SpreadPeers, runErrs: Float64Array[]): Promise<number> {
  const errs = new Float64Array(blocksOf(part.n));
  part.runs.forEach((run, k) => errs.set(runErrs[k], firstBlock(run)));
  let sum = 0;
  for (const e of await peers.sum(errs)) sum += e;
  return part.n ? sum / part.n : 0;
}

/** residualSample's rows (⌊j·n/s⌋, s = min(n, rows)) of the whole data, from the processes that hold them, as residualSample gives them. */
async function sampleResiduals(part: SpreadPart, peers: SpreadPeers, rows: number): Promise<Float64Array> {
  const { n, d, anchors, assign } = part;
  const s = Math.min(n, rows);
  const list = Array.from({ length: s }, (_, j) => Math.floor((j * n) / s));
  const x = await peers.rows(list);
  return residualSample({ x, d, anchors, assign: Uint32Array.from(list, (i) => assign[i]) }, s, s);
}
