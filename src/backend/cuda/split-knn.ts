// The exhaustive search over a .vlc's decoded vectors on several GPUs (`vlc search --gpu 0,1,2,3`):
// the rows [0, nb) split into one contiguous range per GPU (io/vlc/row-range.ts rowCuts: balanced
// by rows, cut only between the file's blocks), each GPU holding only its range's assignments and
// codes (and the anchors), decoding and ranking every query over its range (knn.ts), the GPUs'
// kernels running at the same time; each query's lists then merged in range order with the
// ranges' first rows added to the ids. A (query, row) distance depends only on the two vectors
// (cuda/knn.cu sums the same terms in the same order wherever the row lies), and every list is
// the k best by (distance, then lower id) — a total order — so the merged lists are one GPU's, bit
// for bit.
import { log } from '../../log.js';
import { rowCuts, rowRange } from '../../io/vlc/row-range.js';
import type { Decodable } from '../../io/vlc/reconstruct.js';
import { decodedKnn, type OnRows } from '../block-knn.js';
import type { ExactKnn, Neighbours } from '../device.js';
import { mergeLists } from '../neighbours.js';
import type { DeviceRows } from './decode.js';
import type { CudaKnn } from './knn.js';

/** One GPU of the search: its own kernels, its complete ExactKnn (knn.ts gpuOrHostKnn) and its name ("cuda:1"). */
export interface KnnGpu {
  gpuKnn: CudaKnn;
  exactKnn: ExactKnn;
  ctx: { where: string };
}

/** Ends a GPU's ranking (between its pieces) once another GPU's has failed: that failure is the one reported. */
class Stopped extends Error {}

/**
 * An ExactKnn over several GPUs: knnDecoded splits the rows over them; knn (a base the host holds:
 * ip / cosine's decoded blocks, search/metric.ts) and searchPq are the first GPU's.
 */
export function splitKnn(gpus: readonly KnnGpu[]): ExactKnn {
  if (gpus.length === 0) throw new Error('splitKnn: no GPU');
  const { knn, searchPq } = gpus[0].exactKnn;
  return { knn, searchPq, knnDecoded: (file, nb, queries, nq, k, onRows) => knnDecodedSplit(gpus, file, nb, queries, nq, k, onRows) };
}

async function knnDecodedSplit(
  gpus: readonly KnnGpu[], file: Decodable, nb: number, queries: Float32Array, nq: number, k: number, onRows?: OnRows,
): Promise<Neighbours> {
  const { d } = file.manifest;
  const cuts = rowCuts(file, nb, gpus.length);
  const where = (g: number) => gpus[g].ctx.where;
  const rowsText = (g: number) => `rows ${cuts[g][0]}..${cuts[g][1] - 1}`;
  log().debug(`searching ${cuts.map((_, g) => `${rowsText(g)} on ${where(g)}`).join(', ')}`);
  const done = cuts.map(() => 0);
  const heard = (g: number): OnRows => (count) => {
    done[g] = count;
    onRows?.(done.reduce((s, x) => s + x, 0), nb);
  };
  let failed = false;
  const stopIfFailed = () => {
    if (failed) throw new Stopped();
  };
  // Each range's ranking, on its GPU; where the GPU has no decoder for the codec (or no room for the
  // k-NN beside the range's codes) that range alone is decoded on the host, a block at a time, and
  // ranked by the GPU's exact k-NN (the host's beyond its room), as one GPU falls back for every row.
  const views = cuts.map(([a, b]) => rowRange(file, a, b));
  const rank = async (g: number, rows: DeviceRows | undefined): Promise<Neighbours> => {
    const count = cuts[g][1] - cuts[g][0];
    try {
      const onGpu = rows && (await gpus[g].gpuKnn.knnOnRows(rows, count, queries, nq, d, k, heard(g), stopIfFailed));
      if (onGpu) return onGpu;
      log().debug(`${rowsText(g)}: decoded on the host (${rows ? `no room on ${where(g)} for the k-NN beside their codes` : `no decoder on the GPU for this codec`}), ranked by ${where(g)}'s exact k-NN`);
      const knn: ExactKnn['knn'] = (...args) => (stopIfFailed(), gpus[g].exactKnn.knn(...args));
      return await decodedKnn({ knn })(views[g], count, queries, nq, k, heard(g));
    } catch (e) {
      failed = true;
      throw e;
    }
  };
  // Every GPU's range goes up at once (its blocks read on libuv's threads and copied as they arrive:
  // upload-blocks.ts), and each GPU ranks as soon as its own range is up.
  const ranked = cuts.map(async (_, g) => {
    let rows: DeviceRows | undefined;
    try {
      rows = await gpus[g].gpuKnn.decodedRows(views[g], cuts[g][1] - cuts[g][0], stopIfFailed);
    } catch (e) {
      failed = true;
      throw e;
    }
    return rank(g, rows);
  });
  const settled = await Promise.allSettled(ranked);
  const errors = settled.flatMap((s) => (s.status === 'rejected' ? [s.reason] : []));
  if (errors.length) throw errors.find((e) => !(e instanceof Stopped)) ?? errors[0];
  let best: Neighbours | undefined;
  settled.forEach((s, g) => {
    const part = (s as PromiseFulfilledResult<Neighbours>).value;
    const first = cuts[g][0];
    if (first > 0) for (let t = 0; t < part.ids.length; t++) if (part.ids[t] >= 0) part.ids[t] += first;
    // Range order, the earlier list first on equal distances: ties go to the lower id, as on one GPU.
    best = best ? mergeLists(best, part, nq, k) : part;
  });
  return best ?? { ids: new Int32Array(nq * k).fill(-1), dists: new Float32Array(nq * k).fill(Infinity) };
}
