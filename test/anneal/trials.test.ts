// The cold phase's swap trials (src/anneal/trials.ts): sizes, judging, exclusions, the end.
import { describe, expect, it } from 'vitest';
import { SwapTrials } from '../../dist/anneal/trials.js';
import { DEFAULT_CONFIG } from '../../dist/anneal/config.js';

/** m anchors in a row: anchor j has count j + 1, sse grows with j, its nearest is j − 1 (j = 0: 1). */
function state(m: number) {
  const stats = {
    count: Float64Array.from({ length: m }, (_, j) => j + 1),
    sse: Float64Array.from({ length: m }, (_, j) => (j + 1) ** 2),
    far: Int32Array.from({ length: m }, (_, j) => j),
    farDist: new Float64Array(m).fill(1),
  };
  const nn = { dist: new Float64Array(m).fill(1), idx: Int32Array.from({ length: m }, (_, j) => (j === 0 ? 1 : j - 1)) };
  return { stats, nn, anchors: new Float32Array(m), energy: 10 };
}

describe('swap trials', () => {
  const m = 40;
  const cfg = { ...DEFAULT_CONFIG, m, swapShare: 0.1, swapRejects: 2 }; // first trial: 4 swaps

  it('halves the trial on rejection, doubles it (up to the first size) on acceptance', () => {
    const t = new SwapTrials(m, cfg);
    const s = state(m);
    expect(t.plan(s, s.nn)).toHaveLength(4);
    expect(t.judge(10)).toMatchObject({ energy: 10, anchors: s.anchors }); // not lower: rejected, snapshot back
    expect(t.open).toBeUndefined();
    expect(t.plan(s, s.nn)).toHaveLength(2);
    expect(t.judge(9.5)).toBeUndefined(); // accepted
    expect(t.plan({ ...s, energy: 9.5 }, s.nn)).toHaveLength(4);
  });

  it('excludes a failed single swap until an acceptance, and ends after swapRejects of them', () => {
    const t = new SwapTrials(m, { ...cfg, swapShare: 0 }); // single swaps from the start
    const s = state(m);
    const first = t.plan(s, s.nn);
    expect(first).toHaveLength(1);
    t.judge(11);
    expect(t.exhausted).toBe(false);
    const second = t.plan(s, s.nn);
    expect(second[0].from).not.toBe(first[0].from);
    expect(second[0].to).not.toBe(first[0].to);
    t.judge(10);
    expect(t.exhausted).toBe(true);
    t.plan(s, s.nn);
    t.judge(9); // accepted: the count of rejections and the exclusions start over
    expect(t.exhausted).toBe(false);
    expect(t.plan({ ...s, energy: 9 }, s.nn)).toEqual(first);
  });
});
