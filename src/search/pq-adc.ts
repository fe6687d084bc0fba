// Asymmetric distances to product-quantized vectors (codecs/pq.ts) without decoding them. Vector i
// of anchor j is x̂_i = a_j + s_j·ĉ_i, ĉ_i the concatenation of its M codebook entries, so
//
//   ‖q − x̂_i‖² = ‖q − a_j‖² − 2 s_j ⟨q, ĉ_i⟩ + (2 s_j ⟨a_j, ĉ_i⟩ + s_j² ‖ĉ_i‖²)
//
// The first term is the anchor's distance, which the search has from ranking the anchors; the
// last is the query's business not at all and is computed once per vector when the index is
// built (`extra`); the middle one is a sum of M lookups in a per-query table T[t][c] = ⟨q_t, c_t⟩
// (K × d multiply-adds per query, shared by every list the query visits; pq-tables.ts).
// Codes and extras are stored in the inverted lists' order, as IVF indexes store them: a list's
// scan reads one contiguous run of memory instead of a cache line per vector.
// With a projection (x̂_i = a_j + s_j·Pᵀĉ_i, P's rows orthonormal) the same formula holds with Pq
// and Pa_j in place of q and a_j, since ⟨q, Pᵀĉ⟩ = ⟨Pq, ĉ⟩ and ‖Pᵀĉ‖ = ‖ĉ‖: the tables are built
// from the projected query (codecs/pq.ts tableQuery), k × d multiply-adds more per query.
import type { InvertedLists, PqAdcData } from '../backend/device.js';
import { tableQuery, type PqResiduals } from '../codecs/pq.js';
import { projectRows } from '../codecs/linear.js';
import { allocCodes } from '../vectors/codes.js';

export type { PqAdcData };


/** Typed arrays on SharedArrayBuffers (worker threads read them without a copy). */
const shared = {
  f32: (n: number) => new Float32Array(new SharedArrayBuffer(4 * n)),
};

/** The ADC data of a pq-coded file: its codes in list order, and each vector's query-free term. */
export function pqAdcData(pq: PqResiduals, anchors: Float32Array, assign: ArrayLike<number>, lists: InvertedLists): PqAdcData {
  const { n, d, M, K, bounds, codebooks, codes, scales, projection } = pq;
  const m = lists.start.length - 1;
  const D = pq.dims;
  // The anchors in the coordinates the codebooks live in: Pa_j with a projection, else a_j.
  const base = projection ? projectRows(projection, D, d, anchors, m) : anchors;
  const listCodes = allocCodes<Uint8Array>('u8', n, M); // shared, in pieces: n·M may pass one array
  const extra = shared.f32(n);
  const scale = shared.f32(m);
  scale.set(scales.subarray(0, m));
  for (let p = 0; p < n; p++) {
    const i = lists.members[p];
    const j = assign[i];
    const s = scales[j];
    const src = codes.piece(i), so = codes.pieceStart(i);
    const dst = listCodes.piece(p), dO = listCodes.pieceStart(p);
    let dot = 0; // ⟨a_j, ĉ_i⟩
    let norm = 0; // ‖ĉ_i‖²
    for (let t = 0; t < M; t++) {
      const code = (dst[dO + t] = src[so + t]);
      const lo = bounds[t];
      const w = bounds[t + 1] - lo;
      const c = K * lo + code * w;
      for (let k = 0; k < w; k++) {
        const v = codebooks[c + k];
        dot += base[j * D + lo + k] * v;
        norm += v * v;
      }
    }
    extra[p] = 2 * s * dot + s * s * norm;
  }
  return { M, K, bounds, codebooks, codes: listCodes, extra, scale, ...(projection ? { projection } : {}) };
}

/**
 * The per-query scorer of search/index.ts's generic steps (a vector by its id): builds the table
 * once, then each candidate costs M lookups. A backend's pq search (ExactKnn.searchPq, the CPU's
 * backend/cpu/pq-search.ts) scans the lists' runs directly; this is the same arithmetic, the
 * reference the tests compare it with.
 */
export function pqAdcScorer(a: PqAdcData, lists: InvertedLists, assign: ArrayLike<number>) {
  const { M, K, bounds, codebooks, codes, extra, scale } = a;
  const table = new Float32Array(M * K);
  let position: Int32Array | undefined; // id → row of codes/extra, made on first use
  return {
    forQuery(original: Float32Array) {
      position ??= positions(lists);
      const at = position;
      const query = tableQuery(a.projection, a.bounds[a.M], original);
      for (let t = 0; t < M; t++) {
        const lo = bounds[t];
        const w = bounds[t + 1] - lo;
        for (let c = 0; c < K; c++) {
          const e = K * lo + c * w;
          let s = 0;
          for (let k = 0; k < w; k++) s += query[lo + k] * codebooks[e + k];
          table[t * K + c] = s;
        }
      }
      return (id: number, anchorDist: number): number => {
        let dot = 0;
        const p = at[id];
        const piece = codes.piece(p), row = codes.pieceStart(p);
        for (let t = 0; t < M; t++) dot += table[t * K + piece[row + t]];
        return anchorDist + extra[p] - 2 * scale[assign[id]] * dot;
      };
    },
  };
}

function positions(lists: InvertedLists): Int32Array {
  const at = new Int32Array(lists.members.length);
  lists.members.forEach((id, p) => (at[id] = p));
  return at;
}
