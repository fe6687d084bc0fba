// Compression quality as a search user sees it: for sampled query vectors, does exact search over
// the DECODED vectors find the same neighbours as exact search over the originals? This is the cost
// of compression alone (no index, no probing: brute force on both sides through the backend's
// ExactKnn); `vlc eval` reports the index-probing search of `vlc search` separately.
// Each query is one of the base vectors and is left out of both result lists, so recall measures
// finding its neighbours, not finding itself.
import type { ExactKnn, Neighbours } from '../backend/device.js';
import { asRows, rowInto } from '../vectors/dataset.js';
import { isRowsReader, rowGetter, type Originals } from './originals.js';
import { maxAbsOf, scaleFor, scaleInPlace } from '../vectors/scale.js';
import { BLOCK_FLOATS, blockKnn, type OnRows } from '../backend/block-knn.js';
import type { DecodeRange, DecodeRow } from './reconstruction.js';
import { rowAt, rowCount, type Rows } from './sample.js';

export interface DecodedRecall {
  /** Fraction of queries whose nearest decoded vector is their true nearest neighbour (null: base < 2). */
  recall_at_1: number | null;
  /** Mean overlap of the decoded and true top-k lists, over k (null: base < 2). */
  recall_at_10: number | null;
  /** Standard error of recall_at_10 over the sampled queries (0 with one query). */
  recall_at_10_se: number | null;
  /** k of "@10": min(10, base − 1). */
  k: number;
  queries: number;
  /** Vectors searched: n when the whole file, else the size of the base sample. */
  base: number;
}

/** Which vectors are searched and which of them ask. */
export interface RecallPlan {
  /** Rows of x searched (null: all n). */
  base: Rows;
  /** Positions in the base (0..base−1) whose vectors are the queries. */
  queries: readonly number[];
}

/** The true neighbours: exact k-NN (k + 1, self included) of the queries over the original base vectors. */
export async function trueNeighbours(x: Originals, n: number, d: number, plan: RecallPlan, knn: ExactKnn, onRows?: OnRows): Promise<Neighbours> {
  const nb = rowCount(plan.base, n);
  const s = planScale(x, n, d, plan);
  const [got] = await searchPrefixes(queryVectors(x, n, d, plan, s), plan.queries.length, d, kOf(nb) + 1, nb, originalBlocks(x, n, d, plan, s), knn, [], onRows);
  return got;
}

/**
 * trueNeighbours over a plan's base and, in the same search, over each of its first `prefixes`
 * rows (ascending order not needed): the lists of the base, then of each prefix in the order given
 * (decodedPerQueryPrefixes says why a prefix's lists are its own search's). Undefined where a
 * prefix's k differs from the base's or a query lies past a prefix: search them one by one.
 */
export async function trueNeighboursPrefixes(x: Originals, n: number, d: number, plan: RecallPlan, prefixes: readonly number[], knn: ExactKnn): Promise<Neighbours[] | undefined> {
  const nb = rowCount(plan.base, n);
  if (!prefixesFit(plan, nb, prefixes)) return undefined;
  const s = planScale(x, n, d, plan);
  return searchPrefixes(queryVectors(x, n, d, plan, s), plan.queries.length, d, kOf(nb) + 1, nb, originalBlocks(x, n, d, plan, s), knn, prefixes);
}

/**
 * blockKnn over nb base rows, its lists taken also where the search passes each of `prefixes`
 * (rows): the base's lists, then each prefix's in the order given.
 */
async function searchPrefixes(
  queries: Float32Array, nq: number, d: number, k: number, nb: number, block: (r0: number, r1: number, out: Float32Array) => Float32Array,
  knn: ExactKnn, prefixes: readonly number[], onRows?: OnRows,
): Promise<Neighbours[]> {
  const at = new Map<number, Neighbours>();
  const cuts = [...new Set(prefixes)].sort((a, b) => a - b);
  const got = await blockKnn(queries, nq, d, k, nb, block, knn, BLOCK_FLOATS, onRows, cuts, (rows, lists) => at.set(rows, lists));
  return [got, ...prefixes.map((p) => at.get(p)!)];
}

/** Whether every prefix lies inside the base, holds every query and has the base's k (searched with it, it is its own search). */
function prefixesFit(plan: RecallPlan, nb: number, prefixes: readonly number[]): boolean {
  const k = kOf(nb), last = plan.queries.reduce((a, q) => Math.max(a, q + 1), 0); // not Math.max(...): any number of queries
  return k >= 1 && plan.queries.length > 0 && prefixes.every((p) => p < nb && p >= last && kOf(p) === k);
}

/** The plan's original base rows r0..r1 scaled by s, as blockKnn asks for them. */
function originalBlocks(x: Originals, n: number, d: number, plan: RecallPlan, s: number): (r0: number, r1: number, out: Float32Array) => Float32Array {
  const original = rowGetter(x, n, d);
  return (r0, r1, out) => {
    for (let r = r0; r < r1; r++) original(rowAt(plan.base, r), out.subarray((r - r0) * d, (r - r0 + 1) * d));
    return scaleInPlace(out.subarray(0, (r1 - r0) * d), s);
  };
}

/** Scales found per plan and original vectors, so the truth and each decoding it is compared with search at one scale. */
const scales = new WeakMap<RecallPlan, { key: object; byteOffset: number; s: number }>();

/**
 * The power of two both searches of a plan run at (vectors/scale.ts): chosen from the original
 * base vectors alone, and applied alike to the queries, the originals and the decoded vectors, so
 * that f32 distances of tiny or huge data neither underflow nor overflow and the recall is true.
 */
function planScale(xs: Originals, n: number, d: number, plan: RecallPlan): number {
  const reader = isRowsReader(xs) ? xs : undefined;
  const x = isRowsReader(xs) ? undefined : asRows(xs, n, d);
  const key: object = reader ?? x!.buffer, byteOffset = x?.byteOffset ?? 0;
  const known = scales.get(plan);
  if (known && known.key === key && known.byteOffset === byteOffset) return known.s;
  if (reader && plan.base !== null) throw new Error('recall over a sampled base reads the originals in memory');
  const s = scaleFor(reader ? reader.maxAbs() : maxAbsOf(x!, plan.base));
  scales.set(plan, { key, byteOffset, s });
  return s;
}

/** Recall of exact search over the decoded base against `truth` (from trueNeighbours). */
export async function decodedRecall(
  x: Originals, n: number, d: number, decode: DecodeRow, plan: RecallPlan, truth: Neighbours, knn: ExactKnn, onRows?: OnRows,
): Promise<DecodedRecall> {
  const r = await decodedPerQuery(x, n, d, decode, plan, truth, knn, onRows);
  return { ...summarize(r.hits1, r.perQuery), k: r.k, queries: plan.queries.length, base: r.nb };
}

/** Each query's recall@k of exact search over the decoded base (empty when the base has < 2 vectors), and how many found the true nearest. */
export async function decodedPerQuery(
  x: Originals, n: number, d: number, decode: DecodeRow, plan: RecallPlan, truth: Neighbours, knn: ExactKnn, onRows?: OnRows, baseRange?: DecodeRange,
): Promise<{ perQuery: number[]; hits1: number; k: number; nb: number }> {
  const nb = rowCount(plan.base, n);
  const k = kOf(nb);
  if (k < 1 || plan.queries.length === 0) return { perQuery: [], hits1: 0, k: Math.max(k, 0), nb };
  const [got] = await decodedSearch(x, n, d, decode, plan, knn, [], onRows, baseRange);
  return { ...perQueryRecall(truth, got, k + 1, plan.queries, k), k, nb };
}

/**
 * The plan's decoded base searched (searchPrefixes) at its own scale. `baseRange`: the base's rows at
 * positions r0..r1 decoded together (the bits `decode` gives them), which saves a call and a view a row.
 */
function decodedSearch(
  x: Originals, n: number, d: number, decode: DecodeRow, plan: RecallPlan, knn: ExactKnn, prefixes: readonly number[], onRows?: OnRows, baseRange?: DecodeRange,
): Promise<Neighbours[]> {
  const nb = rowCount(plan.base, n);
  const s = planScale(x, n, d, plan);
  return searchPrefixes(queryVectors(x, n, d, plan, s), plan.queries.length, d, kOf(nb) + 1, nb, decodedBlocks(plan, d, decode, s, baseRange), knn, prefixes, onRows);
}

/** The plan's base rows r0..r1 decoded (together where `baseRange` is given) and scaled by s, as blockKnn asks for them. */
function decodedBlocks(plan: RecallPlan, d: number, decode: DecodeRow, s: number, baseRange?: DecodeRange): (r0: number, r1: number, out: Float32Array) => Float32Array {
  return (r0, r1, out) => {
    if (baseRange) baseRange(r0, r1, out);
    else for (let r = r0; r < r1; r++) decode(rowAt(plan.base, r), out.subarray((r - r0) * d, (r - r0 + 1) * d));
    return scaleInPlace(out.subarray(0, (r1 - r0) * d), s);
  };
}

/** One prefix of a plan's base for decodedPerQueryPrefixes: its first `rows` rows and the true neighbours over them. */
export interface BasePrefix {
  rows: number;
  truth: Neighbours;
}

/**
 * decodedPerQuery over a plan's whole base and, in the same search, over each of its `prefixes`
 * (the base's first rows: its half and quarter, whose plans are the same queries over the leading
 * rows of this base): the base is searched a prefix at a time and the lists merged so far taken at
 * each prefix's end, which is what a search of that prefix alone finds (blockKnn). The plans'
 * power-of-two scales move no neighbour. Where a prefix's k differs from the base's, or a query lies
 * past a prefix, undefined: search them one by one.
 */
export async function decodedPerQueryPrefixes(
  x: Originals, n: number, d: number, decode: DecodeRow, plan: RecallPlan, truth: Neighbours, prefixes: readonly BasePrefix[], knn: ExactKnn, baseRange?: DecodeRange,
): Promise<Array<{ perQuery: number[]; hits1: number; k: number; nb: number }> | undefined> {
  const nb = rowCount(plan.base, n), k = kOf(nb), rows = prefixes.map((p) => p.rows);
  if (!prefixesFit(plan, nb, rows)) return undefined;
  const lists = await decodedSearch(x, n, d, decode, plan, knn, rows, undefined, baseRange);
  return [{ rows: nb, truth }, ...prefixes].map((p, i) => ({ ...perQueryRecall(p.truth, lists[i], k + 1, plan.queries, k), k, nb: p.rows }));
}

/**
 * Recall@1 and @k of result lists `got` (`width` ids per query) against the true lists (k + 1 per
 * query, self included), each query's own id (`selves`) left out of both.
 */
export function recallOf(
  truth: Neighbours, got: Neighbours, width: number, selves: readonly number[], k: number,
): Pick<DecodedRecall, 'recall_at_1' | 'recall_at_10' | 'recall_at_10_se'> {
  const r = perQueryRecall(truth, got, width, selves, k);
  return summarize(r.hits1, r.perQuery);
}

function perQueryRecall(truth: Neighbours, got: Neighbours, width: number, selves: readonly number[], k: number): { perQuery: number[]; hits1: number } {
  let hits1 = 0;
  const perQuery = selves.map((self, q) => {
    const want = withoutSelf(truth.ids, q, k + 1, self, k);
    const have = withoutSelf(got.ids, q, width, self, k);
    if (have[0] === want[0]) hits1++;
    const set = new Set(want);
    return have.filter((id) => set.has(id)).length / k;
  });
  return { perQuery, hits1 };
}

/** The mean overlap of the top-k lists over the queries, with its standard error, and recall@1. */
export function summarize(hits1: number, perQuery: readonly number[]): Pick<DecodedRecall, 'recall_at_1' | 'recall_at_10' | 'recall_at_10_se'> {
  const nq = perQuery.length;
  if (nq === 0) return { recall_at_1: null, recall_at_10: null, recall_at_10_se: null };
  const { mean, se } = meanAndSe(perQuery);
  return { recall_at_1: hits1 / nq, recall_at_10: mean, recall_at_10_se: se };
}

export function meanAndSe(v: readonly number[]): { mean: number; se: number } {
  const nq = v.length;
  const mean = v.reduce((a, b) => a + b, 0) / nq;
  const variance = nq > 1 ? v.reduce((a, b) => a + (b - mean) ** 2, 0) / (nq - 1) : 0;
  return { mean, se: Math.sqrt(variance / nq) };
}

/** k of "@10": 10, or fewer when the base has 10 vectors or less (a query never counts itself). */
function kOf(nb: number): number {
  return Math.min(10, nb - 1);
}

function queryVectors(xs: Originals, n: number, d: number, plan: RecallPlan, s: number): Float32Array {
  const q = new Float32Array(new SharedArrayBuffer(Math.max(1, plan.queries.length * d) * 4));
  const list = plan.queries.map((p) => rowAt(plan.base, p));
  if (isRowsReader(xs)) xs.gather(list, q); // the queries are out of order: one read each, not a block each
  else {
    const x = asRows(xs, n, d);
    list.forEach((i, r) => rowInto(x, i, q.subarray(r * d, (r + 1) * d)));
  }
  return scaleInPlace(q, s);
}

/** Row q's ids (width per row), its own position left out, first k kept. */
function withoutSelf(ids: Int32Array, q: number, width: number, self: number, k: number): number[] {
  const out: number[] = [];
  for (let r = 0; r < width && out.length < k; r++) {
    const id = ids[q * width + r];
    if (id !== self && id >= 0) out.push(id);
  }
  return out;
}

