// `vlc eval <original> <in.vlc>`: how much a .vlc file lost. Reconstruction error over every vector
// (MSE, relative error, mean cosine) and search quality: for a seeded sample of the original vectors
// used as queries, recall of the compressed search (src/search/) against exact search on
// the originals. The query vector itself is left out of both result lists, so recall measures
// finding its neighbours, not finding itself.
import type { Command } from 'commander';
import { Rng } from '../anneal/random.js';
import { cpuKnn } from '../backend/cpu/index.js';
import { UsageError } from '../errors.js';
import { pieceRows, rowF32, rowsF32, type Dataset } from '../io/dataset.js';
import { readInputs } from '../io/shards.js';
import { readVlc } from '../io/vlc/file.js';
import type { VlcFile } from '../io/vlc/format.js';
import { reconstructInto } from '../io/vlc/reconstruct.js';
import { exactKnnOverRows } from '../search/exact.js';
import { defaultNprobe, searchCompressed, vlcSearchIndex } from '../search/index.js';
import { addInputOptions, readOptionsFrom, type InputFlags } from './input-options.js';
import { addNprobeOption, addOutputOptions, addSeedOption, applyVerbosity, parseInteger, type OutputFlags } from './options.js';
import { progressFor, reportBytes } from './progress.js';
import { quoteName } from '../io/names.js';
import { checkpoint } from '../interrupt.js';
import { silentReporter, type Reporter } from '../log.js';

interface EvalFlags extends InputFlags, OutputFlags {
  queries: number;
  seed: number;
  nprobe?: number;
}

export function register(program: Command): void {
  const cmd = program
    .command('eval')
    .description('measure the quality of a .vlc file against the original vectors: MSE, relative error, cosine, recall@1/@10')
    .argument('<original>', 'the embedding file that was compressed, or its directory or quoted glob of shards (same reader options as for compress)')
    .argument('<in.vlc>', 'the .vlc file')
    .option('--queries <n>', 'number of original vectors sampled as queries for recall', (v) => parseInteger('--queries', v, 1), 1000);
  addSeedOption(cmd, 'seed of the query sample', 1);
  addNprobeOption(cmd);
  addInputOptions(cmd, 'the original');
  addOutputOptions(cmd);
  cmd
    .action(async (original: string, vlcPath: string, o: EvalFlags) => {
      applyVerbosity(o);
      if (original === '-' && vlcPath === '-') throw new UsageError('only one of the two inputs can be stdin (-)');
      const progress = progressFor(o);
      let result: EvalResult;
      const t0 = performance.now();
      try {
        // The .vlc first: it is small and fully validated, so a damaged one fails before a large input is read.
        const file = await readVlc(vlcPath, reportBytes(progress, vlcPath));
        const ds = await readInputs(original, { ...readOptionsFrom(o), onBytes: reportBytes(progress, original) });
        progress.done();
        const { n, d } = file.manifest;
        if (ds.n !== n || ds.d !== d)
          throw new UsageError(
            `${quoteName(original)} holds ${ds.n} x ${ds.d} vectors but ${quoteName(vlcPath)} encodes ${n} x ${d}; ` +
              `give the file it was compressed from${file.manifest.input.dropped ? ' (with --drop-invalid, as compress had)' : ''}`,
          );
        result = await evaluate(ds, file, { queries: o.queries, seed: o.seed, nprobe: o.nprobe }, progress);
      } finally {
        progress.done();
      }
      const seconds = (performance.now() - t0) / 1000; // reading included
      const out = { ...result, seconds };
      process.stdout.write(o.json ? JSON.stringify(out) + '\n' : evalText(out));
    });
}

export interface EvalResult {
  n: number;
  d: number;
  m: number;
  /** Residual mode of the file (none, int8, int4). */
  residual: string;
  /** Mean over vectors of the squared L2 reconstruction error (the seed's "energy", measured). */
  mse: number;
  /** mse / d: the mean squared error per coordinate. */
  mse_per_dim: number;
  /** ‖X − X̂‖_F / ‖X‖_F. */
  relative_error: number;
  /** Mean cosine similarity between each vector and its reconstruction. */
  mean_cosine: number;
  queries: number;
  /** Fraction of queries whose compressed top-1 is the exact nearest neighbour (null: n < 2). */
  recall_at_1: number | null;
  /** Mean overlap of the compressed and exact top-10 lists, over 10 (fewer when n <= 10). */
  recall_at_10: number | null;
  /** k actually used for "@10" (min(10, n − 1)). */
  k10: number;
  /** Anchors visited at least per query. */
  nprobe: number;
}

/** Queries per exact-search batch: enough that its worker start-up is small beside the search. */
const EXACT_BATCH = 256;
/** Vectors between two progress reports of the error pass. */
const REPORT_ROWS = 1 << 14;

export async function evaluate(ds: Dataset, file: VlcFile, o: { queries: number; seed: number; nprobe?: number }, progress: Reporter = silentReporter): Promise<EvalResult> {
  const { n, d, m } = file.manifest;

  // Reconstruction error, accumulated in f64, over the originals a view of rows at a time.
  let sqErr = 0;
  let sqNorm = 0;
  let cosSum = 0;
  const r = new Float32Array(d);
  // Pieces of at most REPORT_ROWS rows, so progress moves and Ctrl-C is heard between them.
  const per = Math.min(REPORT_ROWS, pieceRows(d, 'f32'));
  const decoded = new Float32Array(ds.dtype === 'f16' ? per * d : 0);
  const measuring = progress.step('reconstruction error', 'vectors', n);
  for (let r0 = 0; r0 < n; r0 += per) {
    const r1 = Math.min(n, r0 + per);
    const x = rowsF32(ds, r0, r1, decoded);
    for (let i = r0; i < r1; i++) {
      reconstructInto(file, i, r);
      const xo = (i - r0) * d;
      let e = 0;
      let xx = 0;
      let rr = 0;
      let xr = 0;
      for (let k = 0; k < d; k++) {
        const a = x[xo + k];
        const b = r[k];
        e += (a - b) * (a - b);
        xx += a * a;
        rr += b * b;
        xr += a * b;
      }
      sqErr += e;
      sqNorm += xx;
      cosSum += xx === 0 && rr === 0 ? 1 : xx === 0 || rr === 0 ? 0 : xr / Math.sqrt(xx * rr);
    }
    measuring.update(r1);
    await checkpoint();
  }

  measuring.end();

  // Search quality on a seeded sample of the vectors, each left out of its own results.
  const nq = Math.min(o.queries, n);
  const index = vlcSearchIndex(file);
  const nprobe = o.nprobe ?? defaultNprobe(index);
  const k10 = Math.min(10, n - 1);
  let recall1: number | null = null;
  let recall10: number | null = null;
  if (k10 >= 1) {
    const sample = sampleIndices(n, nq, o.seed);
    const q = new Float32Array(nq * d);
    sample.forEach((i, r) => q.set(rowF32(ds, i), r * d));
    const exclude = Int32Array.from(sample);
    // Exact search in batches of queries, so that its (long) progress shows.
    const exactStep = progress.step('exact search', 'queries', nq);
    const exact = { ids: new Int32Array(nq * (k10 + 1)) };
    for (let q0 = 0; q0 < nq; q0 += EXACT_BATCH) {
      const k = Math.min(EXACT_BATCH, nq - q0);
      const part = await exactKnnOverRows(cpuKnn, ds, q.subarray(q0 * d, (q0 + k) * d), k, k10 + 1);
      exact.ids.set(part.ids, q0 * (k10 + 1));
      exactStep.update(q0 + k);
      await checkpoint();
    }
    exactStep.end();
    const searching = progress.step('compressed search', 'queries', nq);
    const approx = await searchCompressed(index, q, nq, { k: k10, nprobe, exclude, onProgress: (done) => searching.update(done) }, cpuKnn);
    searching.end();
    let hits1 = 0;
    let hits10 = 0;
    for (let r = 0; r < nq; r++) {
      const truth = withoutSelf(exact.ids.subarray(r * (k10 + 1), (r + 1) * (k10 + 1)), sample[r], k10);
      const got = approx.ids.subarray(r * k10, (r + 1) * k10);
      if (got[0] === truth[0]) hits1++;
      const set = new Set(truth);
      for (const id of got) if (set.has(id)) hits10++;
    }
    recall1 = hits1 / nq;
    recall10 = hits10 / (nq * k10);
  }
  return {
    n,
    d,
    m,
    residual: file.manifest.residual,
    mse: sqErr / n,
    mse_per_dim: sqErr / n / d,
    relative_error: sqNorm > 0 ? Math.sqrt(sqErr / sqNorm) : 0,
    mean_cosine: cosSum / n,
    queries: nq,
    recall_at_1: recall1,
    recall_at_10: recall10,
    k10,
    nprobe,
  };
}

/** The first k ids of an exact result list, leaving out the query's own id (or the last, if absent). */
function withoutSelf(ids: Int32Array, self: number, k: number): number[] {
  const out = Array.from(ids).filter((id) => id !== self && id >= 0);
  return out.slice(0, k);
}

/** `count` distinct indices of 0..n-1, in sample order, from a seeded partial Fisher–Yates shuffle. */
export function sampleIndices(n: number, count: number, seed: number): number[] {
  const rng = new Rng(seed);
  const pool = new Map<number, number>(); // sparse swap table: O(count) memory even for huge n
  const out: number[] = [];
  for (let i = 0; i < count; i++) {
    const j = i + rng.int(n - i);
    const vi = pool.get(i) ?? i;
    const vj = pool.get(j) ?? j;
    pool.set(j, vi);
    out.push(vj);
  }
  return out;
}

function evalText(r: EvalResult & { seconds: number }): string {
  const f = (v: number | null, digits = 4) => (v === null ? 'n/a' : v.toFixed(digits));
  return (
    [
      `vectors          ${r.n} x ${r.d}, m = ${r.m} anchors, residuals ${r.residual}`,
      `mse              ${r.mse.toPrecision(6)} (mean squared L2 error per vector; ${r.mse_per_dim.toPrecision(4)} per coordinate)`,
      `relative error   ${f(r.relative_error)} (||X - X'|| / ||X||)`,
      `mean cosine      ${f(r.mean_cosine)}`,
      `recall@1         ${f(r.recall_at_1)} (${r.queries} sampled queries, compressed search with nprobe ${r.nprobe} vs exact search)`,
      `recall@${String(r.k10).padEnd(10)}${f(r.recall_at_10)}`,
      `time             ${r.seconds.toFixed(2)} s`,
    ].join('\n') + '\n'
  );
}
