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
import { decodedKnn } from '../backend/block-knn.js';
import { withMetric, type Metric } from './metric.js';

/**
 * The k nearest decoded vectors of each of nq queries (nq × d, row-major), by `metric` (default:
 * the file's; ip / cosine: metric.ts, decoded on the host and ranked by the metric's k-NN, the
 * lists ascending in −⟨q, x̂⟩ / −cos).
 */
export function searchDecoded(
  file: VlcFile, queries: Float32Array, nq: number, k: number, knn: ExactKnn, onRows?: OnRows, metric: Metric = file.manifest.metric,
): Promise<Neighbours> {
  // A device's decoder leaves a cosine file's norms out: such a file decodes on the host (not reached: it is searched by cosine only).
  if (metric === 'l2' && file.norms) return decodedKnn(knn)(file, file.manifest.n, queries, nq, k, onRows);
  return withMetric(knn, metric).knnDecoded(file, file.manifest.n, queries, nq, k, onRows);
}
