// A .vlc file as a SearchIndex: its anchors, inverted lists from its assignments, and — when it
// has a residual section — a scorer that measures each candidate's own reconstruction: asymmetric
// distances from per-query tables for pq (pq-adc.ts), a decoded row for int8/int4.
import type { PqResiduals } from '../codecs/pq.js';
import { ScalarResiduals } from '../codecs/scalar.js';
import type { VlcFile } from '../io/vlc/format.js';
import { reconstructInto } from '../io/vlc/reconstruct.js';
import { invertedLists } from './lists.js';
import { pqAdcData, pqAdcScorer } from './pq-adc.js';
import type { CandidateScorer, SearchIndex } from './types.js';

export function vlcSearchIndex(file: VlcFile): SearchIndex {
  const { n, d, m } = file.manifest;
  const base = { n, d, m, anchors: file.anchors, lists: invertedLists(file.assignments, n, m) };
  if (file.residuals?.mode === 'pq') {
    const pq = pqAdcData(file.residuals as PqResiduals, file.anchors, file.assignments, base.lists);
    return { ...base, pq, scorer: pqAdcScorer(pq, base.lists, file.assignments) };
  }
  if (file.residuals instanceof ScalarResiduals) return { ...base, scorer: scalarScorer(file, file.residuals) };
  return { ...base, scorer: file.residuals ? reconstructionScorer(file) : undefined };
}

/**
 * int8/int4: the distance to anchor + scale·code computed straight from the codes — the same f32
 * values reconstructInto builds (one rounding of anchor + scale·code), the same f64 sum, without
 * a copy of the row per candidate.
 */
function scalarScorer(file: VlcFile, r: ScalarResiduals): CandidateScorer {
  const d = file.manifest.d;
  const { anchors, assignments } = file;
  const { scales, codes } = r;
  return {
    forQuery: (query) => (id) => {
      const a = assignments[id] * d;
      const o = id * d;
      let s = 0;
      for (let k = 0; k < d; k++) {
        const e = query[k] - Math.fround(anchors[a + k] + scales[k] * codes[o + k]);
        s += e * e;
      }
      return s;
    },
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
