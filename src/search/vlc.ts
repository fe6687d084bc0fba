// A .vlc file as a SearchIndex: its anchors, inverted lists from its assignments, and — when it
// has a residual section — a scorer that measures each candidate's own reconstruction: the
// codec's own (codec-registry/: asymmetric distances for pq, straight from the codes for
// int8/int4), or a decoded row for a codec without one. A file read where it lies (io/vlc/on-disk.ts)
// gives its scorer a block of rows at a time, for the search's scan in row order (block-scan.ts).
import type { IndexBase } from '../codec-registry/codec.js';
import { scoresInBlocks, scorerOf } from '../codec-registry/index.js';
import type { VlcFile } from '../io/vlc/format.js';
import { BlockedResiduals } from '../io/vlc/on-disk.js';
import { reconstructInto, type Decodable } from '../io/vlc/reconstruct.js';
import { invertedLists } from './lists.js';
import type { Metric } from '../vectors/metric.js';
import type { CandidateScorer, ScanBlocks, SearchIndex } from './types.js';

/**
 * `metric`: what the search ranks by (default: the file's). A cosine file's anchors and residuals
 * hold the vectors at unit length (its norms only scale decoded vectors back), so its index is
 * searched as stored, the norms left out.
 */
export function vlcSearchIndex(stored: VlcFile, metric: Metric = stored.manifest.metric): SearchIndex {
  let file: VlcFile = stored.norms ? { ...stored, norms: undefined } : stored;
  const { n, d, m } = file.manifest;
  const base = { n, d, m, anchors: file.anchors, lists: invertedLists(file.assignments, n, m), metric };
  const r = file.residuals;
  if (!r) return base;
  const normSq = () => (metric !== 'l2' ? { normSq: normsOf(file) } : {});
  if (r instanceof BlockedResiduals) {
    // Read where it lies: scored a block of rows at a time (block-scan.ts), unless the codec's scorer needs every row at once.
    if (scoresInBlocks(r.mode)) return { ...base, scorer: reconstructionScorer(file), blocks: blocksOf(file, r, base), ...normSq() };
    file = { ...file, residuals: r.whole() };
  }
  return { ...base, ...(scorerOf(file, base) ?? { scorer: reconstructionScorer(file) }), ...normSq() };
}

/** Block b's scorer: the codec's own (or decoded rows) over the block's residuals, ids shifted to the block's rows. */
function blocksOf(file: VlcFile, r: BlockedResiduals, base: IndexBase): ScanBlocks {
  const { n, d } = file.manifest;
  const { rows } = r;
  return {
    rows,
    assignments: file.assignments,
    scorer(b) {
      const r0 = b * rows, r1 = Math.min(n, r0 + rows);
      const part: Decodable = { anchors: file.anchors, assignments: file.assignments.subarray(r0, r1), residuals: r.block(b), manifest: { d } };
      const own = scorerOf(part, { ...base, n: r1 - r0 })?.scorer ?? reconstructionScorer(part);
      return {
        forQuery(query) {
          const f = own.forQuery(query);
          return (id, anchorDist) => f(id - r0, anchorDist);
        },
      };
    },
  };
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
function reconstructionScorer(file: Decodable): CandidateScorer {
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
