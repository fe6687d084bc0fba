// The quality figures compress reports for every file it writes (and stores in the manifest, so
// `vlc info` shows them): reconstruction error on every vector, or a seeded sample of large inputs,
// and recall@10 of exact search over the decoded vectors on a sample of queries and base vectors,
// with what that sample predicts over all n vectors and an interval for it.
//
// Why a prediction: among more vectors the neighbours of a query lie closer together, so the same
// reconstruction noise swaps more of them, and recall over a base sample overstates recall over
// the whole file (measured: 50,000 Gaussian vectors, int4: 0.800 among 20,000, 0.789 among all;
// 50,000 clustered vectors, int4: 0.910 and 0.889). Recall falls about linearly in log(base size),
// so the sample is measured twice — over its base and over half of it — and each query's recall is
// extrapolated to n: r(n) = r(B) − log2(n/B) · (r(B/2) − r(B)). docs/quality.md has the figures.
//
// The interval (recall_at_10_all_low/high, INTERVAL_CONFIDENCE) holds the two ways that prediction
// misses: the queries sampled (the standard error of the per-query predictions, floored by the
// binomial error of the Q·k neighbours counted, so that a sample where every neighbour was found
// still allows for misses), and the straight line in log(base size) itself, checked on the sample:
// the base's first quarter predicts the half's slope's next step, the miss (the per-query second
// difference r(B) − 2 r(B/2) + r(B/4): how much the slope changes a doubling) is carried over the
// s = log2(n/B) doublings to n (s(s+1)/2 times), with its own sampling error. Far from the sample
// (50M vectors from 20,000: s = 11.3) the interval is wide: the sample cannot say more.
import type { ExactKnn, Neighbours } from '../backend/device.js';
import { log } from '../log.js';
import type { VectorsLike } from '../vectors/dataset.js';
import { decodedPerQuery, decodedPerQueryPrefixes, meanAndSe, summarize, trueNeighbours, trueNeighboursPrefixes, type BasePrefix, type DecodedRecall, type RecallPlan } from './recall.js';
import { reconstructionQuality, type DecodeRange, type DecodeRow, type ReconstructionQuality } from './reconstruction.js';
import { rowCount, rowsUpTo, sampleIndices, type Rows } from './sample.js';

/**
 * How many vectors the figures are measured on. Reconstruction error costs one pass of d
 * operations per vector, so up to 100,000 vectors it is exact; recall costs queries × base × d
 * per pass, so it samples 1,000 queries among up to 65,536 vectors. `--quality` decides on the
 * point figure, so both matter: the queries set its standard error (about 0.003 at recall 0.9),
 * and a base of every vector up to 65,536 leaves nothing to extrapolate there (from a base of
 * 20,000, Fashion-MNIST's 60,000 were predicted 0.951 where eval measured 0.941).
 * docs/quality.md gives the reasons.
 */
export const SAMPLE = {
  reconstruction: 100_000,
  recallQueries: 1_000,
  recallBase: 65_536,
} as const;

/** The seed of every quality sample: fixed, so the same input gives the same figures (and bytes). */
const SAMPLE_SEED = 0x5eed;

/** The sizes in use: SAMPLE, unless a test made them smaller (sampleSizesForTests) to check the extrapolation on small data. */
let sizes: { recallQueries: number; recallBase: number } = SAMPLE;

/** Tests only: recall sample sizes other than SAMPLE (undefined: back to SAMPLE). */
export function sampleSizesForTests(s?: { recallQueries: number; recallBase: number }): void {
  sizes = s ?? SAMPLE;
}

/** The stated coverage of recall_at_10_all_low/high, and its two-sided normal quantile. */
export const INTERVAL_CONFIDENCE = 0.95;
const Z = 1.959964;

/** Recall over a sample, and what it predicts over all the vectors the file holds. */
export interface SampledRecall extends DecodedRecall {
  /** recall@10 expected over all n vectors (= recall_at_10 when the base is every vector); null: base < 2. */
  recall_at_10_all: number | null;
  recall_at_10_all_se: number | null;
  /**
   * An INTERVAL_CONFIDENCE interval for recall@10 over all n vectors (every vector a query, as
   * `vlc eval --queries n` measures it): the queries' sampling error and the extrapolation's
   * (measure.ts's head). Null where recall_at_10_all is, or where the caller did not ask for it
   * (the chooser's measurements).
   */
  recall_at_10_all_low: number | null;
  recall_at_10_all_high: number | null;
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
  /** The first quarter of the base, for the interval's check of the extrapolation (found with the base's search, else on first use; null: too few rows for the queries). */
  quarter?: { plan: RecallPlan; truth: Neighbours } | null;
}

/** The recall sample over n vectors: a seeded base of up to SAMPLE.recallBase vectors, its first queries asking. */
export function recallPlan(n: number): RecallPlan {
  const base = n <= sizes.recallBase ? null : sampleIndices(n, sizes.recallBase, SAMPLE_SEED + 1);
  const nb = base === null ? n : base.length;
  const queries = base === null ? sampleIndices(n, sizes.recallQueries, SAMPLE_SEED + 2) : [...Array(Math.min(nb, sizes.recallQueries)).keys()];
  return { base, queries };
}

/**
 * The true neighbours of `plan` over the nx vectors of x, which stand for nAll vectors: when the
 * base is fewer than nAll, also those over its first half (the queries, at the first positions
 * of a random base, ask in both).
 */
export async function recallSample(x: VectorsLike, nx: number, d: number, plan: RecallPlan, nAll: number, knn: ExactKnn): Promise<RecallSample> {
  const nb = rowCount(plan.base, nx);
  if (nb >= nAll) return { n: nAll, plan, truth: await trueNeighbours(x, nx, d, plan, knn), half: null };
  const halfPlan = firstHalf(plan, nx);
  if (!halfPlan) throw new Error('recallSample: every query must sit in the first half of the base');
  // The base, its half and the interval's quarter in one search, where they fit one (recall.ts).
  const quarterPlan = firstHalf(halfPlan, nx);
  const prefixes = [halfPlan, ...(quarterPlan ? [quarterPlan] : [])].map((p) => rowCount(p.base, nx));
  const lists = await trueNeighboursPrefixes(x, nx, d, plan, prefixes, knn);
  if (!lists) return { n: nAll, plan, truth: await trueNeighbours(x, nx, d, plan, knn), half: { plan: halfPlan, truth: await trueNeighbours(x, nx, d, halfPlan, knn) } };
  return { n: nAll, plan, truth: lists[0], half: { plan: halfPlan, truth: lists[1] }, quarter: quarterPlan && { plan: quarterPlan, truth: lists[2] } };
}

/** The first half of a plan's base (of the nx vectors), its queries the same; null when a query sits beyond it. */
function firstHalf(plan: RecallPlan, nx: number): RecallPlan | null {
  const nb = rowCount(plan.base, nx);
  const halfRows = plan.base ? plan.base.slice(0, nb >> 1) : [...Array(nb >> 1).keys()];
  const queries = plan.queries.filter((q) => q < halfRows.length);
  return queries.length === plan.queries.length && queries.length > 0 && halfRows.length > 1 ? { base: halfRows, queries } : null;
}

/**
 * Recall of one decoding over the sample, and its prediction over all the vectors; with
 * `interval`, the prediction's interval too (from the base's first quarter, whose lists the same search gives).
 * `baseRange`: the base's rows at positions r0..r1 decoded together, as `decode` decodes them one by one
 * (the half's and quarter's bases are its leading rows: the same positions).
 */
export async function sampledRecall(
  x: VectorsLike, nx: number, d: number, decode: DecodeRow, s: RecallSample, knn: ExactKnn, interval = false, baseRange?: DecodeRange,
): Promise<SampledRecall> {
  // The interval's quarter of the base (its plan and true neighbours), made on first use.
  if (interval && s.half && s.quarter === undefined) {
    const qp = firstHalf(s.half.plan, nx);
    s.quarter = qp && { plan: qp, truth: await trueNeighbours(x, nx, d, qp, knn) };
  }
  // The base, its half and (for the interval) its quarter searched together, in one search.
  const prefixes: BasePrefix[] = [];
  if (s.half) prefixes.push({ rows: rowCount(s.half.plan.base, nx), truth: s.half.truth });
  if (interval && s.half && s.quarter) prefixes.push({ rows: rowCount(s.quarter.plan.base, nx), truth: s.quarter.truth });
  const together = prefixes.length ? await decodedPerQueryPrefixes(x, nx, d, decode, s.plan, s.truth, prefixes, knn, baseRange) : undefined;
  const full = together?.[0] ?? (await decodedPerQuery(x, nx, d, decode, s.plan, s.truth, knn, undefined, baseRange));
  const measured = { ...summarize(full.hits1, full.perQuery), k: full.k, queries: s.plan.queries.length, base: full.nb };
  const none = { recall_at_10_all_low: null, recall_at_10_all_high: null };
  if (full.perQuery.length === 0) return { ...measured, recall_at_10_all: null, recall_at_10_all_se: null, ...none };
  const slots = full.perQuery.length * full.k;
  if (!s.half) {
    const mean = measured.recall_at_10!;
    // Every vector of the file is in the base; the queries are a sample of them (all of them: exact).
    const fpc = Math.sqrt(Math.max(0, 1 - full.perQuery.length / s.n));
    const half = Z * Math.max(measured.recall_at_10_se!, binomialSe(mean, slots)) * fpc;
    return { ...measured, recall_at_10_all: mean, recall_at_10_all_se: measured.recall_at_10_se, ...(interval ? bounds(mean, half) : none) };
  }
  const half = together?.[1] ?? (await decodedPerQuery(x, nx, d, decode, s.half.plan, s.half.truth, knn, undefined, baseRange));
  const steps = Math.log2(s.n / full.nb) / Math.log2(full.nb / half.nb); // doublings from the base to n, per halving measured
  const predicted = full.perQuery.map((r, q) => r - steps * (half.perQuery[q] - r));
  const { mean, se } = meanAndSe(predicted);
  // Never above the sample's own figure: a larger base only brings neighbours closer together. A
  // line rising toward n is an artifact of small bases (decoded vectors that tie, as anchor ids
  // alone do, keep a query's few sampled neighbours among the tied ones), not a prediction.
  const all = Math.min(measured.recall_at_10!, Math.max(0, mean));
  if (!interval) return { ...measured, recall_at_10_all: all, recall_at_10_all_se: se, ...none };
  // The queries: the predictions' standard error, at least the binomial one of r(B) and r(B/2) counted on Q·k neighbours each.
  const floor = binomialSe(measured.recall_at_10!, slots);
  const seQueries = Math.max(se, floor * Math.hypot(1 + steps, steps));
  // The line: its one-doubling miss on the sample, carried over the doublings to n.
  const carried = (steps * (steps + 1)) / 2;
  let lineBias: number, lineSe: number;
  if (s.quarter) {
    const quarter = together?.[2] ?? (await decodedPerQuery(x, nx, d, decode, s.quarter.plan, s.quarter.truth, knn, undefined, baseRange));
    const curvature = meanAndSe(full.perQuery.map((r, q) => r - 2 * half.perQuery[q] + quarter.perQuery[q]));
    lineBias = Math.abs(curvature.mean) * carried;
    lineSe = Math.max(curvature.se, floor * Math.sqrt(6)) * carried;
  } else {
    // No quarter to check the line on (a base of fewer than 4 queries' worth): allow the whole correction again.
    lineBias = Math.abs(measured.recall_at_10! - mean);
    lineSe = floor * Math.sqrt(6) * carried;
  }
  const b = bounds(mean, Z * Math.hypot(seQueries, lineSe) + lineBias);
  return { ...measured, recall_at_10_all: all, recall_at_10_all_se: se, ...b, recall_at_10_all_low: Math.min(b.recall_at_10_all_low, all) };
}

/** The standard error of a proportion p counted on `count` trials, Agresti–Coull (2 successes and 2 failures added: never 0). */
function binomialSe(p: number, count: number): number {
  const pt = (p * count + 2) / (count + 4);
  return Math.sqrt((pt * (1 - pt)) / (count + 4));
}

function bounds(mean: number, half: number): { recall_at_10_all_low: number; recall_at_10_all_high: number } {
  return { recall_at_10_all_low: Math.min(1, Math.max(0, mean - half)), recall_at_10_all_high: Math.min(1, Math.max(0, mean + half)) };
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
  const t0 = performance.now();
  const given = rec !== undefined;
  rec ??= reconstructionQuality(x, n, d, decode, reconstructionRows(n));
  const t1 = performance.now();
  sample ??= await recallSample(x, n, d, recallPlan(n), n, knn);
  const recall = await sampledRecall(x, n, d, decode, sample, knn, true);
  tellTimes(given ? undefined : t1 - t0, performance.now() - t1);
  return { ...rec, recall };
}

/** The quality step's two parts, for -v: the reconstruction figures (undefined: the encoder's row sums gave them) and recall. */
function tellTimes(reconstructionMs: number | undefined, recallMs: number): void {
  const rec = reconstructionMs === undefined ? 'from the encoder\'s row sums' : `decoded on this thread in ${(reconstructionMs / 1000).toFixed(2)} s`;
  log().debug(`quality: reconstruction figures ${rec}, recall in ${(recallMs / 1000).toFixed(2)} s`);
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
 * Some rows of n held where the rest are not (an MPI rank 0: api/compress-mpi.ts): `x` holds rows
 * `rows` (measuredRows(n), ascending) in that order.
 */
export interface HeldRows {
  x: VectorsLike;
  rows: readonly number[];
}

/** recallPlan(n) over held rows: its base as positions among them (the base is a sample of n: measuredRows holds it). */
export function heldRecallPlan(n: number, rows: readonly number[]): RecallPlan {
  const plan = recallPlan(n);
  if (plan.base === null) throw new Error('heldRecallPlan: the recall base is every row; hold every row');
  const at = new Map(rows.map((r, k) => [r, k]));
  return { base: plan.base.map((r) => at.get(r)!), queries: plan.queries };
}

/**
 * measureQuality's figures from only the rows it reads: `xs` holds rows `rows` (measuredRows(n))
 * in that order; decode takes global row numbers. The same rows in the same order, so the same
 * figures, to the bit. `sample`: the recall sample over these rows, when already known (the chooser's).
 */
export async function measureQualityOfRows(
  xs: VectorsLike, rows: readonly number[], n: number, d: number, decode: DecodeRow, knn: ExactKnn, sample?: RecallSample,
): Promise<FileQuality> {
  const at = new Map(rows.map((r, k) => [r, k]));
  const decodeLocal: DecodeRow = (k, out) => decode(rows[k], out);
  const t0 = performance.now();
  const rec = reconstructionQuality(xs, rows.length, d, decodeLocal, reconstructionRows(n)!.map((r) => at.get(r)!));
  const t1 = performance.now();
  sample ??= await recallSample(xs, rows.length, d, heldRecallPlan(n, rows), n, knn);
  const recall = await sampledRecall(xs, rows.length, d, decodeLocal, sample, knn, true);
  tellTimes(t1 - t0, performance.now() - t1);
  return { ...rec, recall };
}
