// Asymmetric distances to product-quantized vectors (codecs/pq.ts) without decoding them. Vector i
// of anchor j is x̂_i = a_j + s_j·ĉ_i, ĉ_i the concatenation of its M codebook entries, so
//
//   ‖q − x̂_i‖² = ‖q − a_j‖² − 2 s_j ⟨q, ĉ_i⟩ + (2 s_j ⟨a_j, ĉ_i⟩ + s_j² ‖ĉ_i‖²)
//
// The first term is the anchor's distance, which the search has from ranking the anchors; the
// last is the query's business not at all and is computed once per vector when the index is
// built (`extra`); the middle one is a sum of M lookups in a per-query table T[t][c] = ⟨q_t, c_t⟩
// (K × d multiply-adds per query, shared by every list the query visits).
import type { PqResiduals } from '../codecs/pq.js';

/** Everything the distances need, in plain (shareable) arrays, so a worker thread can rebuild it. */
export interface PqAdcData {
  M: number;
  K: number;
  /** Start of each subspace's dimensions (M + 1). */
  bounds: Int32Array;
  /** K × d codebook values, subspace blocks one after the other (as PqResiduals holds them). */
  codebooks: Float32Array;
  /** n × M codes, one per byte. */
  codes: Uint8Array;
  /** Each vector's 2 s_j ⟨a_j, ĉ_i⟩ + s_j² ‖ĉ_i‖². */
  extra: Float32Array;
  /** Each vector's anchor scale s_j. */
  scale: Float32Array;
}

/** Typed arrays on SharedArrayBuffers (worker threads read them without a copy). */
const shared = {
  f32: (n: number) => new Float32Array(new SharedArrayBuffer(4 * n)),
  u8: (n: number) => new Uint8Array(new SharedArrayBuffer(n)),
};

/** The ADC data of a pq-coded file: its codes and codebooks, plus each vector's query-free term. */
export function pqAdcData(pq: PqResiduals, anchors: Float32Array, assign: ArrayLike<number>): PqAdcData {
  const { n, d, M, K, bounds, codebooks, codes, scales } = pq;
  const sharedCodes = shared.u8(n * M);
  sharedCodes.set(codes);
  const extra = shared.f32(n);
  const scale = shared.f32(n);
  for (let i = 0; i < n; i++) {
    const j = assign[i];
    const s = scales[j];
    let dot = 0; // ⟨a_j, ĉ_i⟩
    let norm = 0; // ‖ĉ_i‖²
    for (let t = 0; t < M; t++) {
      const lo = bounds[t];
      const w = bounds[t + 1] - lo;
      const c = K * lo + codes[i * M + t] * w;
      for (let k = 0; k < w; k++) {
        const v = codebooks[c + k];
        dot += anchors[j * d + lo + k] * v;
        norm += v * v;
      }
    }
    extra[i] = 2 * s * dot + s * s * norm;
    scale[i] = s;
  }
  return { M, K, bounds, codebooks, codes: sharedCodes, extra, scale };
}

/** The per-query scorer: builds the table once, then each candidate costs M lookups. */
export function pqAdcScorer(a: PqAdcData) {
  const { M, K, bounds, codebooks, codes, extra, scale } = a;
  const table = new Float32Array(M * K);
  return {
    forQuery(query: Float32Array) {
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
        const row = id * M;
        for (let t = 0; t < M; t++) dot += table[t * K + codes[row + t]];
        return anchorDist + extra[id] - 2 * scale[id] * dot;
      };
    },
  };
}
