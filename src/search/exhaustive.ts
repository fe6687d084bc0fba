// Exhaustive exact search over a .vlc file's DECODED vectors (`vlc search` on a GPU): every vector
// is reconstructed on the GPU (backend/cuda/decode.ts, bit for bit as io/vlc/reconstruct.ts) and
// ranked there by its exact k-NN (cuda/knn.ts); otherwise (no room on the GPU, another ExactKnn)
// on the host a block of rows at a time, handed with the queries to the ExactKnn, lists merged.
// The result is exactly the ranking of every decoded vector by squared L2 to the query (ties: the
// lower id) — not the index probing of search/index.ts, which visits only the nearest anchors' vectors.
import type { ExactKnn, Neighbours } from '../backend/types.js';
import { pieceRows } from '../vectors/dataset.js';
import type { VlcFile } from '../io/vlc/format.js';
import { reconstructRange } from '../io/vlc/reconstruct.js';
import { blockKnn, type OnRows } from './exact.js';
import { withMetric, type Metric } from './metric.js';

/**
 * The k nearest decoded vectors of each of nq queries (nq × d, row-major), by `metric` (default:
 * the file's; ip / cosine: metric.ts, the lists ascending in −⟨q, x̂⟩ / −cos).
 */
export async function searchDecoded(
  file: VlcFile, queries: Float32Array, nq: number, k: number, exact: ExactKnn, onRows?: OnRows, metric: Metric = file.manifest.metric,
): Promise<Neighbours> {
  const { n, d } = file.manifest;
  // On a GPU the vectors are decoded on the device (cuda/decode.cu): only the codes go up, never n × d f32.
  // That path ranks by L2 of vectors without their norms: ip and cosine decode on the host, then rank on the device's k-NN.
  const onGpu = metric === 'l2' && !file.norms ? await exact.onDevice?.knnDecoded?.(file, n, queries, nq, k, onRows) : undefined;
  if (onGpu) return onGpu;
  const knn = withMetric(exact, metric);
  const decoded = (r0: number, r1: number, out: Float32Array) => reconstructRange(file, r0, r1, out);
  // Blocks as large as one view of rows: the fewer the blocks, the fewer uploads of the queries.
  return blockKnn(queries, nq, d, k, n, decoded, knn, pieceRows(d, 'f32') * d, onRows);
}
