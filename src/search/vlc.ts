// A .vlc file as a SearchIndex: its anchors, inverted lists from its assignments, and — when it
// has a residual section — a scorer that measures each candidate's own reconstruction: the
// codec's own (codec-registry/: asymmetric distances for pq, straight from the codes for
// int8/int4), or a decoded row for a codec without one.
import { scorerOf } from '../codec-registry/index.js';
import type { VlcFile } from '../io/vlc/format.js';
import { reconstructInto } from '../io/vlc/reconstruct.js';
import { invertedLists } from './lists.js';
import type { Metric } from '../vectors/metric.js';
import type { CandidateScorer, SearchIndex } from './types.js';

/**
 * `metric`: what the search ranks by (default: the file's). A cosine file's anchors and residuals
 * hold the vectors at unit length (its norms only scale decoded vectors back), so its index is
 * searched as stored, the norms left out.
 */
export function vlcSearchIndex(stored: VlcFile, metric: Metric = stored.manifest.metric): SearchIndex {
  const file: VlcFile = stored.norms ? { ...stored, norms: undefined } : stored;
  const { n, d, m } = file.manifest;
  const base = { n, d, m, anchors: file.anchors, lists: invertedLists(file.assignments, n, m), metric };
  if (!file.residuals) return base;
  return { ...base, ...(scorerOf(file, base) ?? { scorer: reconstructionScorer(file) }), ...(metric !== 'l2' ? { normSq: normsOf(file) } : {}) };
}

/** ‖x̂_i‖² of each vector's reconstruction, computed on first use and kept (ip / cosine candidates: metric.ts). */
function normsOf(file: VlcFile): (id: number) => number {
  const d = file.manifest.d;
  const known = new Float64Array(file.manifest.n).fill(-1);
  const row = new Float32Array(d);
  return (id) => {
    if (known[id] >= 0) return known[id];
    reconstructInto(file, id, row);
    let s = 0;
    for (let k = 0; k < d; k++) s += row[k] * row[k];
    return (known[id] = s);
  };
}
/** Squared L2 from the query to vector id's reconstruction (anchor + dequantized residual). */
function reconstructionScorer(file: VlcFile): CandidateScorer {
  const d = file.manifest.d;
  const row = new Float32Array(d);
  return {
    forQuery: (query) => (id) => {
      reconstructInto(file, id, row);
      let s = 0;
      for (let k = 0; k < d; k++) {
        const e = query[k] - row[k];
        s += e * e;
      }
      return s;
    },
  };
}
