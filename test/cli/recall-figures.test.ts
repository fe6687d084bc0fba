// How the summary line and info state recall@10 (src/commands/recall-figures.ts): every vector in
// the base gives one figure; a sample base gives the sample's figure and the prediction over all n
// with its interval, or, when that interval is too wide to say anything, no point figure.
import { describe, expect, it } from 'vitest';
import { recallFigures } from '../../dist/commands/recall-figures.js';

describe('recall figures', () => {
  const base = { n: 50_000_000, recall_at_10: 0.963, recall_base: 20_000 };
  it('the base is every vector: one figure and its interval', () => {
    expect(recallFigures({ n: 900, recall_at_10: 0.9, recall_at_10_all: 0.9, recall_at_10_all_low: 0.88, recall_at_10_all_high: 0.92, recall_base: 900 })).toBe('0.900 (95 % interval 0.880–0.920)');
  });
  it('a sample base: the prediction over all n with its interval', () => {
    expect(recallFigures({ ...base, recall_at_10_all: 0.941, recall_at_10_all_low: 0.9, recall_at_10_all_high: 0.98 })).toBe(
      '0.963 among a sample of 20,000; ≈0.941 over all 50,000,000 (95 % interval 0.900–0.980)',
    );
  });
  it('an interval wider than one half: no point figure, and where to measure it', () => {
    expect(recallFigures({ ...base, recall_at_10_all: 1, recall_at_10_all_low: 0, recall_at_10_all_high: 1 })).toBe(
      '0.963 among a sample of 20,000; over all 50,000,000 the sample cannot tell (95 % interval 0.000–1.000): vlc eval measures it',
    );
  });
  it('a file of an older vlc (no interval): the prediction as before', () => {
    expect(recallFigures({ ...base, recall_at_10_all: 0.95 })).toBe('0.963 among a sample of 20,000; ≈0.950 over all 50,000,000');
  });
});
