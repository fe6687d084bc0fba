// The quality figures compress reports for every file it writes (and stores in the manifest, so
// `vlc info` shows them): reconstruction error on every vector, or a seeded sample of large inputs,
// and recall@10 of exact search over the decoded vectors on a sample of queries and base vectors,
// with what that sample predicts over all n vectors.
//
// Why a prediction: among more vectors the neighbours of a query lie closer together, so the same
// reconstruction noise swaps more of them, and recall over a base sample overstates recall over
// the whole file (measured: 50,000 Gaussian vectors, int4: 0.800 among 20,000, 0.789 among all;
// 50,000 clustered vectors, int4: 0.910 and 0.889). Recall falls about linearly in log(base size),
// so the sample is measured twice — over its base and over half of it — and each query's recall is
// extrapolated to n: r(n) = r(B) − log2(n/B) · (r(B/2) − r(B)). docs/quality.md has the figures.
import type { ExactKnn, Neighbours } from '../backend/device.js';
import type { VectorsLike } from '../vectors/dataset.js';
import { decodedPerQuery, meanAndSe, summarize, trueNeighbours, type DecodedRecall, type RecallPlan } from './recall.js';
import { reconstructionQuality, type DecodeRow, type ReconstructionQuality } from './reconstruction.js';
import { rowCount, rowsUpTo, sampleIndices, type Rows } from './sample.js';

/**
 * How many vectors the figures are measured on. Reconstruction error costs one pass of d
 * operations per vector, so up to 100,000 vectors it is exact; recall costs queries × base × d
 * per pass, so it samples 200 queries among 20,000 vectors (a standard error of about 0.01 at
 * recall 0.9). docs/quality.md gives the reasons.
 */
export const SAMPLE = {
  reconstruction: 100_000,
  recallQueries: 200,
  recallBase: 20_000,
} as const;

/** The seed of every quality sample: fixed, so the same input gives the same figures (and bytes). */
const SAMPLE_SEED = 0x5eed;

/** Recall over a sample, and what it predicts over all the vectors the file holds. */
export interface SampledRecall extends DecodedRecall {
  /** recall@10 expected over all n vectors (= recall_at_10 when the base is every vector); null: base < 2. */
  recall_at_10_all: number | null;
  recall_at_10_all_se: number | null;
}

export interface FileQuality extends ReconstructionQuality {
  recall: SampledRecall;
}

/** The queries, the base they search, the base's first half, and the true neighbours in both. */
export interface RecallSample {
  /** Vectors the figures stand for (the whole file). */
  n: number;
  plan: RecallPlan;
  truth: Neighbours;
  /** The first half of the base (null when the base is every vector). */
  half: { plan: RecallPlan; truth: Neighbours } | null;
}

/** The recall sample over n vectors: a seeded base of up to SAMPLE.recallBase vectors, its first queries asking. */
export function recallPlan(n: number): RecallPlan {
  const base = n <= SAMPLE.recallBase ? null : sampleIndices(n, SAMPLE.recallBase, SAMPLE_SEED + 1);
  const nb = base === null ? n : base.length;
  const queries = base === null ? sampleIndices(n, SAMPLE.recallQueries, SAMPLE_SEED + 2) : [...Array(Math.min(nb, SAMPLE.recallQueries)).keys()];
  return { base, queries };
}

/**
 * The true neighbours of `plan` over the nx vectors of x, which stand for nAll vectors: when the
 * base is fewer than nAll, also those over its first half (the queries, at the first positions
 * of a random base, ask in both).
 */
export async function recallSample(x: VectorsLike, nx: number, d: number, plan: RecallPlan, nAll: number, knn: ExactKnn): Promise<RecallSample> {
  const truth = await trueNeighbours(x, nx, d, plan, knn);
  const nb = rowCount(plan.base, nx);
  if (nb >= nAll) return { n: nAll, plan, truth, half: null };
  const halfRows = plan.base ? plan.base.slice(0, nb >> 1) : [...Array(nb >> 1).keys()];
  const halfPlan = { base: halfRows, queries: plan.queries.filter((q) => q < halfRows.length) };
  if (halfPlan.queries.length !== plan.queries.length) throw new Error('recallSample: every query must sit in the first half of the base');
  return { n: nAll, plan, truth, half: { plan: halfPlan, truth: await trueNeighbours(x, nx, d, halfPlan, knn) } };
}

/** Recall of one decoding over the sample, and its prediction over all the vectors. */
export async function sampledRecall(x: VectorsLike, nx: number, d: number, decode: DecodeRow, s: RecallSample, knn: ExactKnn): Promise<SampledRecall> {
  const full = await decodedPerQuery(x, nx, d, decode, s.plan, s.truth, knn);
  const measured = { ...summarize(full.hits1, full.perQuery), k: full.k, queries: s.plan.queries.length, base: full.nb };
  if (full.perQuery.length === 0) return { ...measured, recall_at_10_all: null, recall_at_10_all_se: null };
  if (!s.half) return { ...measured, recall_at_10_all: measured.recall_at_10, recall_at_10_all_se: measured.recall_at_10_se };
  const half = await decodedPerQuery(x, nx, d, decode, s.half.plan, s.half.truth, knn);
  const steps = Math.log2(s.n / full.nb) / Math.log2(full.nb / half.nb); // doublings from the base to n, per halving measured
  const predicted = full.perQuery.map((r, q) => r - steps * (half.perQuery[q] - r));
  const { mean, se } = meanAndSe(predicted);
  return { ...measured, recall_at_10_all: Math.min(1, Math.max(0, mean)), recall_at_10_all_se: se };
}

/** The rows the reconstruction figures are measured on: every row up to SAMPLE.reconstruction, else a seeded sample. */
export function reconstructionRows(n: number): Rows {
  return rowsUpTo(n, SAMPLE.reconstruction, SAMPLE_SEED);
}

/**
 * Measures one encoding of x (n×d): reconstruction figures and decoded-search recall, over
 * recallPlan(n). `sample`: its true neighbours, when already known (choose.ts computes them);
 * `rec`: the reconstruction figures of reconstructionRows(n), when the encoder made them.
 */
export async function measureQuality(
  x: VectorsLike, n: number, d: number, decode: DecodeRow, knn: ExactKnn, sample?: RecallSample, rec?: ReconstructionQuality,
): Promise<FileQuality> {
  rec ??= reconstructionQuality(x, n, d, decode, reconstructionRows(n));
  sample ??= await recallSample(x, n, d, recallPlan(n), n, knn);
  return { ...rec, recall: await sampledRecall(x, n, d, decode, sample, knn) };
}

/**
 * The rows measureQuality(…, n, …) reads, ascending, or null for every row (n within
 * SAMPLE.reconstruction). What an MPI run gathers at rank 0 (api/compress-mpi.ts) instead of x.
 */
export function measuredRows(n: number): number[] | null {
  const reconstruction = reconstructionRows(n);
  if (reconstruction === null) return null;
  return [...new Set([...reconstruction, ...(recallPlan(n).base ?? [])])].sort((a, b) => a - b);
}

/**
 * measureQuality's figures from only the rows it reads: `xs` holds rows `rows` (measuredRows(n))
 * in that order; decode takes global row numbers. The same rows in the same order, so the same
 * figures, to the bit.
 */
export async function measureQualityOfRows(xs: Float32Array, rows: number[], n: number, d: number, decode: DecodeRow, knn: ExactKnn): Promise<FileQuality> {
  const at = new Map(rows.map((r, k) => [r, k]));
  const local = (list: readonly number[]) => list.map((r) => at.get(r)!);
  const decodeLocal: DecodeRow = (k, out) => decode(rows[k], out);
  const rec = reconstructionQuality(xs, rows.length, d, decodeLocal, local(reconstructionRows(n)!));
  const plan = recallPlan(n);
  const sample = await recallSample(xs, rows.length, d, { base: local(plan.base!), queries: plan.queries }, n, knn);
  return { ...rec, recall: await sampledRecall(xs, rows.length, d, decodeLocal, sample, knn) };
}
