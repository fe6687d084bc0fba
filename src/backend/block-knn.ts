// Exact k-NN over a base of any size, handed to the ExactKnn a block of rows at a time (a typed
// array cannot hold all of a large dataset, nor should a decoded copy of a large file be whole in
// memory) and the per-block lists merged. Ties keep the lower id, as ExactKnn's do: blocks come in
// id order and the merge prefers the earlier list on equal distances. Used by the exhaustive search
// over decoded vectors (the host's ExactKnn.knnDecoded, decodedKnn below, and a GPU's beyond its
// room) and by the recall measurements of quality/recall.ts.
import { checkpoint } from '../interrupt.js';
import { reconstructRange, type Decodable } from '../io/vlc/reconstruct.js';
import { pieceRows } from '../vectors/dataset.js';
import type { ExactKnn, Neighbours } from './device.js';
import { mergeLists } from './neighbours.js';

/** Floats of one base block handed to the exact k-NN (64 MiB), so a decoded copy of a large file is never whole in memory. */
export const BLOCK_FLOATS = 1 << 24;

/** Told after each block of the base how many base vectors have been searched, of how many. */
export type OnRows = (done: number, total: number) => void;

/**
 * Exact k-NN of the queries over nb base rows given block by block (`block(r0, r1, scratch)` returns
 * rows r0..r1 as r1−r0 rows of d floats), the per-block lists merged: ascending distance, ties by
 * the lower base position, as one call over the whole base would give. `prefixes` (ascending, below
 * nb): blocks also end there, and `onPrefix(rows, lists)` gets the lists merged so far, which are
 * what a search over the first `rows` rows alone gives.
 */
export async function blockKnn(
  queries: Float32Array, nq: number, d: number, k: number, nb: number,
  block: (r0: number, r1: number, scratch: Float32Array) => Float32Array, knn: Pick<ExactKnn, 'knn'>, blockFloats = BLOCK_FLOATS, onRows?: OnRows,
  prefixes: readonly number[] = [], onPrefix?: (rows: number, lists: Neighbours) => void,
): Promise<Neighbours> {
  const rowsPerBlock = Math.max(1, Math.floor(blockFloats / d));
  let scratch: Float32Array | undefined;
  let best: Neighbours | undefined;
  for (let r0 = 0, r1 = 0; r0 < nb; r0 = r1) {
    const cut = prefixes.find((p) => p > r0);
    r1 = Math.min(nb, r0 + rowsPerBlock, cut ?? nb);
    scratch ??= new Float32Array(new SharedArrayBuffer(Math.max(1, Math.min(nb, rowsPerBlock) * d) * 4));
    const part = await knn.knn(block(r0, r1, scratch), r1 - r0, queries, nq, d, k);
    if (r0 > 0) for (let t = 0; t < part.ids.length; t++) if (part.ids[t] >= 0) part.ids[t] += r0;
    best = best ? mergeLists(best, part, nq, k) : part;
    if (r1 === cut) onPrefix?.(r1, best); // merges make new lists: this one stays as it is
    onRows?.(r1, nb);
    await checkpoint(); // a Ctrl-C ends the search between blocks, not after all of them
  }
  return best ?? { ids: new Int32Array(nq * k).fill(-1), dists: new Float32Array(nq * k).fill(Infinity) };
}

/**
 * ExactKnn.knnDecoded on the host: the file's first nb vectors reconstructed a block of rows at a
 * time (io/vlc/reconstruct.ts) and each block handed with the queries to `knn`. Blocks of
 * `blockFloats` (default: as large as one view of rows, so that a device's knn gets the queries
 * uploaded as few times as may be; the host's k-NN takes BLOCK_FLOATS, so the decoded block is
 * small beside a file whose codes stay on disk).
 */
export function decodedKnn(knn: Pick<ExactKnn, 'knn'>, blockFloats?: number): ExactKnn['knnDecoded'] {
  return (file: Decodable, nb, queries, nq, k, onRows) => {
    const { d } = file.manifest;
    const decoded = (r0: number, r1: number, out: Float32Array) => reconstructRange(file, r0, r1, out);
    return blockKnn(queries, nq, d, k, nb, decoded, knn, blockFloats ?? pieceRows(d, 'f32') * d, onRows);
  };
}
