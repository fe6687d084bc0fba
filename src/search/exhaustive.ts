// Exhaustive exact search over a .vlc file's DECODED vectors (`vlc search` on a GPU): every vector
// is reconstructed and ranked by the ExactKnn's knnDecoded — on a GPU decoded on the device
// (backend/cuda/decode.ts, bit for bit as io/vlc/reconstruct.ts) and ranked there (cuda/knn.ts);
// otherwise (no room on the GPU, the host) decoded on the host a block of rows at a time and
// handed with the queries to the exact k-NN, lists merged (backend/block-knn.ts).
// The result is exactly the ranking of every decoded vector by squared L2 to the query (ties: the
// lower id) — not the index probing of search/index.ts, which visits only the nearest anchors' vectors.
import type { ExactKnn, Neighbours } from '../backend/device.js';
import type { OnRows } from '../backend/block-knn.js';
import type { VlcFile } from '../io/vlc/format.js';

/** The k nearest decoded vectors of each of nq queries (nq × d, row-major). */
export function searchDecoded(file: VlcFile, queries: Float32Array, nq: number, k: number, knn: ExactKnn, onRows?: OnRows): Promise<Neighbours> {
  return knn.knnDecoded(file, file.manifest.n, queries, nq, k, onRows);
}
