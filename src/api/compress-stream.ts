// compress() for inputs larger than memory: nothing holds n·d values. A fixed-layout file (.npy,
// .fvecs: io/readers/blocks.ts), or several (a sharded input: their rows concatenated in the order
// the whole-file reader takes them, io/shards.ts), is read where it lies, a block of rows at a time:
//
//   1. one pass checks every value (NaN, Inf, too large: the readers' words) and finds the largest
//      |x| (threads reading and checking their ranges), gathering the training sample's rows from
//      the blocks as they pass;
//   2. the loop trains on the sample (api/train.ts: on every GPU of the backend, as in memory);
//   3. the final pass assigns each block of rows on an engine of its own (on a GPU, blocks of
//      millions of rows, one GPU a lane, several GPUs at once: stream-blocks.ts), told the whole
//      data's figures (as a shard of a sharded engine is, so the energy is the one engine's, to the
//      bit), while the codec's block encoder scans the block on the same GPU (codecs/registry/codec.ts
//      BlockEncoder, CodecDevice.scalarRanges);
//   4. the quality figures are measured on the rows they read (quality/measure.ts measuredRows);
//   5. one more pass encodes each block (on a GPU per lane, or the host's encoder threads:
//      CodecDevice.scalarCodes) into host memory, or a temp file beside the output when memory is
//      short, then the file is written (atomically).
//
// The bytes are those of the in-memory path (test/api/compress-stream.test.ts, test/gpu/stream.test.ts).
// Memory: a few blocks of rows and their engines, the training sample, the quality rows (at most
// 120,000), the anchors, n assignment ids, and the codes (unless spilled). Used for a run with a
// fixed residual whose codec has a block encoder (none, int8, int4) and the l2 metric, on the CPU
// from 2 GiB of input, on a GPU from a quarter of the host's memory (below that the whole-file
// path, which keeps the rows on the GPUs, is faster), or whatever the size with `stream`.
import * as os from 'node:os';
import { configFor, DEFAULT_CONFIG } from '../anneal/config.js';
import { cudaUsable, selectBackendParts } from '../backend/select.js';
import { firstAtLeast } from '../backend/sharded/engine.js';
import { blockEncoderFor, codecName, fixedPlan, storable, streamable, type BlockEncoder } from '../codec-registry/index.js';
import { STREAM_BLOCK_ROWS } from '../codecs/scalar-blocks.js';
import { UsageError } from '../errors.js';
import { interruptSignal } from '../interrupt.js';
import { quoteName } from '../io/names.js';
import type { OutputPlan } from '../io/output.js';
import type { BlockReader } from '../io/readers/blocks.js';
import { badRows } from '../io/readers/validate.js';
import { openInputBlocks } from '../io/shards.js';
import { crc32c } from '../io/vlc/crc32c.js';
import { prefaultAhead } from '../io/prefault.js';
import { writeVlc, writeVlcStreamed } from '../io/vlc/file.js';
import { storedAnchors } from '../io/vlc/format.js';
import { log, silentReporter } from '../log.js';
import { measuredRows, measureQuality, measureQualityOfRows } from '../quality/measure.js';
import type { CodedResiduals } from '../codecs/types.js';
import { allocDataset, rowsF32, type Dataset } from '../vectors/dataset.js';
import { scaledDataset, scaleFor, scaleInPlace } from '../vectors/scale.js';
import { goalOf, qualityWarning, sizer } from './compress-codec.js';
import { vlcContent } from './compress-file.js';
import { compressStats } from './compress-report.js';
import { trainingSteps, unscaledResult, type CompressOptions, type CompressResult } from './compress.js';
import { defaultAnchors, storableAnchorDtype } from './compress-steps.js';
import { resolveSample, sampleSize } from './sample.js';
import { finalPass, openCodesStore, overBlocks, type CodesStore } from './stream-blocks.js';
import { train, trainingSample, type TrainEngines } from './train.js';

/** Inputs of at least this many bytes are streamed on the CPU (when they can be); smaller ones are read whole, which is faster. */
const STREAM_MIN_BYTES = 2 ** 31;
let streamMinBytes: number | undefined;

/** Tests: stream inputs of at least `bytes`, on any device (undefined restores the defaults). */
export function setStreamMinBytesForTests(bytes?: number): void {
  streamMinBytes = bytes;
}

/** On a GPU, inputs of at least this share of the host's memory: the whole-file path holds them twice at its peak. */
const GPU_STREAM_MEMORY_SHARE = 0.25;

/** Rows of a GPU's block: millions, so that opening an engine, uploading the anchors and screening them are amortised. */
const GPU_BLOCK_ROWS = 256 * STREAM_BLOCK_ROWS;

let blockRows: number | undefined;

/** Tests: blocks of `rows` rows on every device (a multiple of the encoders' 16,384), so that small inputs span several; undefined restores the defaults. */
export function setStreamBlockRowsForTests(rows?: number): void {
  if (rows !== undefined && (rows <= 0 || rows % (STREAM_BLOCK_ROWS / 4) !== 0)) throw new RangeError(`block rows ${rows}: a multiple of ${STREAM_BLOCK_ROWS / 4}`);
  blockRows = rows;
}

/**
 * Blocks in flight at once in the checking and encoding passes: each read on up to 8 threads
 * (parallel-read.ts), so that reading one overlaps the work on another and a large host's cores
 * share the copying from the page cache.
 */
const LANES = 4;

/**
 * compress() of `input` streamed, or undefined when this run is not one the streamed path takes
 * (then nothing was written and compress() reads the input whole).
 */
export async function compressStreamed(input: string | string[], o: CompressOptions, out: OutputPlan, t0: number): Promise<CompressResult | undefined> {
  const goal = goalOf(o);
  // ip and cosine (a unit copy of the rows, their norms) read the input whole so far.
  if (goal.kind !== 'fixed' || (o.metric ?? 'l2') !== 'l2') return undefined;
  if (!streamable({ mode: goal.choice.residual })) return undefined;
  if (input === '-' || (Array.isArray(input) && input.includes('-'))) return undefined;
  const reader = openInputBlocks(input, o);
  if (!reader) return undefined;
  try {
    const bytes = reader.n * reader.d * (reader.dtype === 'f32' ? 4 : 2);
    const gpu = cudaUsable(o.device ?? 'auto');
    const least = o.stream ? 0 : streamMinBytes ?? (gpu ? Math.max(STREAM_MIN_BYTES, GPU_STREAM_MEMORY_SHARE * os.totalmem()) : STREAM_MIN_BYTES);
    if (bytes < least) return undefined;
    return await streamed(reader, Array.isArray(input) ? input.join(' ') : input, o, out, t0, goal.choice);
  } finally {
    reader.close();
  }
}

async function streamed(
  reader: BlockReader, input: string, o: CompressOptions, out: OutputPlan, t0: number, choice: Parameters<typeof fixedPlan>[0],
): Promise<CompressResult | undefined> {
  const { n, d } = reader;
  const seed = o.seed ?? DEFAULT_CONFIG.seed;
  const progress = o.progress ?? silentReporter;
  const signal = o.signal ?? interruptSignal;

  // The shape alone (no rows): what sizing, the manifest and the report read of a dataset.
  const ds: Dataset = { n, d, dtype: reader.dtype, buffer: new SharedArrayBuffer(8), byteOffset: 0, format: reader.format, dropped: 0, inputDtype: reader.inputDtype };

  const m = o.anchors ?? defaultAnchors(n);
  if (m > n) throw new UsageError(`--anchors ${m} is more than the ${n} vectors in ${input}; use at most ${n}`);
  const anchorDtype0 = o.anchorDtype ?? 'f16';
  const configOf = (kind: 'cpu' | 'cuda') => configFor(o.effort ?? 'default', m, { seed, ...(o.iters !== undefined ? { maxIters: o.iters } : {}) }, kind);
  const size = sizer({ ds, anchorDtype: anchorDtype0, cfg: configOf('cuda'), sampleRows: n, seed, device: 'cuda' });
  const plan = fixedPlan(choice, { n, d, m, fileBytes: (payload) => size.withPayload(payload, m, choice.residual) });
  if (!storable(plan, n, d, m)) return undefined;
  const { backend, parts } = await selectBackendParts({ device: o.device ?? 'auto', gpu: o.gpu ?? 0 });
  let closed = false;
  try {
    const sample = resolveSample(o.sample ?? 'auto', backend.kind, n, d, m);
    const sampleRows = sampleSize(sample, n, m);
    if (sampleRows >= n) return undefined; // training on every row holds them all: the whole-file path
    const cfg = configOf(backend.kind);
    const per = blockRows ?? (backend.kind === 'cuda' ? GPU_BLOCK_ROWS : STREAM_BLOCK_ROWS);
    log().debug(`streaming ${n} rows in blocks of ${per} (${parts.length} ${parts.length === 1 ? 'lane' : 'lanes'} in the final pass)`);

    // 1. Every value checked, the largest |x| found, the training sample's rows taken as they pass.
    const reading = progress.step(`reading ${quoteName(input)}`, 'vectors', n);
    const list = trainingSample(cfg.seed, n, sampleRows);
    let held: Dataset | undefined = allocDataset(sampleRows, d, reader.dtype, `${sampleRows} rows of ${reader.format}`);
    const rowBytes = d * (reader.dtype === 'f32' ? 4 : 2);
    let top = 0;
    let firstBad = Infinity;
    let problem: { file: string; what: string } | undefined;
    let checked = 0;
    await overBlocks({ n, per, lanes: LANES, read: (r0, r1, into) => reader.readChecked(r0, r1, into).then((g) => {
      if (g.problem && r0 < firstBad) [firstBad, problem] = [r0, g.problem];
      top = Math.max(top, g.maxAbs);
      return g.ds;
    }), wanted: (b) => b * per < firstBad }, async (_, x, r0, r1) => {
      if (r0 >= firstBad) return;
      const from = new Uint8Array(x.buffer, x.byteOffset, (r1 - r0) * rowBytes);
      // The sample's rows in this block, k0 .. k1 − 1 (a view of their room: the whole sample may pass 2^32 bytes).
      const k0 = firstAtLeast(list, r0), k1 = firstAtLeast(list, r1);
      const to = new Uint8Array(held!.buffer, held!.byteOffset + k0 * rowBytes, (k1 - k0) * rowBytes);
      for (let k = k0; k < k1; k++) to.set(from.subarray((list[k] - r0) * rowBytes, (list[k] - r0 + 1) * rowBytes), (k - k0) * rowBytes);
      reading.update((checked += r1 - r0), n);
    });
    if (problem) {
      if (o.dropInvalid) return undefined; // dropping rows renumbers them: the whole-file path does it
      throw badRows(problem.file, problem.what);
    }
    reading.end();
    const readSeconds = (performance.now() - t0) / 1000;
    const knn = backend.exactKnn;
    const scale = scaleFor(top);
    const setupSeconds = 0; // sizing and the backend come before the checking pass, counted with it
    if (scale !== 1) log().debug(`the vectors' largest magnitude is ${(1 / scale).toPrecision(3)}-scale: training on them multiplied by 2^${Math.log2(scale)} (exact)`);

    // 2-3. Training on the sample, then the final pass block by block, the codec scanning each block.
    let encoder: BlockEncoder | undefined;
    let anchorDtype: 'f16' | 'f32' = anchorDtype0;
    let stored: Float32Array | undefined;
    const steps = trainingSteps(o, progress, signal);
    const engines: TrainEngines = {
      n,
      whole: () => Promise.reject(new Error('streamed compress: no engine holds every row')),
      rows: (rows) => {
        if (rows.length !== list.length || rows.some((r, k) => r !== list[k])) return Promise.reject(new Error('streamed compress: training asked for other rows than the sample read'));
        if (!held) return Promise.reject(new Error('streamed compress: the sample was let go'));
        return backend.open(scaledDataset(held, scale), m);
      },
      finalPass: async (anchors) => {
        const unscaled = scale === 1 ? anchors : scaleInPlace(anchors.slice(), 1 / scale);
        anchorDtype = storableAnchorDtype(unscaled, o.anchorDtype);
        stored = storedAnchors(unscaled, anchorDtype);
        encoder = blockEncoderFor(plan, n, d, stored);
        const read = (r0: number, r1: number, into?: Dataset) => reader.readAsync(r0, r1, into);
        return finalPass(parts, { n, per, read }, m, top * scale, anchors, (x) => scaledDataset(x, scale), async (x, r0, assign, part) => encoder?.scan(x, r0, assign, part));
      },
    };
    const trained = await train(engines, cfg, sample, steps.hooks);
    held = undefined; // the sample's rows (4.3 GB for a billion's default sample) are let go before the codes are made
    steps.end();
    const result = unscaledResult(scale, trained);
    const assignments = result.assignments;
    const gatherWithAnchors = (rows: number[]) => ({ x: reader.gather(rows), assign: Uint32Array.from(rows, (r) => assignments[r]) });
    encoder?.finish(gatherWithAnchors);

    // 4. The quality figures, on the rows they read.
    const tq = performance.now();
    const measuring = progress.step('measuring the quality of the file', '');
    const rows = measuredRows(n);
    const got = gatherWithAnchors(rows ?? Array.from({ length: n }, (_, i) => i));
    const res: CodedResiduals | undefined = await encoder?.residualsOf(got.x, got.assign);
    const local = rows ? new Map(rows.map((r, k) => [r, k])) : undefined;
    const decode = (i: number, outRow: Float32Array) => {
      const k = local ? local.get(i)! : i;
      const a = got.assign[k] * d;
      outRow.set(stored!.subarray(a, a + d));
      res?.addTo(k, outRow);
    };
    const xs = rowsF32(got.x, 0, got.x.n);
    const quality = rows ? await measureQualityOfRows(xs, rows, n, d, decode, knn) : await measureQuality(xs, n, d, decode, knn);
    measuring.end();
    const qualitySeconds = (performance.now() - tq) / 1000;

    // 5. The codes, block by block, kept until the file is written; then the file.
    const tr = performance.now();
    let codes: CodesStore | undefined;
    let head: Uint8Array | undefined;
    if (encoder) {
      const enc = encoder;
      const encoding = progress.step(`encoding ${codecName(plan)} residuals`, 'vectors', n);
      head = enc.head();
      const store = (codes = openCodesStore(out, n, enc.codesBytes));
      log().debug(`the codes are kept in ${store.where} until the file is written`);
      let encoded = 0;
      // Each block's codes land in fresh memory: its pages touched ahead on other threads, not by
      // the one thread that downloads every GPU's codes (a block of 16.8M rows: 2.1 GB of pages).
      const stopAhead = enc.scratchBytes ? prefaultAhead(enc.scratchBytes(per), Math.floor(n / per), store.where === 'memory' ? LANES : 1) : () => {};
      try {
        await overBlocks({ n, per, lanes: LANES, read: (r0, r1, into) => reader.readAsync(r0, r1, into) }, async (lane, x, r0, r1) => {
          const { pieces, crc } = await enc.encode(x, r0, assignments.subarray(r0, r1), parts[lane % parts.length]);
          store.put(r0, r1 - r0, pieces, crc);
          encoding.update((encoded += r1 - r0), n);
        });
      } catch (e) {
        store.discard();
        throw e;
      } finally {
        stopAhead();
      }
      encoding.end();
    }
    const residualSeconds = (performance.now() - tr) / 1000;
    const tw = performance.now();
    const writing = progress.step(`writing ${out.target === '-' ? 'stdout' : quoteName(out.target)}`, 'bytes');
    let written: number;
    try {
      const residuals: CodedResiduals | undefined = head && {
        mode: plan.mode,
        addTo: () => { throw new Error('streamed residuals are not decoded'); },
        payload: () => [head!],
      };
      const content = vlcContent({
        ds, m, anchorDtype, residual: plan.mode, residualEnergy: encoder?.residualEnergy(), residuals, cfg, sampleRows, seed, device: backend.kind, result, quality,
      });
      const onBytes = (w: number, total: number) => writing.update(w, total);
      written = codes && head ? await writeVlcStreamed(out, content, codes.tail(crc32c(head)), onBytes) : await writeVlc(out, content, onBytes);
    } finally {
      codes?.discard();
    }
    writing.end();
    const writeSeconds = (performance.now() - tw) / 1000;
    const warning = qualityWarning({ kind: 'fixed', choice }, undefined, quality.recall.recall_at_10_all, m, n, false);
    if (warning) log().warn(warning);
    const tt = performance.now();
    closed = true;
    await backend.close();
    return compressStats({
      ds, m, codec: plan, anchorDtype, bytes: written, result, quality, goal: { kind: 'fixed', choice }, choice: undefined, backend, seed,
      seconds: {
        read: readSeconds, setup: setupSeconds, choose: 0, residual: residualSeconds, quality: qualitySeconds, write: writeSeconds,
        teardown: (performance.now() - tt) / 1000, total: (performance.now() - t0) / 1000,
      },
    });
  } finally {
    if (!closed) await backend.close();
  }
}
