// The scalar (int8, int4) and bits encoders with their rows split over several devices (the GPUs
// of a sharded backend, backend/sharded/backend.ts; a rank's runs under MPI, spread.ts), each
// device coding its own contiguous range. The encoders work in fixed blocks of rows
// (scalar-rows.ts BLOCK_ROWS) whose figures do not depend on who computes them, so every range
// here starts on a block's edge: each device's blocks are blocks of the whole data. int8 / int4
// take their scales from every block's ranges, so each device hands its blocks' ranges in, waits
// until every device has (one plan, made once from all of them, as one device makes it), and codes
// its rows under it; bits' plan comes from the whole data's sample before any device starts. The
// codes land in place in one buffer (Codes.rowsView), the blocks' errors are joined in block order:
// the one-device encoder's scales or bits, codes and error, bit for bit.
import { BitsResiduals } from './bits.js';
import { bitsPlanOf } from './bits-train.js';
import type { BitsPlan } from './bits-rows.js';
import { blocksOnThreads, CLIP_SAMPLE_ROWS, encoderThreadCount, LEVELS, PARALLEL_MIN_VALUES, ScalarResiduals, rowsInput, scalesOf, type ScalarMode } from './scalar.js';
import { BLOCK_ROWS, blockCodes, blockRanges, blocksOf, residualSample } from './scalar-rows.js';
import type { ScalarJob } from './scalar-worker.js';
import type { EncodedResiduals, ResidualInput } from './types.js';
import { elementBytes, asRows } from '../vectors/dataset.js';
import type { Codes } from '../vectors/codes.js';

/**
 * The scales of int8 / int4 from the blocks' ranges of every row (per block and dimension: the
 * largest |r|, then Σ r², blocks in order), as scalar.ts scalesOf makes them.
 */
export type ScalesFrom = (maxAbs: Float64Array, sumSq: Float64Array) => Promise<Float32Array>;
/** int8 / int4 rows on one device (CodecDevice.encodeScalarRows): each block's error in block order. */
export type ScalarRowsOn = (input: ResidualInput, scalesFrom: ScalesFrom, codes: Codes<Int8Array>) => Promise<Float64Array>;
/** bits rows under a plan on one device (CodecDevice.encodeBitsRows): each block's error in block order. */
export type BitsRowsOn = (input: ResidualInput, plan: BitsPlan, codes: Codes<Uint8Array>) => Promise<Float64Array>;

/** n rows cut into at most `parts` contiguous ranges [r0, r1) of whole blocks (the last may end short), as even in blocks as they go; one empty range for n = 0. */
export function splitByBlocks(n: number, parts: number): Array<[number, number]> {
  const blocks = blocksOf(n);
  const p = Math.max(1, Math.min(parts, blocks));
  return Array.from({ length: p }, (_, k) => {
    const b0 = Math.floor((k * blocks) / p), b1 = Math.floor(((k + 1) * blocks) / p);
    return [Math.min(n, b0 * BLOCK_ROWS), Math.min(n, b1 * BLOCK_ROWS)] as [number, number];
  });
}

/** The input's rows cut at `spans` (splitByBlocks), each part viewed in place: its vectors and their anchor ids. */
export function inputParts(input: ResidualInput, spans: Array<[number, number]>): ResidualInput[] {
  const { n, d } = input;
  const x = asRows(input.x, n, d); // (an array not in shared memory is copied once, here)
  const assign = input.assign instanceof Uint32Array ? input.assign : Uint32Array.from(input.assign);
  return spans.map(([r0, r1]) => ({
    x: { ...x, n: r1 - r0, byteOffset: x.byteOffset + r0 * d * elementBytes(x.dtype) }, n: r1 - r0, d, anchors: input.anchors, assign: assign.subarray(r0, r1),
  }));
}

/**
 * Where the parts' block ranges meet: part k (its first block `firstBlocks[k]`) places its ranges
 * with `part(k)`, and every part gets the scales `combine` makes once all of them are in (at once
 * with none; `scales` holds them too). A part that fails hands its error to `fail`: the others stop waiting.
 */
export function rangesMeeting(
  blocks: number, d: number, firstBlocks: readonly number[], combine: ScalesFrom,
): { part: (k: number) => ScalesFrom; fail: (e: unknown) => void; scales: Promise<Float32Array> } {
  const maxAbs = new Float64Array(blocks * d), sumSq = new Float64Array(blocks * d);
  let done!: (s: Float32Array) => void, failed!: (e: unknown) => void;
  const scales = new Promise<Float32Array>((res, rej) => ((done = res), (failed = rej)));
  scales.catch(() => undefined); // a failure is the failing part's to report; no one else need be waiting
  let left = firstBlocks.length;
  const all = () => combine(maxAbs, sumSq).then(done, failed);
  if (left === 0) void all();
  return {
    part: (k) => async (ma, ss) => {
      const b0 = firstBlocks[k], b1 = k + 1 < firstBlocks.length ? firstBlocks[k + 1] : blocks;
      maxAbs.set(ma.subarray(0, (b1 - b0) * d), b0 * d);
      sumSq.set(ss.subarray(0, (b1 - b0) * d), b0 * d);
      if (--left === 0) void all();
      return scales;
    },
    fail: failed,
    scales,
  };
}

/** Each part's promise, its failure told to `fail` first; every part settled, the first failure thrown, else the answers in order. */
export async function settled<T>(parts: Array<Promise<T>>, fail: (e: unknown) => void): Promise<T[]> {
  const got = await Promise.allSettled(parts.map((p) => p.catch((e) => (fail(e), Promise.reject(e)))));
  const bad = got.find((g) => g.status === 'rejected');
  if (bad) throw (bad as PromiseRejectedResult).reason;
  return got.map((g) => (g as PromiseFulfilledResult<T>).value);
}

/** Joined in order: the parts' block errors. */
function joined(parts: Float64Array[]): Float64Array {
  const out = new Float64Array(parts.reduce((a, p) => a + p.length, 0));
  let at = 0;
  for (const p of parts) {
    out.set(p, at);
    at += p.length;
  }
  return out;
}

/**
 * int8 / int4 over `on.length` devices, rows split by splitByBlocks (the input's first row starts a
 * block of the data the scales are made for): the block ranges handed to `scalesFrom` once, the
 * codes into `codes` (input.n rows), each block's error in block order.
 */
export async function scalarRowsSplit(input: ResidualInput, scalesFrom: ScalesFrom, codes: Codes<Int8Array>, on: ScalarRowsOn[]): Promise<Float64Array> {
  const spans = splitByBlocks(input.n, on.length);
  if (spans.length === 1) return on[0](input, scalesFrom, codes);
  const meet = rangesMeeting(blocksOf(input.n), input.d, spans.map(([r0]) => r0 / BLOCK_ROWS), scalesFrom);
  const parts = inputParts(input, spans);
  const errs = await settled(spans.map(([r0, r1], k) => on[k](parts[k], meet.part(k), codes.rowsView(r0, r1))), meet.fail);
  return joined(errs);
}

/** bits under `plan` over `on.length` devices, rows split by splitByBlocks: the codes into `codes`, each block's error in block order. */
export async function bitsRowsSplit(input: ResidualInput, plan: BitsPlan, codes: Codes<Uint8Array>, on: BitsRowsOn[]): Promise<Float64Array> {
  const spans = splitByBlocks(input.n, on.length);
  if (spans.length === 1) return on[0](input, plan, codes);
  const parts = inputParts(input, spans);
  return joined(await settled(spans.map(([r0, r1], k) => on[k](parts[k], plan, codes.rowsView(r0, r1))), () => undefined));
}

/**
 * The host's int8 / int4 rows (CodecDevice.encodeScalarRows): encodeScalar's two block loops on the
 * kept worker threads (or this one), the scales between them from `scalesFrom`; each block's error.
 */
export async function scalarRows(
  mode: ScalarMode, input: ResidualInput, scalesFrom: ScalesFrom, codes: Codes<Int8Array>,
  threads = input.n * input.d < PARALLEL_MIN_VALUES || !(codes.buffer instanceof SharedArrayBuffer) ? 1 : encoderThreadCount(),
): Promise<Float64Array> {
  const { n, d } = input;
  const rows = rowsInput(input, threads > 1);
  const size = Math.max(1, blocksOf(n) * d) * 8;
  const maxAbs = new Float64Array(new SharedArrayBuffer(size)), sumSq = new Float64Array(new SharedArrayBuffer(size));
  const ranges: Partial<ScalarJob> = { phase: 'ranges', maxAbs: maxAbs.buffer as SharedArrayBuffer, sumSq: sumSq.buffer as SharedArrayBuffer };
  await blocksOnThreads(rows, n, threads, ranges, (b) => (blockRanges(rows, n, b, maxAbs, sumSq), 0));
  const scales = await scalesFrom(maxAbs, sumSq);
  const L = LEVELS[mode];
  return blocksOnThreads(rows, n, threads, { phase: 'codes', scales, levels: L, codes: codes.handle() }, (b) => blockCodes(rows, n, b, scales, L, codes));
}

/** The whole encoder (scalar.ts encodeScalar's residuals and error) with its rows split over the devices of `on`; `codes`: n × d, filled here. */
export async function encodeScalarSplit(mode: ScalarMode, input: ResidualInput, codes: Codes<Int8Array>, on: ScalarRowsOn[]): Promise<EncodedResiduals<ScalarResiduals>> {
  const { n, d } = input;
  let scales!: Float32Array;
  const scalesFrom: ScalesFrom = async (maxAbs, sumSq) => {
    const clip = mode === 'int4' ? residualSample(rowsInput(input, false), n, CLIP_SAMPLE_ROWS) : undefined;
    return (scales = scalesOf(mode, n, d, blocksOf(n), maxAbs, sumSq, clip));
  };
  let err = 0;
  for (const e of await scalarRowsSplit(input, scalesFrom, codes, on)) err += e;
  return { residuals: new ScalarResiduals(mode, n, d, scales, codes), residualEnergy: err / n };
}

/** The whole bits encoder (bits-train.ts encodeBits: its plan from the sample, codes and error) with its rows split over the devices of `on`; `codes`: n × R, zero, filled here. */
export async function encodeBitsSplit(input: ResidualInput, R: number, codes: Codes<Uint8Array>, on: BitsRowsOn[]): Promise<EncodedResiduals<BitsResiduals>> {
  const { n, d } = input;
  const plan = bitsPlanOf(rowsInput(input, false), n, d, R);
  let sum = 0;
  for (const e of await bitsRowsSplit(input, plan, codes, on)) sum += e;
  return { residuals: new BitsResiduals(n, d, R, plan.bits, plan.steps, codes), residualEnergy: n ? sum / n : 0 };
}
