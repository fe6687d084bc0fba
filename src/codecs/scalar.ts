// Scalar residuals (docs/quality.md, "The codecs"): each vector also stores x − anchor, quantized
// to int8 or int4 with one scale per dimension, so reconstructions — and search and eval — get much
// closer to the originals at d or d/2 more bytes per vector.
//
//   code q_ik = clamp(round(r_ik / s_k), −L, L),  r = x − (stored anchor),  L = 127 (int8) or 7 (int4)
//   x̂_ik = anchor_k + s_k · q_ik
//
// Scales: int8 has levels to spare, so s_k = max|r_k| / 127 (nothing is clipped). int4 has 15
// levels; spreading them to the largest residual wastes most of them on rare outliers, so its range
// is clipped, at 2.6 × the dimension's RMS residual for Gaussian-like data (demo fixture m=128 /
// 100k×384 Gaussian clusters m=1024, int4 MSE: clip 2.0: 4.76e-3 / 3.59e-3, 2.6: 2.95e-3 / 2.59e-3,
// 3.0: 3.22e-3 / 3.09e-3, none: 5.36e-3 / 6.95e-3). Real data can have dimensions with heavy tails
// that such a clip ruins (Fashion-MNIST's pixels: MSE 5.80e4, recall@10 0.869), so each dimension
// takes the range, among INT4_CLIPS × its RMS and its largest |r|, with the least int4 error on a
// sample of rows — the 90 % of an evenly spread sample nearest their anchors: a point far from its
// anchor is rarely anyone's neighbour, and counting it made the ranges wider for every point (the
// 20,000 × 128 mixture: MSE 27 % lower, recall@10 0.017 lower). Fashion-MNIST: 2.52e4, 0.934; the
// mixtures and the demo fixture: the same recall as 2.6 (bench/results/2026-11-26-int4-clip.json).
// Section payload ('RSD8' / 'RSD4'): d f32 scales, then the codes — int8: n×d bytes; int4: n×ceil(d/2)
// bytes, two codes each, low nibble first.
import { availableParallelism } from 'node:os';
import type { Worker } from 'node:worker_threads';
import { keepWorkers } from './kept-workers.js';
import { dimsThreadCount, onDimensions, resultsF64, sharedF64, type DimWork } from './dims-on-threads.js';
import { crc32c, crc32cCombine } from '../io/vlc/crc32c.js';
import { BLOCK_ROWS, blockCodes, blockRanges, blocksOf, residualSample, type RowsInput } from './scalar-rows.js';
import type { ScalarJob } from './scalar-worker.js';
import { checkpoint } from '../interrupt.js';
import { asRows } from '../vectors/dataset.js';
import { allocCodes, asCodes, Codes, packNibbles, unpackNibbles } from '../vectors/codes.js';
import type { CodedResiduals, ResidualInput, ResidualSection, SectionContext } from './types.js';
import { asPayload, type PayloadLike } from '../io/vlc/payload.js';
import { fixedRowBlocks } from './row-blocks.js';

export type ScalarMode = 'int8' | 'int4';

/** Code levels each side of zero. */
export const LEVELS = { int8: 127, int4: 7 } as const;
/** int4's candidate ranges, in RMS residuals of the dimension (ascending: a tie keeps the tighter). */
const INT4_CLIPS = [2.6, 3, 3.5, 4, 5, 6, 8];
/** Rows of the sample int4's clip is chosen on (all rows when fewer), and the share of them kept: the nearest their anchors. */
export const CLIP_SAMPLE_ROWS = 4096;
const CLIP_KEEP = 0.9;

export class ScalarResiduals implements CodedResiduals {
  /** n×d codes, one per byte in memory whatever the mode (int4 is packed only in the file), in pieces of whole rows (vectors/codes.ts). */
  readonly codes: Codes<Int8Array>;

  constructor(
    readonly mode: ScalarMode,
    readonly n: number,
    readonly d: number,
    /** One scale per dimension (f32). */
    readonly scales: Float32Array,
    /** The codes, or (small data) one array of them. */
    codes: Codes<Int8Array> | Int8Array,
    /** int8: the payload's CRC32C when the encoder computed it (from its threads' blocks), else undefined. */
    readonly payloadCrc?: number,
  ) {
    this.codes = asCodes(codes, d, n);
  }

  addTo(i: number, out: Float32Array, at = 0): void {
    const { d, scales, codes } = this;
    const c = codes.piece(i), o = codes.pieceStart(i);
    for (let k = 0; k < d; k++) out[at + k] += scales[k] * c[o + k];
  }

  /** The scales, then the codes: int8's pieces in place (no copy of n·d bytes), int4's packed a piece of rows at a time. */
  payload(): Uint8Array[] {
    const { n, d, mode, codes } = this;
    const head = new Uint8Array(Float32Array.from(this.scales).buffer);
    if (mode === 'int8') return [head, ...codes.bytePieces()];
    return [head, ...packNibbles(codes)];
  }
}

/** Below this many values the encoder runs on the calling thread (workers cost more than they save). */
export const PARALLEL_MIN_VALUES = 1 << 22;
/** At most this many worker threads. */
const MAX_THREADS = 16;

/**
 * Quantize the residual of every vector against its stored anchor, and measure the coded file's
 * error (mean over vectors of ‖x − x̂‖², x̂ as a decoder rebuilds it). The rows go in blocks
 * (scalar-rows.ts) over `threads` worker threads when x lies in shared memory (1: this thread);
 * the bytes are the same for any number.
 */
export async function encodeScalar(
  mode: ScalarMode,
  input: ResidualInput,
  threads = input.n * input.d < PARALLEL_MIN_VALUES ? 1 : encoderThreadCount(),
): Promise<{ residuals: ScalarResiduals; residualEnergy: number }> {
  const { n, d } = input;
  const blocks = blocksOf(n);
  const t = Math.max(1, Math.min(threads, blocks));
  const rows = rowsInput(input, t > 1);
  const maxAbs = new Float64Array(new SharedArrayBuffer(blocks * d * 8));
  const sumSq = new Float64Array(new SharedArrayBuffer(blocks * d * 8));
  const codes = allocCodes<Int8Array>('i8', n, d);
  const L = LEVELS[mode];
  const errs = new Float64Array(blocks);
  const crcs = new Float64Array(blocks);
  // One encode at a time on the kept threads (each answers its messages in order, to one listener).
  const release = t > 1 ? await takeThreads() : () => {};
  const workers = t > 1 ? new ScalarWorkers(t, rows, n) : undefined;
  try {
    if (workers) await workers.run({ phase: 'ranges', maxAbs: maxAbs.buffer as SharedArrayBuffer, sumSq: sumSq.buffer as SharedArrayBuffer });
    else
      for (let b = 0; b < blocks; b++) {
        await checkpoint(); // on this thread: let a Ctrl-C be heard between blocks
        blockRanges(rows, n, b, maxAbs, sumSq);
      }
    const scales = scalesOf(mode, n, d, blocks, maxAbs, sumSq, mode === 'int4' ? residualSample(rows, n, CLIP_SAMPLE_ROWS) : undefined);
    if (workers) answersInto(workers.blocks, errs, crcs, await workers.run({ phase: 'codes', scales, levels: L, codes: codes.handle() }));
    else
      for (let b = 0; b < blocks; b++) {
        await checkpoint();
        errs[b] = blockCodes(rows, n, b, scales, L, codes);
      }
    let err = 0;
    for (let b = 0; b < blocks; b++) err += errs[b];
    // int8 on threads: the section's checksum from the blocks' (scales first, then the codes in row order).
    const crc = workers && mode === 'int8' ? combineCrcs(scales, crcs, n, d) : undefined;
    return { residuals: new ScalarResiduals(mode, n, d, scales, codes, crc), residualEnergy: err / n };
  } finally {
    await workers?.close();
    release();
  }
}

/** The encoder's threads for a large input: every core, at most MAX_THREADS. */
export const encoderThreadCount = (): number => Math.min(availableParallelism(), MAX_THREADS);

/**
 * The rows an encoder reads: x as rows (in shared memory already: vectors/dataset.ts); the anchors and
 * assignments copied into shared memory when worker threads are to read them.
 */
export function rowsInput(input: ResidualInput, threads: boolean): RowsInput {
  const { n, d } = input;
  const assign = input.assign instanceof Uint32Array ? input.assign : Uint32Array.from(input.assign);
  return { x: asRows(input.x, n, d), d, anchors: threads ? shared(Float32Array, input.anchors) : input.anchors, assign: threads ? shared(Uint32Array, assign) : assign };
}

/**
 * One phase of an encoder over every block of rows, on `threads` kept worker threads (its job names
 * the phase: scalar-worker.ts) or, with one, here (`here(b)`, a Ctrl-C heard between blocks); each
 * block's error, in block order (a codes phase on threads: each block's checksum into `crcs`).
 */
export async function blocksOnThreads(
  rows: RowsInput, n: number, threads: number, job: Partial<ScalarJob>, here: (b: number) => number, crcs = new Float64Array(blocksOf(n)),
): Promise<Float64Array> {
  const blocks = blocksOf(n);
  const t = Math.max(1, Math.min(threads, blocks));
  const errs = new Float64Array(blocks);
  if (t === 1) {
    for (let b = 0; b < blocks; b++) {
      await checkpoint();
      errs[b] = here(b);
    }
    return errs;
  }
  const { lists, answers } = await onEncoderThreads<{ errs: number[]; crcs: number[] }>(rows, n, t, blocks, job);
  answersInto(lists, errs, crcs, answers);
  return errs;
}

/** Each block's error and codes checksum, from the workers' answers (worker w's blocks: lists[w]), in block order. */
function answersInto(lists: number[][], errs: Float64Array, crcs: Float64Array, perWorker: Array<{ errs: number[]; crcs: number[] }>): void {
  errs.set(inBlockOrder(lists, perWorker, (a) => a.errs));
  crcs.set(inBlockOrder(lists, perWorker, (a) => a.crcs));
}

/** Each block's item of the workers' answers (`pick`: worker w's, for its blocks lists[w] in order), in block order. */
export function inBlockOrder<A, T>(lists: number[][], answers: A[], pick: (a: A) => T[]): T[] {
  const out: T[] = [];
  answers.forEach((a, w) => pick(a).forEach((v, j) => (out[lists[w][j]] = v)));
  return out;
}

/**
 * One job on t of the kept threads (one encode at a time on them), over `blocks` blocks of the rows:
 * worker w takes blocks w, w + t, w + 2t, ... (`lists[w]`) and answers for them (`answers[w]`).
 */
export async function onEncoderThreads<A>(rows: RowsInput, n: number, t: number, blocks: number, job: Partial<ScalarJob>): Promise<{ lists: number[][]; answers: A[] }> {
  const release = await takeThreads();
  const workers = new ScalarWorkers(t, rows, n, blocks);
  try {
    return { lists: workers.blocks, answers: await workers.run<A>(job) };
  } finally {
    await workers.close();
    release();
  }
}

let threadsBusy: Promise<void> = Promise.resolve();

/** Wait for the kept threads to be free; the returned function frees them. */
async function takeThreads(): Promise<() => void> {
  const before = threadsBusy;
  let free!: () => void;
  threadsBusy = new Promise<void>((r) => (free = r));
  await before;
  return free;
}

/** The section's checksum from its blocks': the scales first, then the codes in row order. */
function combineCrcs(scales: Float32Array, crcs: Float64Array, n: number, d: number): number {
  let crc = crc32c(new Uint8Array(Float32Array.from(scales).buffer));
  for (let b = 0; b < crcs.length; b++) crc = crc32cCombine(crc, crcs[b], (Math.min(n, (b + 1) * BLOCK_ROWS) - b * BLOCK_ROWS) * d);
  return crc;
}

/** `values` copied into a typed array over shared memory, which worker threads can read. */
function shared<T extends Float32Array | Uint32Array>(Type: { new (b: SharedArrayBuffer): T; BYTES_PER_ELEMENT: number }, values: ArrayLike<number>): T {
  const out = new Type(new SharedArrayBuffer(Math.max(1, values.length) * Type.BYTES_PER_ELEMENT));
  out.set(values);
  return out;
}

/**
 * Per dimension: the blocks' maxima and sums (in block order), then the scale of the mode. int4
 * chooses each dimension's range on `sample` (residualSample's rows); without one, 2.6 × its RMS.
 */
export function scalesOf(mode: ScalarMode, n: number, d: number, blocks: number, maxAbs: Float64Array, sumSq: Float64Array, sample?: Float64Array): Float32Array {
  const L = LEVELS[mode];
  const kept = mode === 'int4' && sample ? nearestRows(sample, d, CLIP_KEEP) : undefined;
  // int4's clip search on threads for a large sample (dims-on-threads.ts): each dimension's range on its own.
  const threads = kept && d > 1 ? dimsThreadCount(kept.length) : 1;
  const task: Int4RangesTask = {
    kind: 'int4-range', sample: kept && threads > 1 ? sharedF64(kept) : (kept ?? new Float64Array(0)), d,
    mx: resultsF64(d, threads), rms: resultsF64(d, threads), range: resultsF64(d, threads),
  };
  for (let k = 0; k < d; k++) {
    let mx = 0, sq = 0;
    for (let b = 0; b < blocks; b++) {
      if (maxAbs[b * d + k] > mx) mx = maxAbs[b * d + k];
      sq += sumSq[b * d + k];
    }
    task.mx[k] = mx;
    task.rms[k] = Math.sqrt(sq / n);
  }
  if (kept) onDimensions(task, d, threads, int4RangesWork(task));
  else for (let k = 0; k < d; k++) task.range[k] = mode === 'int8' ? task.mx[k] : Math.min(task.mx[k], INT4_CLIPS[0] * task.rms[k]);
  return Float32Array.from(task.range, (range) => range / L);
}

/** int4's clip search as a worker receives it: the kept sample rows, each dimension's largest |r| and RMS, and where its range goes. */
export interface Int4RangesTask {
  kind: 'int4-range';
  sample: Float64Array;
  d: number;
  mx: Float64Array;
  rms: Float64Array;
  range: Float64Array;
}

/** A thread's work on int4's ranges: dimension k's (bestInt4Range). */
export function int4RangesWork(task: Int4RangesTask): DimWork {
  return (k) => void (task.range[k] = bestInt4Range(task.sample, task.d, k, task.mx[k], task.rms[k]));
}

/** The share `keep` of the sample's rows with the smallest Σ r² (ties: the earlier row), in sample order. */
function nearestRows(sample: Float64Array, d: number, keep: number): Float64Array {
  const rows = sample.length / d;
  const norm = new Float64Array(rows);
  for (let j = 0; j < rows; j++) for (let k = 0; k < d; k++) norm[j] += sample[j * d + k] ** 2;
  const order = Array.from({ length: rows }, (_, j) => j).sort((a, b) => norm[a] - norm[b] || a - b);
  const take = order.slice(0, Math.ceil(keep * rows)).sort((a, b) => a - b);
  const out = new Float64Array(take.length * d);
  take.forEach((j, t) => out.set(sample.subarray(j * d, (j + 1) * d), t * d));
  return out;
}

/** The range of dimension k whose int4 codes (scale as stored: f32) give the sample the least squared error. */
function bestInt4Range(sample: Float64Array, d: number, k: number, mx: number, rms: number): number {
  const L = LEVELS.int4;
  let best = mx, bestErr = Infinity;
  for (const range of [...INT4_CLIPS.map((c) => Math.min(mx, c * rms)), mx]) {
    const s = Math.fround(range / L);
    let err = 0;
    for (let j = k; j < sample.length; j += d) {
      const r = sample[j];
      let q = s === 0 ? 0 : Math.round(r / s);
      q = q > L ? L : q < -L ? -L : q;
      err += (r - s * q) ** 2;
    }
    if (err < bestErr) {
      bestErr = err;
      best = range;
    }
  }
  return best;
}

/** t worker threads sharing the rows; worker w takes blocks w, w + t, w + 2t, ... of `blocks` (the scalar codec's by default). */
class ScalarWorkers {
  private readonly workers: Worker[];
  readonly blocks: number[][];

  constructor(
    t: number,
    private readonly rows: RowsInput,
    private readonly n: number,
    blocks = blocksOf(n),
  ) {
    this.workers = encoderThreads(t).slice(0, t);
    for (const w of this.workers) w.ref(); // while encoding, the workers keep the process alive
    this.blocks = Array.from({ length: t }, (_, w) => Array.from({ length: Math.ceil((blocks - w) / t) }, (_, j) => w + j * t));
  }

  /** One phase on every worker; each answers for its blocks (the codes phase: their errors and checksums). */
  run<A = { errs: number[]; crcs: number[] }>(job: Partial<ScalarJob>): Promise<A[]> {
    const { x, d, anchors, assign } = this.rows;
    return Promise.all(
      this.workers.map(
        (worker, w) =>
          new Promise<A>((resolve, reject) => {
            const fail = (e: Error) => reject(new Error(`residual encoder thread: ${e.message}`));
            worker.once('error', fail);
            worker.once('message', (r: A & { ok: boolean; error?: string }) => {
              worker.off('error', fail);
              if (r.ok) resolve(r);
              else fail(new Error(r.error));
            });
            const msg: ScalarJob = {
              ...(job as ScalarJob),
              x: { dtype: x.dtype, buffer: x.buffer, byteOffset: x.byteOffset, n: x.n, d: x.d },
              anchors: anchors.buffer as SharedArrayBuffer,
              assign: assign.buffer as SharedArrayBuffer,
              n: this.n,
              d,
              blocks: this.blocks[w],
            };
            worker.postMessage(msg);
          }),
      ),
    );
  }

  /** The workers stay for the next encode (a compress encodes the chosen codec after trying others), idle and unref'd. */
  async close(): Promise<void> {
    for (const w of this.workers) w.unref();
  }
}

/** The encoder's worker threads, started once per process and kept (idle, they do not hold it). */
const threadsKept: Worker[] = [];

function encoderThreads(t: number): Worker[] {
  return keepWorkers(threadsKept, new URL('./scalar-worker.js', import.meta.url), t);
}

/** Start the encoder's threads for `values` = n·d now, in the background (a GPU run, before training), when it will use them. */
export function prewarmScalarEncoder(values: number, threads = encoderThreadCount()): void {
  if (values >= PARALLEL_MIN_VALUES && threads > 1) encoderThreads(threads);
}

/** Bytes of the section payload: d f32 scales, then n rows of codes. */
export function scalarPayloadBytes(mode: ScalarMode, n: number, d: number): number {
  return 4 * d + n * scalarRowBytes(mode, d);
}

/** Bytes of one row's codes: int8 a byte a value, int4 two values a byte (a row's last half byte padded). */
export function scalarRowBytes(mode: ScalarMode, d: number): number {
  return mode === 'int8' ? d : Math.ceil(d / 2);
}

/** Whether any int8 code is -128, the one byte outside -127..127 (memchr per piece, not a loop: the codes are most of the file). */
function hasMinus128(codes: Codes<Int8Array>): boolean {
  return codes.bytePieces().some((p) => Buffer.from(p.buffer, p.byteOffset, p.byteLength).indexOf(0x80) >= 0);
}

/** Reader of the 'RSD8' / 'RSD4' section: lengths, scales and code range checked. */
export function scalarSection(mode: ScalarMode): ResidualSection {
  const section: ResidualSection = {
    rowBlocks: (payload, context, corrupt, rowsHint) =>
      fixedRowBlocks(section, payload, context, corrupt, 4 * context.d, scalarRowBytes(mode, context.d), rowsHint),
    tag: mode === 'int8' ? 'RSD8' : 'RSD4',
    payloadBytes: (n, d) => 4 * d + n * scalarRowBytes(mode, d),
    read(input: PayloadLike, { n, d }: SectionContext, corrupt: (what: string) => Error) {
      const payload = asPayload(input); // a Payload from decodeVlc; bytes in one array from a test or a small caller
      const want = scalarPayloadBytes(mode, n, d);
      if (payload.length !== want)
        throw corrupt(`section 'residuals' has ${payload.length} bytes, but n = ${n}, d = ${d} ${mode} needs ${want}`);
      const scales = new Float32Array(d);
      new Uint8Array(scales.buffer).set(payload.view(0, 4 * d));
      if (!scales.every((s) => Number.isFinite(s) && s >= 0)) throw corrupt(`section 'residuals': a scale is not a finite number >= 0`);
      if (mode === 'int8') {
        // Views of the file's bytes, not a copy: the codes are most of the file.
        const codes = new Codes<Int8Array>('i8', n, d, payload.buffer, payload.byteOffset + 4 * d);
        if (hasMinus128(codes)) throw corrupt(`section 'residuals': a code is outside -127..127`);
        return new ScalarResiduals(mode, n, d, scales, codes);
      }
      const { codes } = unpackNibbles<Int8Array>((at, length) => payload.view(4 * d + at, length), 'i8', n, d);
      // -8 is the one 4-bit value outside -7..7 (indexOf per piece: no callback per code).
      if (codes.pieces.some((p) => p.indexOf(-8) >= 0)) throw corrupt(`section 'residuals': a code is outside -7..7`);
      return new ScalarResiduals(mode, n, d, scales, codes);
    },
  };
  return section;
}
