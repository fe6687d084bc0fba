// The 'ec' encoder's passes over every row (encode.ts on the axes, encode-rotated.ts along the
// principal directions), a block of the section's rows at a time, so that they run on the residual
// encoders' kept worker threads (scalar-worker.ts; scalar.ts onEncoderThreads gives each thread the
// blocks w, w + t, ...) or on this one, with the same result for any thread count:
//  - count (axes, pass 1): the codes counted into the thread's histogram (integer counts: their sum
//    is the same in any order), each block's offset sums into its own place;
//  - code (axes, pass 2): each block's codes, bytes and squared error;
//  - project (principal directions, pass 1): each block's coordinates quantized, their codes held
//    (in shared memory, for pass 2 on any thread) and counted, each block's error sums in its place;
//  - blocks (principal directions, pass 2): each block's bytes from its held codes.
// The caller adds the blocks' sums in block order (encodeEc, encodeRotated). A kept thread also
// takes the one job that is not a pass: the principal directions' plan (EcJob 'plan',
// encode-rotated.ts planRotatedBeside), made while this thread plans the axes.
import { forEachF32Rows } from '../../vectors/dataset.js';
import { checkpoint } from '../../interrupt.js';
import type { RowsInput } from '../scalar-rows.js';
import type { EcTarget } from './encode.js';
import type { Scale } from './size.js';
import { onEncoderThreads } from '../scalar.js';
import { encodeBlock } from './blocks.js';
import { CodeHistogram, MAX_CODE, type Alphabet } from './model.js';
import { RansModels } from './rans.js';
import { narrowed, type BlockCodes } from './residuals.js';
import { projectInto } from '../linear.js';

/** The alphabets and models a block is coded under, as a worker thread receives them. */
export interface Coder {
  lo: Int32Array;
  size: Uint32Array;
  scaleBits: number;
  start: Uint32Array;
  freq: Uint32Array;
}

export const coderOf = (alpha: Alphabet, models: RansModels): Coder => ({ lo: alpha.lo, size: alpha.size, scaleBits: models.scaleBits, start: models.start, freq: models.freq });

/** A histogram's windows (its counts are made where the rows are counted). */
export interface Window {
  lo: Int32Array;
  width: Uint32Array;
}

/** One pass over some of the blocks of `blockRows` rows. */
export type EcPass =
  /** sums: blocks × 2D f64, block b's Σ sgn(q)·(step·q − r) of each coded dimension, then its count of q ≠ 0. */
  | { pass: 'count'; blockRows: number; steps: Float32Array; window: Window; sums: SharedArrayBuffer }
  | { pass: 'code'; blockRows: number; steps: Float32Array; offsets: Float32Array; coder: Coder }
  /** sums: blocks × (3K + 1) f64, block b's Σ e², Σ sgn(q)·e and count of q ≠ 0 per coordinate (e = y − step·q), then Σ of the energy outside the K directions. */
  | { pass: 'project'; blockRows: number; P: Float64Array; K: number; step: number; window: Window; sums: SharedArrayBuffer }
  /** codes: every block's held codes (shared memory). */
  | { pass: 'blocks'; blockRows: number; codes: BlockCodes[]; coder: Coder };

/** A job of the ec encoder on a kept thread: a pass over blocks, or the principal directions' plan (encode-rotated.ts planRotatedBeside). */
export type EcJob = EcPass | { pass: 'plan'; sample: Float64Array; target: EcTarget; blockRows: number; scale: Scale };

/** What a thread answers for its blocks (in the order it was given them). */
export interface EcAnswer {
  /** count and project: the thread's histogram. */
  counts?: Float64Array;
  escapes?: Float64Array;
  total?: number;
  /** code and blocks: each block's bytes; code and project: its codes; code: its squared error. */
  bytes?: Uint8Array[];
  codes?: BlockCodes[];
  errs?: number[];
}

/** A pass's state on one thread: `block(b)` for each of its blocks, then `answer()`. */
export interface PassRun {
  block(b: number): void;
  answer(): { answer: EcAnswer; transfer: ArrayBuffer[] };
}

/**
 * The codes of one row (r = x − anchor, f64) on the coded dimensions, into q[at ..]; returns Σ (x − x̂)²
 * over all d, x̂ as residuals.ts decodes it (offsets toward 0 included).
 */
function quantizeRow(x: Float32Array, xo: number, anchors: Float32Array, ao: number, d: number, steps: Float32Array, offsets: Float32Array, q: Int32Array, at: number): number {
  let err = 0;
  for (let k = 0, c = at; k < d; k++) {
    const xv = x[xo + k], av = anchors[ao + k], s = steps[k];
    if (s === 0) {
      const e = xv - av;
      err += e * e;
      continue;
    }
    let v = Math.round((xv - av) / s);
    v = v > MAX_CODE ? MAX_CODE : v < -MAX_CODE ? -MAX_CODE : v;
    q[c++] = v;
    const e = xv - (v > 0 ? Math.fround(av + (s * v - offsets[k])) : v < 0 ? Math.fround(av + (s * v + offsets[k])) : av);
    err += e * e;
  }
  return err;
}

/** The dimensions coded: those with a step (0: left to the anchor). */
export const codedDims = (steps: Float32Array): Int32Array => {
  const dims: number[] = [];
  steps.forEach((s, k) => s > 0 && dims.push(k));
  return Int32Array.from(dims);
};

const models = (c: Coder) => ({ alpha: { lo: c.lo, size: c.size }, models: new RansModels(c.scaleBits, c.start, c.freq) });

/** Rows a tile: their residuals, then their coordinates (projectInto), then each row's codes. */
const TILE = 16;

/** The pass's run over `rows` (n of them) on this thread. */
export function passRun(rows: RowsInput, n: number, job: EcPass): PassRun {
  const { d, anchors, assign } = rows;
  const { blockRows } = job;
  const span = (b: number) => [b * blockRows, Math.min(n, (b + 1) * blockRows)] as const;
  const bytes: Uint8Array[] = [], codes: BlockCodes[] = [], errs: number[] = [];
  const transfer = (list: ArrayLike<{ buffer: ArrayBufferLike }>) =>
    Array.from(list, (a) => a.buffer).filter((b): b is ArrayBuffer => b instanceof ArrayBuffer);
  if (job.pass === 'count' || job.pass === 'project') {
    const h = new CodeHistogram(job.window.lo, job.window.width);
    const answer = () => ({ answer: { counts: h.counts, escapes: h.escapes, total: h.total, codes }, transfer: [h.counts.buffer, h.escapes.buffer] as ArrayBuffer[] });
    if (job.pass === 'count') return { block: (b) => countBlock(rows, ...span(b), job.steps, h, new Float64Array(job.sums), b), answer };
    return { block: (b) => codes.push(projectBlock(rows, ...span(b), job, h, new Float64Array(job.sums), b)), answer };
  }
  const { alpha, models: m } = models(job.coder);
  const D = alpha.lo.length;
  const q = new Int32Array(Math.min(n, blockRows) * D);
  if (job.pass === 'blocks')
    return {
      block(b) {
        const [r0, r1] = span(b);
        const qb = q.subarray(0, (r1 - r0) * D);
        qb.set(job.codes[b]);
        bytes.push(encodeBlock(qb, r1 - r0, alpha, m));
      },
      answer: () => ({ answer: { bytes }, transfer: transfer(bytes) }),
    };
  const { steps, offsets } = job;
  return {
    block(b) {
      const [r0, r1] = span(b);
      let err = 0;
      forEachF32Rows(rows.x, r0, r1, (v, c0, c1) => {
        for (let i = c0; i < c1; i++) err += quantizeRow(v, (i - c0) * d, anchors, assign[i] * d, d, steps, offsets, q, (i - r0) * D);
      });
      const qb = q.subarray(0, (r1 - r0) * D);
      bytes.push(encodeBlock(qb, r1 - r0, alpha, m));
      codes.push(narrowed(qb));
      errs.push(err);
    },
    answer: () => ({ answer: { bytes, codes, errs }, transfer: [...transfer(bytes), ...transfer(codes)] }),
  };
}

/** Rows r0 .. r1 (block b) counted into h, and their offset sums into sums[b·2D ..]: quantizeRow's codes without its error. */
function countBlock(rows: RowsInput, r0: number, r1: number, steps: Float32Array, h: CodeHistogram, sums: Float64Array, b: number): void {
  const { d, anchors, assign } = rows;
  const dk = codedDims(steps), D = dk.length, sk = Float64Array.from(dk, (k) => steps[k]);
  const o = b * 2 * D;
  const { lo, width, start, counts, escapes } = h;
  forEachF32Rows(rows.x, r0, r1, (v, c0, c1) => {
    for (let i = c0; i < c1; i++) {
      const ao = assign[i] * d, xo = (i - c0) * d;
      for (let c = 0; c < D; c++) {
        const k = dk[c], r = v[xo + k] - anchors[ao + k];
        let t = Math.round(r / sk[c]);
        t = t > MAX_CODE ? MAX_CODE : t < -MAX_CODE ? -MAX_CODE : t;
        const w = t - lo[c];
        if (w >= 0 && w < width[c]) counts[start[c] + w]++;
        else escapes[c]++;
        if (t !== 0) {
          const e = sk[c] * t - r;
          sums[o + c] += t > 0 ? e : -e;
          sums[o + D + c]++;
        }
      }
      h.total++;
    }
  });
}

/**
 * Rows r0 .. r1 (block b) projected on the K directions (a tile of rows at a time: linear.ts projectInto),
 * each coordinate quantized at the step and counted into h; its error sums into sums[b·(3K + 1) ..];
 * the block's codes, narrowed, in shared memory.
 */
function projectBlock(rows: RowsInput, r0: number, r1: number, job: Extract<EcPass, { pass: 'project' }>, h: CodeHistogram, sums: Float64Array, b: number): BlockCodes {
  const { d, anchors, assign } = rows;
  const { P, K } = job;
  const s = job.step;
  const o = b * (3 * K + 1), e2 = o, se = o + K, nz = o + 2 * K, out = o + 3 * K;
  const { lo, width, start, counts, escapes } = h;
  const q = new Int32Array((r1 - r0) * K);
  const r = new Float64Array(TILE * d), rr = new Float64Array(TILE), y = new Float64Array(TILE * K);
  forEachF32Rows(rows.x, r0, r1, (v, c0, c1) => {
    for (let t0 = c0; t0 < c1; t0 += TILE) {
      const T = Math.min(TILE, c1 - t0);
      for (let u = 0; u < T; u++) {
        const i = t0 + u, xo = (i - c0) * d, ao = assign[i] * d, ro = u * d;
        let sq = 0;
        for (let j = 0; j < d; j++) {
          const t = v[xo + j] - anchors[ao + j];
          r[ro + j] = t;
          sq += t * t;
        }
        rr[u] = sq;
      }
      projectInto(P, K, d, r, T, y);
      // The rows in order, each row's coordinates in order: the sums as one row after another makes them.
      for (let u = 0; u < T; u++) {
        const qo = (t0 + u - r0) * K, yo = u * K;
        let yy = 0;
        for (let c = 0; c < K; c++) {
          const t = y[yo + c];
          yy += t * t;
          let code = Math.round(t / s);
          code = code > MAX_CODE ? MAX_CODE : code < -MAX_CODE ? -MAX_CODE : code;
          q[qo + c] = code;
          const e = t - s * code;
          sums[e2 + c] += e * e;
          if (code !== 0) {
            sums[se + c] += code > 0 ? e : -e;
            sums[nz + c]++;
          }
          const w = code - lo[c];
          if (w >= 0 && w < width[c]) counts[start[c] + w]++;
          else escapes[c]++;
        }
        h.total++;
        sums[out] += Math.max(0, rr[u] - yy);
      }
    }
  });
  return narrowed(q, true);
}

/**
 * One pass over the `blockRows` blocks of n rows: on `threads` kept worker threads (rows in shared
 * memory), or here with one (a Ctrl-C heard between blocks); worker w's blocks `lists[w]` and its answer.
 */
export async function ecPass(rows: RowsInput, n: number, threads: number, job: EcPass): Promise<{ lists: number[][]; answers: EcAnswer[] }> {
  const blocks = Math.ceil(n / job.blockRows);
  const t = Math.max(1, Math.min(threads, blocks));
  if (t > 1) return onEncoderThreads<EcAnswer>(rows, n, t, blocks, { phase: 'ec', ec: job });
  const run = passRun(rows, n, job);
  const list = Array.from({ length: blocks }, (_, b) => b);
  for (const b of list) {
    await checkpoint();
    run.block(b);
  }
  return { lists: [list], answers: [run.answer().answer] };
}

/** The threads' histograms added into h (integer counts: exact in any order). */
export function addCounts(h: CodeHistogram, answers: EcAnswer[]): void {
  for (const a of answers) h.add({ counts: a.counts!, escapes: a.escapes!, total: a.total! });
}
