// How compress's summary line and info state a file's recall@10 (docs/quality.md "What each figure is").
import { grouped } from '../io/vlc/stats.js';

/**
 * The file's recall@10 as one figure over all n and its interval: "0.922 (95 % interval 0.909–0.935)"
 * when the sample's base is every vector; else the sample's figure, then the one over all n:
 * "0.444 among a sample of 20,000; ≈0.315 over all 50,000 (95 % interval 0.290–0.340)". Files of
 * an older vlc have no interval.
 */
export function recallFigures(f: {
  n: number; recall_at_10: number | null; recall_at_10_all: number | null; recall_at_10_all_low?: number | null; recall_at_10_all_high?: number | null; recall_base: number | null;
}): string {
  if (f.recall_at_10 === null) return 'n/a';
  const range = f.recall_at_10_all_low != null && f.recall_at_10_all_high != null ? ` (95 % interval ${f.recall_at_10_all_low.toFixed(3)}–${f.recall_at_10_all_high.toFixed(3)})` : '';
  if (f.recall_at_10_all === null || (f.recall_base ?? 0) >= f.n) return `${f.recall_at_10.toFixed(3)}${range}`;
  return `${f.recall_at_10.toFixed(3)} among a sample of ${grouped(f.recall_base ?? 0)}; ≈${f.recall_at_10_all.toFixed(3)} over all ${grouped(f.n)}${range}`;
}
