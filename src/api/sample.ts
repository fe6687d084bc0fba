// --sample: the annealing loop trains on a seeded uniform sample of the rows; one exact pass over
// every row then assigns them all (api/train.ts). FAISS trains k-means on at most 256 points per
// centroid by default; vlc's default, SAMPLE_PER_ANCHOR, comes from measuring the final energy
// and the time against training on every row (docs/algorithm.md, bench/results/sample.json).
import { UsageError } from '../errors.js';

/** Training rows per anchor by default: the sample is min(n, SAMPLE_PER_ANCHOR · m) rows (measured: docs/algorithm.md). */
export const SAMPLE_PER_ANCHOR = 256;

/** How many rows to train on: 'auto' (the default above), 'all', a count, or a fraction of n. */
export type SampleSpec = 'auto' | 'all' | { rows: number } | { fraction: number };

/** --sample's text: auto, all, a whole number of rows (>= 1), or a fraction in (0, 1) such as 0.1 or 10%. */
export function parseSample(text: string): SampleSpec {
  const t = text.trim().toLowerCase();
  if (t === 'auto' || t === 'all') return t;
  const percent = t.endsWith('%');
  const v = Number(percent ? t.slice(0, -1) : t);
  if (percent && v > 0 && v <= 100) return v === 100 ? 'all' : { fraction: v / 100 };
  if (!percent && Number.isFinite(v) && v > 0 && v < 1) return { fraction: v };
  if (!percent && Number.isSafeInteger(v) && v >= 1) return { rows: v };
  throw new UsageError(`--sample must be auto, all, a number of rows (>= 1) or a fraction such as 0.1 or 10% (got '${text}')`);
}

/** Rows the loop trains on for n rows and m anchors: at least m (each anchor needs a point), at most n. */
export function sampleSize(spec: SampleSpec, n: number, m: number): number {
  const want =
    spec === 'all' ? n
    : spec === 'auto' ? SAMPLE_PER_ANCHOR * m
    : 'rows' in spec ? spec.rows
    : Math.round(spec.fraction * n);
  return Math.min(n, Math.max(m, want));
}
