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

/**
 * On a GPU, `auto` trains on every row while one pass costs at most this many point·anchor·dimension
 * products: there a pass over 1M × 128 with m = 2048 (2^38) takes milliseconds, and training on the
 * 256-per-anchor sample ended 0.6 % above a PyTorch k-means++ + Lloyd loop's energy, on every row
 * 0.2 % below it (bench/results/2026-11-23-h100-run3.json, -final.json). The CPU keeps the sample.
 */
export const CUDA_ALL_ROWS_UP_TO = 2 ** 40;

/** What `auto` means on `device` for n × d rows and m anchors: 'all' on a GPU below CUDA_ALL_ROWS_UP_TO; other specs as given. */
export function resolveSample(spec: SampleSpec, device: 'cpu' | 'cuda', n: number, d: number, m: number): SampleSpec {
  if (spec !== 'auto') return spec;
  return device === 'cuda' && n * m * d <= CUDA_ALL_ROWS_UP_TO ? 'all' : 'auto';
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
