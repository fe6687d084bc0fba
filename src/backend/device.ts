// The search and codec device contract: the kernels a codec or a search runs on whatever device
// the backend has (a GPU), or on the host. Unlike the training engine (engine.ts), a device need
// not have every kernel: each member here is always there, and a backend without its own kernel
// (or without room for the call) gives the host's (host.ts: the CPU's threads, codecs/*.ts's
// encoders) — the same bytes either way, so a caller never asks which one ran.

import type { Decodable } from '../io/vlc/reconstruct.js';
import type { EncodedResiduals, ResidualInput, ScalarBlockDevice } from '../codecs/types.js';
import type { EcResiduals } from '../codecs/ec/residuals.js';
import type { Codes } from '../vectors/codes.js';
import type { BitsPlan } from '../codecs/bits-rows.js';
import type { ScalesFrom } from '../codecs/split.js';

/**
 * A codec's and the search's kernels on a device. The host's (host.ts) is every backend's
 * fallback, kernel by kernel; the CPU backend is the host's; a GPU runs its own where it has one
 * and room for it (cuda/index.ts); a sharded backend splits the residual encoders' rows over its
 * members (each its own range, one plan) and runs the other kernels on its first member.
 */
export interface CodecDevice extends ScalarBlockDevice {
  /**
   * The scalar residual codec (codecs/scalar.ts encodeScalar): the same residuals, error and
   * checksum, bit for bit, on the device (a GPU: cuda/residual.ts) or the host.
   */
  encodeScalar(mode: 'int8' | 'int4', input: ResidualInput): Promise<EncodedResiduals>;
  // scalarRanges, scalarCodes (codecs/types.ts ScalarBlockDevice): the scalar codec's loops over
  // one block of a streamed compress, on the device (a GPU: cuda/residual-blocks.ts) or the host's
  // threads (codecs/scalar-blocks.ts hostScalarBlocks), the same figures, codes and checksum.
  /** The bits codec's rows (codecs/bits-train.ts encodeBits), R code bytes a vector: the same residuals and error on the device or the host. */
  encodeBits(input: ResidualInput, R: number): Promise<EncodedResiduals>;
  /**
   * The scalar codec's rows whose scales are made elsewhere (codecs/split.ts: the rows split over
   * a sharded backend's GPUs, or spread over MPI ranks): each block's largest |r| and Σ r² per
   * dimension handed to `scalesFrom` (the input's first row starts a block of the whole data), the
   * codes under the scales it gives into `codes` (input.n × d), and each block's error in block
   * order: the same on the device or the host.
   */
  encodeScalarRows(mode: 'int8' | 'int4', input: ResidualInput, scalesFrom: ScalesFrom, codes: Codes<Int8Array>): Promise<Float64Array>;
  /**
   * The bits codec's rows under a plan chosen elsewhere (codecs/bits-train.ts bitsRows: rows split
   * over GPUs or MPI ranks, the plan from the whole data's sample) into `codes` (input.n × R,
   * zero), and each block's error in block order: the same codes and errors on the device or the host.
   */
  encodeBitsRows(input: ResidualInput, plan: BitsPlan, codes: Codes<Uint8Array>): Promise<Float64Array>;
  /**
   * Rows r0 .. r1 − 1 of a file (or of what compress holds before it writes one) reconstructed into
   * out (row-major from its start; returned): bit for bit io/vlc/reconstruct.ts reconstructRange,
   * decoded on the device where it has a decoder for the residuals and room (a GPU: cuda/decode.ts,
   * cuda/ec.ts), else on the host.
   */
  decodeRows(file: Decodable, r0: number, r1: number, out: Float32Array): Promise<Float32Array>;
  /** Exact k-NN, the pq search and the k-NN over decoded vectors (a GPU: cuda/knn.ts, up to its k limit and room; beyond them the host's). */
  readonly exactKnn: ExactKnn;
}

/** A file (or what compress holds before writing one) whose residuals are the ec codec's. */
export type EcDecodable = Decodable & { residuals: EcResiduals };

/** k nearest neighbours per query: nq×k ids and squared L2 distances, ascending (ties: lower id). */
export interface Neighbours {
  /** −1 where fewer than k base vectors exist. */
  ids: Int32Array;
  /** +∞ with id −1. */
  dists: Float32Array;
}

/**
 * Exact brute-force k-NN, the primitive src/search/ ranks anchors with (and `eval` its ground
 * truth): for each of nq queries the k nearest of nb base vectors (row-major, d dims), by direct
 * squared differences in f32. Every member is there on every device: the host's (host.ts, the
 * CPU's threads) where a device has no kernel of its own or no room for the call.
 */
export interface ExactKnn {
  knn(base: Float32Array, nb: number, queries: Float32Array, nq: number, d: number, k: number): Promise<Neighbours>;
  /**
   * The whole search of a pq-coded index (search/index.ts's steps for product-quantized residuals:
   * rank the anchors, walk their lists, asymmetric distances, exact top-k) as one pass (the host's:
   * backend/cpu/pq-search.ts). The same ids and distances as the search's generic steps over knn().
   * Writes nq × o.k results into `out`.
   */
  searchPq(index: PqIndex, queries: Float32Array, nq: number, o: PqSearchOptions, out: Neighbours): Promise<void>;
  /**
   * The k-NN over a .vlc's first nb vectors decoded (search/exhaustive.ts): on a GPU decoded and
   * ranked on the device (cuda/decode.ts, cuda/knn.ts) when it has room and a decoder for the
   * residual; else decoded on the host a block of rows at a time (block-knn.ts decodedKnn) and
   * each block handed to knn().
   */
  knnDecoded(file: Decodable, nb: number, queries: Float32Array, nq: number, k: number, onRows?: (done: number, total: number) => void): Promise<Neighbours>;
}

/** Vectors grouped by anchor: ids of anchor j are members[start[j] .. start[j+1]), ascending. */
export interface InvertedLists {
  start: Uint32Array;
  members: Uint32Array;
}

/**
 * What asymmetric distances to product-quantized vectors need (search/pq-adc.ts says how they are
 * made), in plain arrays that worker threads share. Vector i of anchor j, at position p of the
 * lists, is at squared L2 ‖q − a_j‖² + extra[p] − 2 scale[j] Σ_t T[t][codes[p M + t]] from query q,
 * T[t][c] = ⟨q_t, codebook_t[c]⟩ summed in f64 in dimension order and rounded to f32, the sum over
 * t in f64 in subspace order.
 */
export interface PqAdcData {
  M: number;
  K: number;
  /** Start of each subspace's dimensions (M + 1). */
  bounds: Int32Array;
  /** K × D codebook values (D = bounds[M]: d, or the projected dimensions), subspace blocks one after the other (as PqResiduals holds them). */
  codebooks: Float32Array;
  /** n × M codes, one per byte, row p = the vector at position p of the lists (lists.members[p]); in shared memory, in pieces of whole rows (vectors/codes.ts). */
  codes: Codes<Uint8Array>;
  /** 2 s_j ⟨a_j, ĉ_i⟩ + s_j² ‖ĉ_i‖² of the vector at each position of the lists. */
  extra: Float32Array;
  /** Each anchor's scale s_j (m). */
  scale: Float32Array;
  /** With a projection: its D × d directions (bounds[M] = D); tables come from the projected query (codecs/pq.ts tableQuery). */
  projection?: Float32Array;
}

/** n vectors of d dimensions grouped by the nearest of m anchors: what a search over inverted lists probes. */
export interface ListedIndex {
  n: number;
  d: number;
  m: number;
  /** m × d anchors as the decoder uses them (f32). */
  anchors: Float32Array;
  lists: InvertedLists;
}

/** A pq-coded index as ExactKnn.searchPq takes it. */
export interface PqIndex extends ListedIndex {
  pq: PqAdcData;
}

export interface PqSearchOptions {
  k: number;
  /** Visit at least this many anchors (and more until k vectors are found). */
  nprobe: number;
  /** Per query, one vector id to leave out of its results, or -1. */
  exclude?: Int32Array;
  /** Threads (default: every core, for a batch large enough). */
  threads?: number;
  /** Hears how many queries are done. */
  onProgress?: (done: number) => void;
}
