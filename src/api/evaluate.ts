// evaluate(): how much a .vlc file lost, answering two questions apart.
//   1. Compression quality: reconstruction error over every vector (MSE, relative error, mean
//      cosine) and, for a seeded sample of the original vectors as queries, recall of exact search
//      over the DECODED vectors against exact search over the originals (src/quality/).
//   2. With nprobe P, search quality too: recall of search() probing at least P anchors per
//      query (src/search/) against the same exact results. Not by default: it answers another
//      question, and costs more than the rest (each candidate is decoded on the main thread).
// Each query vector is left out of its own results, so recall measures finding its neighbours.
// What `vlc eval` runs, and what `import { evaluate } from 'vlc'` gives a Node program.
import { cpuKnn } from '../backend/cpu/index.js';
import { selectExactKnn, type DeviceChoice } from '../backend/select.js';
import type { ExactKnn, Neighbours } from '../backend/types.js';
import { UsageError } from '../errors.js';
import { checkpoint } from '../interrupt.js';
import type { ReadOptions } from '../io/read.js';
import type { VlcFile } from '../io/vlc/format.js';
import { reconstructInto, reconstructRange } from '../io/vlc/reconstruct.js';
import { grouped, sizeFigures, type SizeFigures } from '../io/vlc/stats.js';
import { log, silentReporter, type Reporter } from '../log.js';
import { decodedRecall, recallOf, trueNeighbours, type DecodedRecall } from '../quality/recall.js';
import { reconstructionQuality, type ReconstructionQuality } from '../quality/reconstruction.js';
import { sampleIndices } from '../quality/sample.js';
import { searchCompressed, vlcSearchIndex } from '../search/index.js';
import { asRows, rowInto, rowsF32, type Dataset } from '../vectors/dataset.js';
import { isRowsReader, type Originals, type RowsReader } from '../quality/originals.js';
import { openBlockReader } from '../io/readers/blocks.js';
import { badRows, blockProblem } from '../io/readers/validate.js';
import { maxAbsOf } from '../vectors/scale.js';
import { nameOf, vectorsOf, vlcOnDiskOf, type VectorsInput, type VlcInput } from './inputs.js';
import { withMetric } from '../search/metric.js';
import type { Metric } from '../vectors/metric.js';
import { searchMetric } from './search.js';

export interface EvaluateOptions extends ReadOptions {
  /** Original vectors sampled as queries for recall (default 1000). */
  queries?: number;
  /** Seed of the query sample (default 1). */
  seed?: number;
  /** Also measure search quality: the recall of search() probing at least this many anchors per query. */
  nprobe?: number;
  /** Where the exact searches run: 'auto' (default; a GPU when usable), 'cuda' (never falls back) or 'cpu'. */
  device?: DeviceChoice;
  /** GPU index (default 0; of a list, the first). */
  gpu?: number | number[];
  /** Neighbours by this metric instead of the file's (search()'s rule: a cosine file only by cosine). */
  metric?: Metric;
  /** Hears reading and each measurement (the CLI draws them on a terminal). */
  progress?: Reporter;
}

/**
 * How much the .vlc file `vlc` lost against `original`, the vectors it was compressed from: what
 * `vlc eval --json` prints after `schema` and `command` (docs/json.md), `seconds` reading included.
 */
export async function evaluate(original: VectorsInput, vlc: VlcInput, o: EvaluateOptions = {}): Promise<EvalResult & { seconds: number }> {
  if (original === '-' && vlc === '-') throw new UsageError('only one of the two inputs can be stdin (-)');
  const queries = o.queries ?? 1000;
  if (!Number.isInteger(queries) || queries < 1) throw new UsageError(`--queries must be a whole number of at least 1 (got ${queries})`);
  const progress = o.progress ?? silentReporter;
  const t0 = performance.now();
  // The .vlc first: small parts checked whole, so a damaged one fails before a large input is read.
  // Its codes stay on disk, read a block of rows at a time (--nprobe's index search too:
  // search/block-scan.ts; a pq file's codes whole for it).
  const { file, close } = await vlcOnDiskOf(vlc, progress);
  let originals: { x: Originals; n: number; d: number; close(): void } | undefined;
  try {
    const metric = searchMetric(file, o.metric, nameOf(vlc));
    originals = await originalsOf(original, o, progress);
    const { n, d } = file.manifest;
    if (originals.n !== n || originals.d !== d)
      throw new UsageError(
        `${nameOf(original)} holds ${grouped(originals.n)} x ${originals.d} vectors but ${nameOf(vlc)} encodes ${grouped(n)} x ${d}; ` +
          `give the file it was compressed from${file.manifest.input.dropped ? ' (with --drop-invalid, as compress had)' : ''}`,
      );
    // The exact searches (ground truth and over the decoded vectors) on the GPU when there is one.
    const exact = await selectExactKnn({ device: o.device ?? 'auto', gpu: o.gpu ?? 0 });
    let result: EvalResult;
    try {
      log().debug(`exact search on ${exact.label}`);
      result = await evaluateFile(originals.x, file, { queries, seed: o.seed ?? 1, nprobe: o.nprobe, knn: exact.knn, metric }, progress);
    } finally {
      await exact.close();
    }
    return { ...result, seconds: (performance.now() - t0) / 1000 };
  } finally {
    originals?.close();
    close();
  }
}

/**
 * The original vectors: a .npy (C order, f32/f16) or .fvecs path read where it lies, a block of
 * rows at a time (io/readers/blocks.ts), every value checked first as reading it whole would
 * (the largest |x| found on the way); anything else — other formats, several files,
 * --drop-invalid (dropping renumbers rows), vectors in memory — read whole.
 */
async function originalsOf(input: VectorsInput, o: EvaluateOptions, progress: Reporter): Promise<{ x: Originals; n: number; d: number; close(): void }> {
  const reader = typeof input === 'string' && !o.dropInvalid ? openBlockReader(input, o.format) : undefined;
  if (!reader) {
    const ds = await vectorsOf(input, o, progress);
    return { x: ds, n: ds.n, d: ds.d, close: () => {} };
  }
  try {
    const { n, d } = reader;
    const per = Math.max(1, Math.floor(READ_BYTES / (d * (reader.dtype === 'f32' ? 4 : 2))));
    const reading = progress.step(`reading ${nameOf(input)}`, 'vectors', n);
    let top = 0;
    let buf: Dataset | undefined;
    for (let r0 = 0; r0 < n; r0 += per) {
      const r1 = Math.min(n, r0 + per);
      buf = reader.read(r0, r1, buf);
      const problem = blockProblem(buf, r0);
      if (problem !== undefined) throw badRows(reader.name, problem);
      top = Math.max(top, maxAbsOf(buf));
      reading.update(r1, n);
      await checkpoint();
    }
    reading.end();
    const x: RowsReader = {
      n, d,
      maxAbs: () => top,
      read: (r0, r1, out) => {
        buf = reader.read(r0, r1, buf);
        out.set(rowsF32(buf, 0, r1 - r0, out)); // f32: a view of the block, copied; f16: decoded into out already
      },
      gather: (list, out) => {
        const rows = reader.gather(list);
        for (let r = 0; r < list.length; r++) rowInto(rows, r, out.subarray(r * d, (r + 1) * d));
      },
    };
    return { x, n, d, close: () => reader.close() };
  } catch (e) {
    reader.close();
    throw e;
  }
}

/** Input bytes one read of the checking pass takes. */
const READ_BYTES = 16 << 20;

export interface EvalResult extends SizeFigures, Omit<ReconstructionQuality, 'measured'> {
  n: number;
  d: number;
  m: number;
  /** Residual mode of the file (none, int8, int4). */
  residual: string;
  /** What the neighbours of the recall figures are by: the file's metric, or the one asked for. */
  metric: Metric;
  /** mse / d: the mean squared error per coordinate. */
  mse_per_dim: number;
  /** Sampled queries (each one of the n vectors). */
  queries: number;
  /** k of "@10": min(10, n − 1). */
  k: number;
  /** Compression quality: exact search over the decoded vectors (all n) vs over the originals. */
  recall_at_1: number | null;
  recall_at_10: number | null;
  /** Search quality (with --nprobe): `vlc search` (index probing) vs exact search over the originals. */
  search: { nprobe: number; recall_at_1: number | null; recall_at_10: number | null } | null;
}

/**
 * What evaluate() measures, on vectors (in memory, or read by the caller in blocks) and a .vlc file
 * already read (its residuals may be read from disk in blocks: each pass reads rows in order). o.knn: the exact search of
 * the ground truth and of the decoded vectors (default: the CPU's).
 */
export async function evaluateFile(
  ds: Originals, file: VlcFile, o: { queries: number; seed: number; nprobe?: number; knn?: ExactKnn; metric?: Metric }, progress: Reporter = silentReporter,
): Promise<EvalResult> {
  const metric = o.metric ?? file.manifest.metric;
  // ip / cosine: both exact searches rank by it (search/metric.ts); a cosine file decodes at the input's scale (its norms), as decompress does.
  const knn = withMetric(o.knn ?? cpuKnn, metric);
  const { n, d, m } = file.manifest;
  const x = ds;
  const decode = (i: number, out: Float32Array) => void reconstructInto(file, i, out);
  const measuring = progress.step('reconstruction error', 'vectors', n);
  const decodeRange = (r0: number, r1: number, out: Float32Array) => void reconstructRange(file, r0, r1, out);
  const quality = reconstructionQuality(x, n, d, decode, null, (done) => measuring.update(done), decodeRange);
  measuring.end();

  const plan = { base: null, queries: sampleIndices(n, o.queries, o.seed) };
  await checkpoint();
  const exactStep = progress.step(`exact search over the originals (${grouped(plan.queries.length)} queries)`, 'vectors', n);
  const truth = await trueNeighbours(x, n, d, plan, knn, (done) => exactStep.update(done));
  exactStep.end();
  await checkpoint();
  const decodedStep = progress.step(`exact search over the decoded vectors (${grouped(plan.queries.length)} queries)`, 'vectors', n);
  const decoded: DecodedRecall = await decodedRecall(x, n, d, decode, plan, truth, knn, (done) => decodedStep.update(done));
  decodedStep.end();
  await checkpoint();

  const nprobe = o.nprobe;
  const search = nprobe === undefined ? null : { nprobe, ...(await probedRecall(x, n, d, vlcSearchIndex(file, metric), plan.queries, truth, decoded.k, nprobe, progress)) };
  return {
    n,
    d,
    m,
    residual: file.manifest.residual,
    metric,
    ...sizeFigures(file.fileBytes, n, d, m, file.manifest.input.dtype),
    mse: quality.mse,
    mse_per_dim: quality.mse / d,
    relative_error: quality.relative_error,
    mean_cosine: quality.mean_cosine,
    queries: decoded.queries,
    k: decoded.k,
    recall_at_1: decoded.recall_at_1,
    recall_at_10: decoded.recall_at_10,
    search,
  };
}

/** Recall of the index-probing search (`vlc search`) against the true lists (k + 1 wide, self included). */
async function probedRecall(
  x: Originals, n: number, d: number, index: ReturnType<typeof vlcSearchIndex>, sample: readonly number[], truth: Neighbours, k: number, nprobe: number,
  progress: Reporter,
): Promise<{ recall_at_1: number | null; recall_at_10: number | null }> {
  const nq = sample.length;
  if (k < 1 || nq === 0) return { recall_at_1: null, recall_at_10: null };
  const q = new Float32Array(nq * d);
  if (isRowsReader(x)) x.gather(sample, q);
  else {
    const rows = asRows(x, n, d);
    sample.forEach((i, r) => rowInto(rows, i, q.subarray(r * d, (r + 1) * d)));
  }
  const searching = progress.step('compressed search', 'queries', nq);
  const got = await searchCompressed(index, q, nq, { k, nprobe, exclude: Int32Array.from(sample), onProgress: (done) => searching.update(done) }, cpuKnn);
  searching.end();
  const { recall_at_1, recall_at_10 } = recallOf(truth, got, k, sample, k);
  return { recall_at_1, recall_at_10 };
}
