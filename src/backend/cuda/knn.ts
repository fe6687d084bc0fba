// Exact brute-force k-NN on the GPU (cuda/knn.cu): the CUDA backend's ExactKnn (../device.ts),
// the same contract as the CPU's (cpu/knn.ts): squared L2 by direct differences in f32, each
// query's k nearest ascending, ties by the lower id, id −1 / +∞ where fewer than k exist. The
// distances agree with the CPU's to the last bits of f32 (each sums the d terms in its own order).
//
// One call: the queries go up transposed (the kernel stages a dimension of 32 queries as one row),
// the base in pieces that fit the GPU's free memory; per piece, knn_scan gives every (query, base
// chunk) its own top-k and knn_merge reduces them to the piece's k; the host merges the pieces
// (../neighbours.ts mergeLists). Only nq × k results come back, never an nq × nb matrix.
import { log } from '../../log.js';
import { decodedKnn } from '../block-knn.js';
import { mergeLists } from '../neighbours.js';
import type { ExactKnn, Neighbours } from '../device.js';
import { hostDevice } from '../host.js';
import type { Decodable } from '../../io/vlc/reconstruct.js';
import type { CudaContext } from './context.js';
import { decodableOnDevice, decodeOnDevice, type DeviceRows } from './decode.js';
import { KERNELS, launch } from './kernels.js';
import { HeldBuffers, fmtBytes, memInfo, type DeviceBuffer } from './pool.js';

/** The largest k the kernels keep on chip (KN_MAXK in cuda/knn.cu: 4 list entries per lane of a warp). */
export const GPU_KNN_MAX_K = 128;

/** Queries per block of knn_scan (KN_Q) and base rows per tile (KN_B): chunks are whole tiles. */
const GROUP = KERNELS.knn_scan.points.value;
const TILE_ROWS = 128;
/** Queries per knn_merge block (one warp each). */
const MERGE_QUERIES = KERNELS.knn_merge.threads / 32;
/** Blocks of knn_scan per multiprocessor to aim for: a few waves, so uneven chunks even out. */
const BLOCKS_PER_SM = 8;
/** Share of the free GPU memory one call may take (the driver and other work keep the rest). */
const MEMORY_SHARE = 0.8;
/** Bytes per synchronous copy of the base (Ctrl-C is heard between them). */
const UPLOAD_CHUNK = 64 << 20;
/** Queries per batch at most: the transposed queries, partial lists and results of one batch stay small. */
const MAX_BATCH = 65_536;

/** k above the kernels' limit, or no room on the GPU: the caller falls back to the host (gpuOrHostKnn). */
export class KnnLimitError extends Error {}

/**
 * Writes base rows r0 .. r0 + rows − 1 into X (rows × d f32, on the device); may return a check of
 * the finished work, made once the piece's kernels are waited for (decode.ts DeviceRows.fill's `later`).
 */
export type FillRows = (X: DeviceBuffer, r0: number, rows: number) => void | (() => void);

/**
 * This GPU's own k-NN kernels, which refuse k above maxK (the lists it keeps on chip) and calls
 * they have no room for (KnnLimitError); the backend's ExactKnn (gpuOrHostKnn) then runs the host's.
 */
export class CudaKnn {
  readonly maxK = GPU_KNN_MAX_K;
  /** GPU milliseconds of the last call's kernels (events around them; uploads not included): bench/knn-gpu.mjs. */
  lastKernelMs = 0;
  /** maxBytes: an upper bound on the device memory one call takes (VLC_CUDA_MAX_BYTES). */
  constructor(private readonly ctx: CudaContext, private readonly maxBytes = Infinity) {}

  async knn(base: Float32Array, nb: number, queries: Float32Array, nq: number, d: number, k: number): Promise<Neighbours> {
    if (base.length < nb * d) throw new Error(`knn: ${nb} base vectors of ${d} dims need a longer array`);
    const { ctx } = this;
    // The base goes up a piece at a time into the piece's buffer.
    const upload = (X: DeviceBuffer, r0: number, rows: number) => {
      const bytes = rows * d * 4;
      for (let off = 0; off < bytes; off += UPLOAD_CHUNK) {
        const len = Math.min(UPLOAD_CHUNK, bytes - off);
        ctx.upload(X, new Uint8Array(base.buffer, base.byteOffset + r0 * d * 4 + off, len), off);
      }
    };
    return this.knnRows(upload, nb, queries, nq, d, k);
  }

  /** The k-NN over the first nb vectors of a .vlc, decoded on this GPU (decode.ts) a piece at a time. */
  async knnDecoded(file: Decodable, nb: number, queries: Float32Array, nq: number, k: number, onRows?: (done: number, total: number) => void): Promise<Neighbours | undefined> {
    const rows = await this.decodedRows(file, nb);
    return rows && this.knnOnRows(rows, nb, queries, nq, file.manifest.d, k, onRows);
  }

  /** What decoding the file's first nb rows on this GPU needs, uploaded (decode.ts), or undefined: no decoder here for its codec. */
  async decodedRows(file: Decodable, nb: number, stop?: () => void): Promise<DeviceRows | undefined> {
    return decodableOnDevice(file) ? decodeOnDevice(this.ctx, file, nb, { stop }) : undefined;
  }

  /**
   * knnRows over nb rows decoded on this GPU (decodedRows), which it frees; undefined: no room for the
   * k-NN beside the codes, or k above the limit (the caller decodes on the host). `fill` may throw
   * to end the ranking (another GPU's failed).
   */
  async knnOnRows(rows: DeviceRows, nb: number, queries: Float32Array, nq: number, d: number, k: number, onRows?: (done: number, total: number) => void, before?: () => void): Promise<Neighbours | undefined> {
    try {
      return await this.knnRows((X, r0, count) => {
        before?.();
        // The decoder's check waits for the piece's kernels (this GPU's alone), not here: other GPUs' work goes on meanwhile.
        const check = rows.fill(X, r0, count, true);
        onRows?.(r0 + count, nb);
        return check;
      }, nb, queries, nq, d, k);
    } catch (e) {
      if (e instanceof KnnLimitError) return undefined;
      throw e;
    } finally {
      rows.free();
    }
  }

  /**
   * The same ranking over nb rows that `fill` writes on the device, a piece at a time (rows r0 ..
   * r0 + rows − 1 into X, rows × d f32): a base decoded on the GPU (decode.ts) never visits the host.
   */
  async knnRows(fill: FillRows, nb: number, queries: Float32Array, nq: number, d: number, k: number): Promise<Neighbours> {
    if (!(Number.isInteger(k) && k >= 1)) throw new Error(`knn: k must be >= 1, got ${k}`);
    if (k > GPU_KNN_MAX_K) throw new KnnLimitError(`GPU exact k-NN keeps at most k = ${GPU_KNN_MAX_K} neighbours per query, got k = ${k}`);
    if (queries.length < nq * d) throw new Error(`knn: ${nq} query vectors of ${d} dims need a longer array`);
    const ids = new Int32Array(nq * k).fill(-1), dists = new Float32Array(nq * k).fill(Infinity);
    if (nq === 0 || nb === 0) return { ids, dists };
    const out: Neighbours = { ids, dists };
    this.lastKernelMs = 0;
    const batch = Math.min(roundUp(nq, GROUP), MAX_BATCH);
    for (let q0 = 0; q0 < nq; q0 += batch) {
      const q1 = Math.min(nq, q0 + batch);
      const got = await this.batch(fill, nb, queries.subarray(q0 * d, q1 * d), q1 - q0, d, k);
      out.ids.set(got.ids, q0 * k);
      out.dists.set(got.dists, q0 * k);
    }
    return out;
  }

  /** One batch of queries against the whole base, piece by piece. */
  private async batch(fill: FillRows, nb: number, queries: Float32Array, nq: number, d: number, k: number): Promise<Neighbours> {
    const { ctx } = this;
    const nqPad = roundUp(nq, GROUP), groups = nqPad / GROUP;
    const sms = Math.max(1, ctx.info.multiprocessors);
    const maxChunks = Math.max(1, Math.ceil((sms * BLOCKS_PER_SM) / groups));
    const fixedBytes = nqPad * d * 4 + nqPad * k * 8 + nqPad * maxChunks * k * 8;
    ctx.makeCurrent();
    const [free] = memInfo(ctx.drv);
    const room = Math.min(free * MEMORY_SHARE, this.maxBytes) - fixedBytes;
    const pieceRows = Math.min(nb, Math.floor(room / (d * 4)));
    if (!(pieceRows >= Math.min(nb, TILE_ROWS))) {
      throw new KnnLimitError(`GPU exact k-NN: not enough GPU memory on ${ctx.where} for ${nq} queries of ${d} dims (${fmtBytes(Math.max(0, room + fixedBytes))} usable)`);
    }

    const held = new HeldBuffers(ctx.pool);
    const { alloc } = held;
    try {
      const QT = alloc('k-NN queries', nqPad * d * 4);
      ctx.upload(QT, transposed(queries, nq, nqPad, d));
      const X = alloc('k-NN base', pieceRows * d * 4);
      const partD = alloc('k-NN partial distances', nqPad * maxChunks * k * 4);
      const partI = alloc('k-NN partial ids', nqPad * maxChunks * k * 4);
      const outD = alloc('k-NN distances', nq * k * 4);
      const outI = alloc('k-NN ids', nq * k * 4);
      let best: Neighbours | undefined;
      for (let r0 = 0; r0 < nb; r0 += pieceRows) {
        const rows = Math.min(pieceRows, nb - r0);
        const check = fill(X, r0, rows);
        // Chunks of whole tiles, as many as keep every multiprocessor busy for a few waves.
        const tiles = Math.ceil(rows / TILE_ROWS);
        const chunkRows = Math.ceil(tiles / Math.min(maxChunks, tiles)) * TILE_ROWS;
        const chunks = Math.ceil(rows / chunkRows);
        const start = ctx.event(), end = ctx.event();
        ctx.record(start);
        launch(ctx, 'knn_scan', 'f32', groups, {
          QT: QT.ptr, nqPad, nq, X: X.ptr, nb: rows, d, k, chunkRows, partD: partD.ptr, partI: partI.ptr,
        }, { gridY: chunks });
        launch(ctx, 'knn_merge', 'f32', Math.ceil(nq / MERGE_QUERIES), {
          partD: partD.ptr, partI: partI.ptr, nq, chunks, k, outD: outD.ptr, outI: outI.ptr,
        });
        ctx.record(end);
        try {
          await ctx.wait(end);
          this.lastKernelMs += ctx.elapsedMs(start, end);
        } finally {
          ctx.destroyEvent(start);
          ctx.destroyEvent(end);
        }
        if (check) check();
        const got: Neighbours = { ids: new Int32Array(nq * k), dists: new Float32Array(nq * k) };
        ctx.download(got.ids, outI);
        ctx.download(got.dists, outD);
        if (r0 > 0) for (let e = 0; e < got.ids.length; e++) if (got.ids[e] >= 0) got.ids[e] += r0;
        best = best ? mergeLists(best, got, nq, k) : got;
      }
      return best!;
    } finally {
      held.free();
    }
  }
}

/** nq queries (rows of d) as d rows of nqPad (column q = query q; the padding columns 0). */
function transposed(queries: Float32Array, nq: number, nqPad: number, d: number): Float32Array {
  const t = new Float32Array(nqPad * d);
  for (let q = 0; q < nq; q++) for (let c = 0; c < d; c++) t[c * nqPad + q] = queries[q * d + c];
  return t;
}

function roundUp(v: number, to: number): number {
  return Math.ceil(v / to) * to;
}

/**
 * The CUDA backend's ExactKnn (../device.ts), complete: the GPU's k-NN for k up to its maxK while
 * it has room, else the host's (../host.ts, the CPU); the k-NN over decoded vectors on the GPU when
 * the codes and the k-NN fit there, else decoded on the host a block at a time and ranked by that
 * k-NN; the pq search the host's (the GPU has no kernel for it).
 */
export function gpuOrHostKnn(gpu: CudaKnn, host: ExactKnn = hostDevice.exactKnn): ExactKnn {
  const knn: ExactKnn['knn'] = async (base, nb, queries, nq, d, k) => {
    if (k > gpu.maxK) return host.knn(base, nb, queries, nq, d, k);
    try {
      return await gpu.knn(base, nb, queries, nq, d, k);
    } catch (e) {
      if (!(e instanceof KnnLimitError)) throw e;
      log().debug(`exact k-NN on the CPU: ${e.message}`);
      return host.knn(base, nb, queries, nq, d, k);
    }
  };
  const decodedOnHost = decodedKnn({ knn });
  return {
    knn,
    searchPq: host.searchPq,
    knnDecoded: async (file, nb, queries, nq, k, onRows) =>
      (await gpu.knnDecoded(file, nb, queries, nq, k, onRows)) ?? decodedOnHost(file, nb, queries, nq, k, onRows),
  };
}
