// How compress's summary line and info state a file's recall@10 (docs/quality.md "What each figure is").
import { grouped } from '../io/vlc/stats.js';

/**
 * The file's recall@10 as one figure over all n and its interval: "0.922 (95 % interval 0.909–0.935)"
 * when the sample's base is every vector; else the sample's figure, then the one over all n:
 * "0.444 among a sample of 65,536; ≈0.315 over all 200,000 (95 % interval 0.290–0.340)", or, when
 * that interval is wider than TOO_WIDE, that the sample cannot tell. Files of an older vlc have no interval.
 */
export function recallFigures(f: {
  n: number; recall_at_10: number | null; recall_at_10_all: number | null; recall_at_10_all_low?: number | null; recall_at_10_all_high?: number | null; recall_base: number | null;
}): string {
  if (f.recall_at_10 === null) return 'n/a';
  const range = f.recall_at_10_all_low != null && f.recall_at_10_all_high != null ? ` (95 % interval ${f.recall_at_10_all_low.toFixed(3)}–${f.recall_at_10_all_high.toFixed(3)})` : '';
  if (f.recall_at_10_all === null || (f.recall_base ?? 0) >= f.n) return `${f.recall_at_10.toFixed(3)}${range}`;
  const sample = `${f.recall_at_10.toFixed(3)} among a sample of ${grouped(f.recall_base ?? 0)}`;
  // An interval this wide says the sample cannot tell: no point figure for it (50M vectors from a
  // sample of 20,000 once printed "≈1.000 over all" beside an interval of 0.000–1.000; eval: 0.973).
  if (f.recall_at_10_all_low != null && f.recall_at_10_all_high != null && f.recall_at_10_all_high - f.recall_at_10_all_low > TOO_WIDE)
    return `${sample}; over all ${grouped(f.n)} the sample cannot tell${range}: vlc eval measures it`;
  return `${sample}; ≈${f.recall_at_10_all.toFixed(3)} over all ${grouped(f.n)}${range}`;
}

/** An interval over all n wider than this gets no point figure. */
const TOO_WIDE = 0.5;
