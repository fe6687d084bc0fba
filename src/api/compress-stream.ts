// compress() for inputs larger than memory: nothing holds n·d values. A fixed-layout file (.npy,
// .fvecs: io/readers/blocks.ts) is read where it lies, a block of rows at a time:
//
//   1. one pass checks every value (NaN, Inf, too large: the readers' words) and finds the largest |x|;
//   2. the training sample is read row by row, and the loop trains on it (api/train.ts);
//   3. the final pass assigns each block of rows on an engine of its own, told the whole data's
//      figures (as a shard of a sharded engine is, so the energy is the one engine's, to the bit),
//      while the codec's block encoder scans the block (codecs/registry/codec.ts BlockEncoder);
//   4. the quality figures are measured on the rows they read (quality/measure.ts measuredRows);
//   5. one more pass encodes each block and spills its codes to a temp file beside the output,
//      then the file is written (atomically) with the codes copied in after its head.
//
// The bytes are those of the in-memory path (test/api/compress-stream.test.ts compares them).
// Memory: a block of rows (STREAM_BLOCK_ROWS) and its engine, the training sample, the quality
// rows (at most 120,000), the anchors and n assignment ids. Used for a CPU run with a fixed
// residual whose codec has a block encoder (none, int8, int4); other runs read the input whole.
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { configFor, DEFAULT_CONFIG } from '../anneal/config.js';
import { addInt64, maxInt64 } from '../backend/fixed.js';
import { selectBackend } from '../backend/select.js';
import type { Backend, IterParams, Partials } from '../backend/types.js';
import { blockEncoderFor, codecName, fixedPlan, storable, streamable, type BlockEncoder } from '../codec-registry/index.js';
import { STREAM_BLOCK_ROWS } from '../codecs/scalar-blocks.js';
import { UsageError } from '../errors.js';
import { checkpoint, interruptSignal, onCleanup } from '../interrupt.js';
import { quoteName } from '../io/names.js';
import type { OutputPlan } from '../io/output.js';
import { openBlockReader, type BlockReader } from '../io/readers/blocks.js';
import { badInput } from '../io/readers/source.js';
import { blockProblem } from '../io/readers/validate.js';
import { crc32c } from '../io/vlc/crc32c.js';
import { writeVlcStreamed } from '../io/vlc/file.js';
import { storedAnchors } from '../io/vlc/format.js';
import { log, silentReporter } from '../log.js';
import { measuredRows, measureQuality, measureQualityOfRows } from '../quality/measure.js';
import type { CodedResiduals } from '../codecs/types.js';
import { rowsF32, type Dataset } from '../vectors/dataset.js';
import { maxAbsOf, scaledDataset, scaleFor, scaleInPlace } from '../vectors/scale.js';
import { goalOf, qualityWarning, sizer } from './compress-codec.js';
import { vlcContent } from './compress-file.js';
import { compressStats } from './compress-report.js';
import { trainingSteps, unscaledResult, type CompressOptions, type CompressResult } from './compress.js';
import { defaultAnchors, storableAnchorDtype } from './compress-steps.js';
import { resolveSample, sampleSize } from './sample.js';
import { train, type TrainEngines } from './train.js';

/** Inputs of at least this many bytes are streamed (when they can be); smaller ones are read whole, which is faster. */
const STREAM_MIN_BYTES = 2 ** 31;
let streamMinBytes = STREAM_MIN_BYTES;

/** Tests: stream inputs of at least `bytes` (undefined restores the default). */
export function setStreamMinBytesForTests(bytes?: number): void {
  streamMinBytes = bytes ?? STREAM_MIN_BYTES;
}

let blockRows = STREAM_BLOCK_ROWS;

/** Tests: blocks of `rows` rows (a multiple of the encoders' 16,384), so that small inputs span several; undefined restores the default. */
export function setStreamBlockRowsForTests(rows?: number): void {
  if (rows !== undefined && (rows <= 0 || rows % (STREAM_BLOCK_ROWS / 4) !== 0)) throw new RangeError(`block rows ${rows}: a multiple of ${STREAM_BLOCK_ROWS / 4}`);
  blockRows = rows ?? STREAM_BLOCK_ROWS;
}

const FINAL: IterParams = { temperature: 0, step: 0, huber: 0 };

/**
 * compress() of `input` streamed, or undefined when this run is not one the streamed path takes
 * (then nothing was written and compress() reads the input whole).
 */
export async function compressStreamed(input: string, o: CompressOptions, out: OutputPlan, t0: number): Promise<CompressResult | undefined> {
  const goal = goalOf(o);
  // ip and cosine (a unit copy of the rows, their norms) read the input whole so far.
  if (goal.kind !== 'fixed' || o.device === 'cuda' || (Array.isArray(o.gpu) && o.gpu.length > 1) || (o.metric ?? 'l2') !== 'l2') return undefined;
  if (!streamable({ mode: goal.choice.residual })) return undefined;
  const reader = openBlockReader(input, o.format);
  if (!reader) return undefined;
  try {
    const bytes = reader.n * reader.d * (reader.dtype === 'f32' ? 4 : 2);
    if (bytes < streamMinBytes) return undefined;
    return await streamed(reader, input, o, out, t0, goal.choice);
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
  const per = blockRows;
  const blocks = Math.ceil(n / per);
  const each = async (f: (x: Dataset, r0: number, r1: number) => Promise<void> | void, step: { update(k: number, t?: number): void }) => {
    let buf: Dataset | undefined;
    for (let b = 0; b < blocks; b++) {
      await checkpoint();
      const r0 = b * per, r1 = Math.min(n, r0 + per);
      buf = reader.read(r0, r1, buf);
      await f(buf, r0, r1);
      step.update(r1, n);
    }
  };

  // The shape alone (no rows): what sizing, the manifest and the report read of a dataset.
  const ds: Dataset = { n, d, dtype: reader.dtype, buffer: new SharedArrayBuffer(8), byteOffset: 0, format: reader.format, dropped: 0, inputDtype: reader.inputDtype };

  const m = o.anchors ?? defaultAnchors(n);
  if (m > n) throw new UsageError(`--anchors ${m} is more than the ${n} vectors in ${input}; use at most ${n}`);
  const anchorDtype0 = o.anchorDtype ?? 'f16';
  const configOf = (kind: 'cpu' | 'cuda') => configFor(o.effort ?? 'default', m, { seed, ...(o.iters !== undefined ? { maxIters: o.iters } : {}) }, kind);
  const size = sizer({ ds, anchorDtype: anchorDtype0, cfg: configOf('cuda'), sampleRows: n, seed, device: 'cuda' });
  const plan = fixedPlan(choice, { n, d, m, fileBytes: (payload) => size.withPayload(payload, m, choice.residual) });
  if (!storable(plan, n, d, m)) return undefined;
  const backend = await selectBackend({ device: o.device ?? 'auto', gpu: Array.isArray(o.gpu) ? o.gpu[0] ?? 0 : o.gpu ?? 0 });
  let closed = false;
  try {
    if (backend.kind !== 'cpu') return undefined;
    const sample = resolveSample(o.sample ?? 'auto', backend.kind, n, d, m);
    const sampleRows = sampleSize(sample, n, m);
    if (sampleRows >= n) return undefined; // training on every row holds them all: the whole-file path
    // 1. Every value checked, the largest |x| found.
    const reading = progress.step(`reading ${quoteName(input)}`, 'vectors', n);
    let top = 0;
    const dropping = new Error('rows to drop');
    try {
      await each((x, r0) => {
        const problem = blockProblem(x, r0);
        if (problem !== undefined) {
          if (o.dropInvalid) throw dropping; // dropping rows renumbers them: the whole-file path does it
          throw badInput(reader.name, `${problem}; fix the data or pass --drop-invalid to skip such rows`);
        }
        top = Math.max(top, maxAbsOf(x));
      }, reading);
    } catch (e) {
      if (e === dropping) return undefined;
      throw e;
    }
    reading.end();
    const readSeconds = (performance.now() - t0) / 1000;
    const knn = backend.exactKnn;
    const cfg = configOf(backend.kind);
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
      rows: (list) => backend.open(scaledDataset(reader.gather(list), scale), m),
      finalPass: async (anchors) => {
        const unscaled = scale === 1 ? anchors : scaleInPlace(anchors.slice(), 1 / scale);
        anchorDtype = storableAnchorDtype(unscaled, o.anchorDtype);
        stored = storedAnchors(unscaled, anchorDtype);
        encoder = blockEncoderFor(plan, n, d, stored);
        return finalPass(backend, n, m, top * scale, anchors, (f) => each(async (x, r0, r1) => f(x, scaledDataset(x, scale), r0, r1), { update: () => {} }), (x, r0, assign) => encoder?.scan(x, r0, assign));
      },
    };
    const trained = await train(engines, cfg, sample, steps.hooks);
    steps.end();
    const result = unscaledResult(scale, trained);
    const assignments = result.assignments;
    const gatherWithAnchors = (list: number[]) => ({ x: reader.gather(list), assign: Uint32Array.from(list, (r) => assignments[r]) });
    encoder?.finish(gatherWithAnchors);

    // 4. The quality figures, on the rows they read.
    const tq = performance.now();
    const measuring = progress.step('measuring the quality of the file', '');
    const rows = measuredRows(n);
    const got = gatherWithAnchors(rows ?? Array.from({ length: n }, (_, i) => i));
    const res: CodedResiduals | undefined = encoder?.residualsOf(got.x, got.assign);
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

    // 5. The codes, block by block, spilled beside the output; then the file.
    const tr = performance.now();
    let spill: Spill | undefined;
    let head: Uint8Array | undefined;
    let crc = 0;
    if (encoder) {
      const enc = encoder;
      const encoding = progress.step(`encoding ${codecName(plan)} residuals`, 'vectors', n);
      head = enc.head();
      crc = crc32c(head);
      spill = openSpill(out);
      const sp = spill;
      try {
        await each((x, r0) => {
          const bytes = enc.encode(x, r0, assignments.subarray(r0, r0 + x.n));
          crc = crc32c(bytes, crc);
          sp.write(bytes);
        }, encoding);
      } catch (e) {
        sp.discard();
        throw e;
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
      written = spill
        ? await writeVlcStreamed(out, content, { bytes: spill.bytes, crc, write: (sink) => spill!.copyTo(sink) }, onBytes)
        : await (await import('../io/vlc/file.js')).writeVlc(out, content, onBytes);
    } finally {
      spill?.discard();
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

type BlockVisitor = (x: Dataset, scaled: Dataset, r0: number, r1: number) => Promise<void>;

/**
 * The exact hard pass over every row, a block at a time: each block on an engine of its own that
 * holds rows [r0, r1) of the whole (setGlobal: the whole data's n and largest |x|, so its
 * fixed-point sums are the one engine's), their partial sums added exactly, the energy taken from
 * the total (as a sharded engine does). `scan` sees each block (as read) with its anchors.
 */
async function finalPass(
  backend: Backend, n: number, m: number, maxAbs: number, anchors: Float32Array,
  blocks: (f: BlockVisitor) => Promise<void>, scan: (x: Dataset, r0: number, assign: Uint32Array) => void,
): Promise<{ energy: number; assignments: Uint32Array }> {
  const assignments = new Uint32Array(n);
  let total: Partials | undefined;
  let energy = NaN;
  let seen = 0;
  let done = 0;
  await blocks(async (x, scaled, r0, r1) => {
    const engine = await backend.open(scaled, m);
    try {
      engine.setGlobal({ n, maxAbs, rowOffset: r0 });
      await engine.setAnchors(anchors);
      const part = await engine.accumulate(FINAL);
      if (!total) total = part;
      else {
        addInt64(total.sums, part.sums);
        maxInt64(total.far, part.far);
      }
      seen = Math.max(seen, engine.maxAbs);
      const assign = await engine.assignments();
      assignments.set(assign, r0);
      scan(x, r0, assign);
      done = r1;
      if (r1 === n) energy = (await engine.applyUpdate(total, FINAL)).energy;
    } finally {
      await engine.dispose();
    }
  });
  if (done !== n) throw new Error(`streamed final pass: ${done} of ${n} rows`);
  // The shards were told the largest |x| the first pass found: it must be theirs.
  if (seen !== maxAbs) throw new Error(`streamed final pass: the blocks' largest |x| is ${seen}, the first pass found ${maxAbs}`);
  return { energy, assignments };
}

interface Spill {
  readonly bytes: number;
  write(bytes: Uint8Array): void;
  copyTo(sink: { write(chunk: Uint8Array): Promise<void> }): Promise<void>;
  discard(): void;
}

const COPY_CHUNK = 16 << 20;

/** A temp file for the codes: beside the output file (the same disk), or in the temp directory for stdout and devices. */
function openSpill(out: OutputPlan): Spill {
  const dir = out.kind === 'file' ? path.dirname(path.resolve(out.path)) : os.tmpdir();
  const file = path.join(dir, `.vlc-codes-${process.pid}-${Date.now().toString(36)}.tmp`);
  let fd: number | undefined = fs.openSync(file, 'wx+', 0o600);
  let bytes = 0;
  const discard = () => {
    if (fd !== undefined) fs.closeSync(fd);
    fd = undefined;
    fs.rmSync(file, { force: true });
  };
  const unregister = onCleanup(discard);
  return {
    get bytes() {
      return bytes;
    },
    write(b) {
      let at = 0;
      while (at < b.length) at += fs.writeSync(fd!, b, at, b.length - at, bytes + at);
      bytes += b.length;
    },
    async copyTo(sink) {
      const buf = new Uint8Array(Math.min(COPY_CHUNK, Math.max(1, bytes)));
      for (let at = 0; at < bytes; ) {
        const want = Math.min(buf.length, bytes - at);
        let got = 0;
        while (got < want) {
          const k = fs.readSync(fd!, buf, got, want - got, at + got);
          if (k === 0) throw new Error(`the codes' temp file ended at ${at + got} of ${bytes} bytes`);
          got += k;
        }
        await sink.write(buf.slice(0, want));
        at += want;
      }
    },
    discard() {
      unregister();
      discard();
    },
  };
}
