// k-NN over a compressed index (`vlc search`, and the recall figures of `vlc eval`):
//   1. rank the anchors by exact squared L2 distance to the query (the injected ExactKnn, which
//      batches all queries) — or, under the index's metric ip / cosine, by it (metric.ts);
//   2. probe: walk them nearest first, collecting the vectors assigned to each ("candidates"),
//      until at least k candidates are in hand and at least `nprobe` anchors were visited;
//   3. rank the candidates by the distance from the query to their reconstruction (the index's
//      scorer). Without one a vector's reconstruction is its anchor, so step 3's distance is the
//      anchor's distance and candidates of one anchor tie (broken by the lower id). With residuals
//      each candidate has its own reconstruction, and visiting more anchors (nprobe) finds
//      neighbours that fell just across a cell boundary. The k best are kept exactly (scan.ts).
// pq-coded indexes (with `pq` data) are searched by the device's pass (ExactKnn.searchPq: the
// host's runs the same steps fused per block of queries on the SIMD kernel and every core), with
// the same ids and distances as the steps above; the scorer (pq-adc.ts) serves an index without it.
// Under ip / cosine (the index's metric) no pq pass: the scorer's L2 becomes the metric's distance (metric.ts).
// An index read from a file in blocks (SearchIndex.blocks) takes steps 2 and 3 block by block
// (block-scan.ts): each row read once, the same results.
// The index comes from an adapter (vlc.ts); the search knows no file format and no device.
import type { ExactKnn } from '../backend/device.js';
import { checkpoint } from '../interrupt.js';
import { withMetric } from './metric.js';
import { scanBlocks } from './block-scan.js';
import { scanQueries } from './scan.js';
import type { SearchIndex, SearchOptions, SearchResult } from './types.js';

export type { CandidateScorer, InvertedLists, ScanBlocks, SearchIndex, SearchOptions, SearchResult } from './types.js';
export { invertedLists } from './lists.js';
export { vlcSearchIndex } from './vlc.js';

/** Anchors visited at least, by default: with a scorer (residuals), neighbours in nearby cells are findable. */
export function defaultNprobe(index: SearchIndex): number {
  return index.scorer ? 8 : 1;
}

/**
 * Most queries find k candidates among a few dozen anchors: the first ranking keeps this many;
 * the rare query that runs short (many empty or tiny anchors) is ranked again against all m.
 */
const FIRST_RANKING = 32;

/**
 * Queries per pass over an index read in blocks: their visits and k best are held through the pass
 * (a few hundred bytes a query), and each batch reads the file once.
 */
const BLOCK_SCAN_QUERIES = 65_536;
let blockScanQueries = BLOCK_SCAN_QUERIES;

/** Tests: queries per pass over an index read in blocks (undefined: the default). */
export function setBlockScanQueriesForTests(queries?: number): void {
  blockScanQueries = queries ?? BLOCK_SCAN_QUERIES;
}

/** On the calling thread, queries scored between progress reports and Ctrl-C checks. */
const QUERIES_PER_REPORT = 16;

export async function searchCompressed(
  index: SearchIndex,
  queries: Float32Array,
  nq: number,
  o: SearchOptions,
  exact: ExactKnn,
): Promise<SearchResult> {
  const { d, m, anchors } = index;
  const metric = index.metric ?? 'l2';
  const native = exact;
  exact = withMetric(exact, metric); // ip / cosine: the anchors ranked by it (metric.ts)
  const nprobe = Math.min(m, Math.max(1, o.nprobe ?? defaultNprobe(index)));
  const options = { ...o, nprobe };
  const out: SearchResult = { ids: new Int32Array(nq * o.k).fill(-1), dists: new Float32Array(nq * o.k).fill(Infinity) };

  if (index.pq && metric === 'l2') {
    const { n, lists, pq } = index;
    await native.searchPq({ n, d, m, anchors, lists, pq }, queries, nq, options, out);
    o.onProgress?.(nq);
    return out;
  }
  const width = Math.min(m, Math.max(nprobe, FIRST_RANKING));
  const ranked = { ...(await exact.knn(anchors, m, queries, nq, d, width)), width };
  if (index.blocks) {
    // Read in blocks: every row once per batch of queries, in order, scored against the queries visiting its anchor.
    const rankAll = async (sub: Float32Array, count: number) => ({ ...(await exact.knn(anchors, m, sub, count, d, m)), width: m });
    const { k } = o;
    for (let q0 = 0; q0 < nq; q0 += blockScanQueries) {
      const q1 = Math.min(nq, q0 + blockScanQueries);
      const part = { ids: ranked.ids.subarray(q0 * width, q1 * width), dists: ranked.dists.subarray(q0 * width, q1 * width), width };
      const into = { ids: out.ids.subarray(q0 * k, q1 * k), dists: out.dists.subarray(q0 * k, q1 * k) };
      const exclude = o.exclude?.subarray(q0, q1);
      await scanBlocks(index, queries.subarray(q0 * d, q1 * d), q1 - q0, part, { ...options, exclude, onProgress: (done) => o.onProgress?.(q0 + done) }, into, rankAll);
    }
    o.onProgress?.(nq);
    return out;
  }
  const retry: number[] = [];
  for (let q0 = 0; q0 < nq; q0 += QUERIES_PER_REPORT) {
    const q1 = Math.min(nq, q0 + QUERIES_PER_REPORT);
    const part = { ids: ranked.ids.subarray(q0 * width, q1 * width), dists: ranked.dists.subarray(q0 * width, q1 * width), width };
    const list = Array.from({ length: q1 - q0 }, (_, r) => q0 + r);
    retry.push(...scanQueries(index, queries.subarray(q0 * d, q1 * d), part, options, out, list, false));
    if (q1 < nq) {
      o.onProgress?.(q1);
      await checkpoint(); // a long search yields now and then, so Ctrl-C is heard
    }
  }
  o.onProgress?.(nq);
  if (retry.length) {
    const sub = new Float32Array(retry.length * d);
    retry.forEach((q, r) => sub.set(queries.subarray(q * d, (q + 1) * d), r * d));
    const all = { ...(await exact.knn(anchors, m, sub, retry.length, d, m)), width: m };
    scanQueries(index, sub, all, options, out, retry, true);
  }
  return out;
}
