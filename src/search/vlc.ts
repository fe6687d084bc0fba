// A .vlc file as a SearchIndex: its anchors, inverted lists from its assignments, and — when it
// has a residual section — a scorer that measures each candidate's own reconstruction: the
// codec's own (codec-registry/: asymmetric distances for pq, straight from the codes for
// int8/int4), or a decoded row for a codec without one.
import { scorerOf } from '../codec-registry/index.js';
import type { VlcFile } from '../io/vlc/format.js';
import { reconstructInto } from '../io/vlc/reconstruct.js';
import { invertedLists } from './lists.js';
import type { CandidateScorer, SearchIndex } from './types.js';

export function vlcSearchIndex(file: VlcFile): SearchIndex {
  const { n, d, m } = file.manifest;
  const base = { n, d, m, anchors: file.anchors, lists: invertedLists(file.assignments, n, m) };
  if (!file.residuals) return base;
  return { ...base, ...(scorerOf(file, base) ?? { scorer: reconstructionScorer(file) }) };
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
