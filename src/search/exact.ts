// Exact k-NN over a dataset of any size: the base is handed to the ExactKnn one view of rows at a
// time (a typed array cannot hold all of a large dataset) and the per-piece lists are merged.
// Ties keep the lower id, as ExactKnn's do: pieces come in id order and the merge prefers the
// earlier list on equal distances.
import type { ExactKnn, Neighbours } from '../backend/types.js';
import { mergeLists } from '../backend/neighbours.js';
import { pieceRows, rowsF32, type Dataset } from '../vectors/dataset.js';

export async function exactKnnOverRows(exact: ExactKnn, ds: Dataset, queries: Float32Array, nq: number, k: number): Promise<Neighbours> {
  const { d } = ds;
  const per = pieceRows(d, 'f32'); // f16 rows are decoded: size the pieces for f32
  let best: Neighbours | undefined;
  for (let r0 = 0; r0 < ds.n; r0 += per) {
    const r1 = Math.min(ds.n, r0 + per);
    const got = await exact.knn(rowsF32(ds, r0, r1), r1 - r0, queries, nq, d, k);
    for (let e = 0; e < got.ids.length; e++) if (got.ids[e] >= 0) got.ids[e] += r0;
    best = best ? mergeLists(best, got, nq, k) : got;
  }
  return best ?? { ids: new Int32Array(nq * k).fill(-1), dists: new Float32Array(nq * k).fill(Infinity) };
}

export { mergeLists };
