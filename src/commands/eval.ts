// `vlc eval <original> <in.vlc>`: how much a .vlc file lost, answering two questions apart.
//   1. Compression quality: reconstruction error over every vector (MSE, relative error, mean
//      cosine) and, for a seeded sample of the original vectors as queries, recall of exact search
//      over the DECODED vectors against exact search over the originals (src/quality/).
//   2. With --nprobe P, search quality too: recall of `vlc search` probing at least P anchors per
//      query (src/search/) against the same exact results. Not by default: it answers another
//      question, and costs more than the rest (each candidate is decoded on the main thread).
// Each query vector is left out of its own results, so recall measures finding its neighbours.
import type { Command } from 'commander';
import { cpuKnn } from '../backend/cpu/index.js';
import { selectExactKnn } from '../backend/select.js';
import type { ExactKnn } from '../backend/types.js';
import { UsageError } from '../errors.js';
import { rowInto, type Dataset } from '../vectors/dataset.js';
import { readInputs } from '../io/shards.js';
import { readVlc } from '../io/vlc/file.js';
import type { VlcFile } from '../io/vlc/format.js';
import { reconstructInto } from '../io/vlc/reconstruct.js';
import { decodedRecall, recallOf, trueNeighbours, type DecodedRecall } from '../quality/recall.js';
import type { Neighbours } from '../backend/types.js';
import { reconstructionQuality, type ReconstructionQuality } from '../quality/reconstruction.js';
import { sampleIndices } from '../quality/sample.js';
import { grouped, percent, sizeFigures, type SizeFigures } from '../io/vlc/stats.js';
import { searchCompressed, vlcSearchIndex } from '../search/index.js';
import { jsonResult } from './json.js';
import { addInputOptions, readOptionsFrom, type InputFlags } from './input-options.js';
import { addExamples } from './help.js';
import {
  addDeviceOptions, addNprobeOption, addOutputOptions, addSeedOption, applyVerbosity, effectiveDevice, parseInteger, type DeviceFlags, type OutputFlags,
} from './options.js';
import { progressFor, reportBytes } from './progress.js';
import { quoteName } from '../io/names.js';
import { checkpoint } from '../interrupt.js';
import { log, silentReporter, type Reporter } from '../log.js';

interface EvalFlags extends InputFlags, OutputFlags, DeviceFlags {
  queries: number;
  seed: number;
  nprobe?: number;
}

export function register(program: Command): void {
  const cmd = program
    .command('eval')
    .description(
      'measure what a .vlc file lost against the original vectors: reconstruction error, cosine and recall@1/@10 of exact ' +
        'search over the decoded vectors; with --nprobe, the recall of `vlc search` (index probing) apart, as search quality',
    )
    .argument('<original>', 'the embedding file that was compressed, or its directory or quoted glob of shards (same reader options as for compress)')
    .argument('<in.vlc>', 'the .vlc file')
    .option('--queries <n>', 'number of original vectors sampled as queries for recall', (v) => parseInteger('--queries', v, 1), 1000);
  addSeedOption(cmd, 'seed of the query sample', 1);
  addNprobeOption(cmd, 'also measure search quality: recall of vlc search probing at least this many anchors per query (its default: 1, or 8 with residuals)');
  addInputOptions(cmd, 'the original');
  addDeviceOptions(cmd);
  addOutputOptions(cmd);
  addExamples(cmd, [
    ['vlc eval emb.npy emb.vlc', 'what compression cost: error, cosine, recall of exact search over the decoded vectors'],
    ['vlc eval emb.npy emb.vlc --nprobe 8 --queries 200', 'and search quality: recall of vlc search probing 8 anchors per query'],
    ['vlc eval emb.npy emb.vlc --nprobe 8 --json | jq \'{recall_at_10, search: .search.recall_at_10}\'', 'a pipeline: both recalls from the JSON'],
  ]);
  cmd
    .action(async (original: string, vlcPath: string, o: EvalFlags) => {
      applyVerbosity(o);
      if (original === '-' && vlcPath === '-') throw new UsageError('only one of the two inputs can be stdin (-)');
      const progress = progressFor(o);
      let result: EvalResult;
      const t0 = performance.now();
      try {
        // The .vlc first: it is small and fully validated, so a damaged one fails before a large input is read.
        const file = await readVlc(vlcPath, reportBytes(progress, vlcPath), reportBytes(progress, vlcPath, 'checking'));
        const ds = await readInputs(original, { ...readOptionsFrom(o), onBytes: reportBytes(progress, original) });
        progress.done();
        const { n, d } = file.manifest;
        if (ds.n !== n || ds.d !== d)
          throw new UsageError(
            `${quoteName(original)} holds ${grouped(ds.n)} x ${ds.d} vectors but ${quoteName(vlcPath)} encodes ${grouped(n)} x ${d}; ` +
              `give the file it was compressed from${file.manifest.input.dropped ? ' (with --drop-invalid, as compress had)' : ''}`,
          );
        // The exact searches (ground truth and over the decoded vectors) on the GPU when there is one.
        const exact = await selectExactKnn({ device: effectiveDevice(cmd, o), gpu: o.gpu });
        try {
          log().debug(`exact search on ${exact.label}`);
          result = await evaluate(ds, file, { queries: o.queries, seed: o.seed, nprobe: o.nprobe, knn: exact.knn }, progress);
        } finally {
          await exact.close();
        }
      } finally {
        progress.done();
      }
      const seconds = (performance.now() - t0) / 1000; // reading included
      const out = { ...result, seconds };
      process.stdout.write(o.json ? JSON.stringify(jsonResult('eval', out)) + '\n' : evalText(out));
    });
}

export interface EvalResult extends SizeFigures, Omit<ReconstructionQuality, 'measured'> {
  n: number;
  d: number;
  m: number;
  /** Residual mode of the file (none, int8, int4). */
  residual: string;
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

/** o.knn: the exact search of the ground truth and of the decoded vectors (default: the CPU's). */
export async function evaluate(
  ds: Dataset, file: VlcFile, o: { queries: number; seed: number; nprobe?: number; knn?: ExactKnn }, progress: Reporter = silentReporter,
): Promise<EvalResult> {
  const knn = o.knn ?? cpuKnn;
  const { n, d, m } = file.manifest;
  const x = ds;
  const decode = (i: number, out: Float32Array) => void reconstructInto(file, i, out);
  const measuring = progress.step('reconstruction error', 'vectors', n);
  const quality = reconstructionQuality(x, n, d, decode, null, (done) => measuring.update(done));
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
  const search = nprobe === undefined ? null : { nprobe, ...(await probedRecall(x, d, vlcSearchIndex(file), plan.queries, truth, decoded.k, nprobe, progress)) };
  return {
    n,
    d,
    m,
    residual: file.manifest.residual,
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
  x: Dataset, d: number, index: ReturnType<typeof vlcSearchIndex>, sample: readonly number[], truth: Neighbours, k: number, nprobe: number,
  progress: Reporter,
): Promise<{ recall_at_1: number | null; recall_at_10: number | null }> {
  const nq = sample.length;
  if (k < 1 || nq === 0) return { recall_at_1: null, recall_at_10: null };
  const q = new Float32Array(nq * d);
  sample.forEach((i, r) => rowInto(x, i, q.subarray(r * d, (r + 1) * d)));
  const searching = progress.step('compressed search', 'queries', nq);
  const got = await searchCompressed(index, q, nq, { k, nprobe, exclude: Int32Array.from(sample), onProgress: (done) => searching.update(done) }, cpuKnn);
  searching.end();
  const { recall_at_1, recall_at_10 } = recallOf(truth, got, k, sample, k);
  return { recall_at_1, recall_at_10 };
}

function evalText(r: EvalResult & { seconds: number }): string {
  const f = (v: number | null, digits = 4) => (v === null ? 'n/a' : v.toFixed(digits));
  const at = `recall@${r.k}`.padEnd(17);
  return (
    [
      `file             ${grouped(r.n)} x ${r.d}, m = ${grouped(r.m)} anchors, residuals ${r.residual}; ` +
        `${grouped(r.bytes)} bytes = ${r.bytes_per_vector.toFixed(2)} bytes/vector, ${percent(r.ratio_f32)} of f32`,
      `compression quality (exact search over the decoded vectors vs over the originals, ${grouped(r.queries)} sampled queries)`,
      `  mse            ${r.mse.toPrecision(6)} (mean squared L2 error per vector; ${r.mse_per_dim.toPrecision(4)} per coordinate)`,
      `  relative error ${f(r.relative_error)} (||X - X'|| / ||X||)`,
      `  mean cosine    ${f(r.mean_cosine, 5)}`,
      `  recall@1       ${f(r.recall_at_1)}`,
      `  ${at.slice(0, 15)}${f(r.recall_at_10)}`,
      ...(r.search
        ? [
            `search quality (vlc search: index probing with nprobe ${r.search.nprobe}, same queries)`,
            `  recall@1       ${f(r.search.recall_at_1)}`,
            `  ${at.slice(0, 15)}${f(r.search.recall_at_10)}`,
          ]
        : ['search quality   not measured (--nprobe P measures vlc search probing P anchors per query)']),
      `time             ${r.seconds.toFixed(2)} s`,
    ].join('\n') + '\n'
  );
}
