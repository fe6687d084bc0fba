// What the compressed k-NN search (index.ts) works on, and what it takes and gives back. The
// search never sees a file format or a device: an index adapter (vlc.ts for .vlc files) says how
// vectors are grouped and how far a query is from a vector's reconstruction; the exact k-NN that
// ranks the anchors comes from a backend (ExactKnn, src/backend/device.ts).
import type { InvertedLists, ListedIndex, Neighbours, PqAdcData } from '../backend/device.js';
import type { Metric } from '../vectors/metric.js';

export type { InvertedLists };

/**
 * Distances from one query to candidate vectors' reconstructions, for a codec that stores more
 * than the anchor id (residuals; product quantization builds its lookup tables here).
 */
export interface CandidateScorer {
  /**
   * Prepare for one query (length d); the returned function gives the squared L2 to vector `id`,
   * whose anchor is `anchorDist` (squared L2) from the query.
   */
  forQuery(query: Float32Array): (id: number, anchorDist: number) => number;
}

/** A compressed index as the search sees it. */
export interface SearchIndex extends ListedIndex {
  /**
   * Absent when every vector's reconstruction is its anchor: a candidate's distance is then its
   * anchor's, and the candidates of one anchor tie (the lower id first).
   */
  scorer?: CandidateScorer;
  /**
   * pq-coded files: the scorer's data in shareable arrays (lists too), for the device's pass over
   * the whole pq search (ExactKnn.searchPq: the host's, on every core).
   */
  pq?: PqAdcData;
  /** What the search ranks by (default l2): ip and cosine rank the anchors and score the candidates by it (metric.ts). */
  metric?: Metric;
  /**
   * ip / cosine with a scorer: ‖x̂‖² of vector id's reconstruction, in the space the scorer measures
   * (a cosine file's: the vectors at unit length, before their stored norms).
   */
  normSq?: (id: number) => number;
  /**
   * Rows read from a file a block at a time (a .vlc read where it lies): the search scores each
   * block's rows against the queries that visit their anchors, in row order (block-scan.ts), with
   * the results of the list-order scan. `scorer` then serves rows asked in any order.
   */
  blocks?: ScanBlocks;
}

/** An index's rows a block at a time: rows [b·rows, min(n, (b + 1)·rows)) form block b. */
export interface ScanBlocks {
  rows: number;
  /** Each vector's anchor. */
  assignments: ArrayLike<number>;
  /** Block b's scorer (ids: the index's row numbers, within the block), reading the block unless it is the one held. */
  scorer(b: number): CandidateScorer;
}

export interface SearchOptions {
  k: number;
  /** Visit at least this many anchors (default: defaultNprobe of the index). */
  nprobe?: number;
  /** Per query, one vector id to leave out of its results (eval: the query itself), or -1. */
  exclude?: Int32Array;
  /** pq-coded indexes searched by the backend (ExactKnn.searchPq): its threads (default: every core). */
  threads?: number;
  /** Hears how many queries are done (progress). */
  onProgress?: (done: number) => void;
}

/**
 * nq×k ids (ascending distance; -1 where fewer than k vectors exist) and squared L2 distances to the
 * reconstructions (+∞ with -1); under ip / cosine the distance is −⟨q, x̂⟩ / −cos(q, x̂) (metric.ts scoreOf).
 */
export type SearchResult = Neighbours;
