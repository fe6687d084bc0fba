// quality/search.ts: how --quality finds the smallest codec that meets the goal without measuring
// every candidate (bisection by size, refinement with a codec sized to any budget, pq measured only
// when its predicted error can beat what failed), and pq's prediction (codec-registry/pq.ts).
import { describe, expect, it } from 'vitest';
import { MAX_ERROR_PROBES, RESOLUTION, searchQuality } from '../../dist/quality/search.js';
import { gaussianBoundMse, waterFill } from '../../dist/codec-registry/pq.js';
import { goalOf } from '../../dist/api/compress-codec.js';
import { rng } from '../rng.js';

type Plan = { mode: string; codeBytes?: number; subspaces?: number; bits?: number };

/** A fake data set: each plan's file is 10 bytes plus its code bytes; recall (less its margin) is size / 100, error falls with size. */
function fake(opts: { pqRecall?: number; pqPredicted?: number } = {}) {
  const codeBytes = (c: Plan) => (c.mode === 'none' ? 0 : c.mode === 'int4' ? 32 : c.mode === 'int8' ? 64 : c.mode === 'pq' ? c.subspaces! : c.codeBytes!);
  const size = (c: Plan) => 10 + codeBytes(c);
  const measured: Plan[] = [];
  const hooks = {
    size,
    measure: async (c: Plan) => {
      measured.push(c);
      const s = size(c);
      return { recall: c.mode === 'pq' ? opts.pqRecall ?? 0 : s / 100, mse: 1000 / s };
    },
    predictMse: (c: Plan) => (c.mode === 'pq' ? opts.pqPredicted : undefined),
    within: (budget: number) => (budget >= 11 ? [{ mode: 'bits', codeBytes: Math.floor(budget - 10) }] : []),
  };
  const bits = [8, 16, 24, 40, 48, 56].map((R) => ({ mode: 'bits', codeBytes: R }));
  const options: Plan[] = [{ mode: 'none' }, ...bits, { mode: 'int4' }, { mode: 'int8' }, { mode: 'pq', subspaces: 8, bits: 8 }, { mode: 'pq', subspaces: 16, bits: 8 }];
  return { hooks, options, measured, size };
}

describe('searchQuality', () => {
  it('brackets the goal by bisection over the cheap codecs, then refines to within RESOLUTION of the smallest size that meets it', async () => {
    const f = fake({ pqPredicted: 1e9 });
    const r = await searchQuality(0.455, f.options, f.hooks); // sizes from 45.5 meet
    const size = f.size(r.chosen!);
    expect(size / 100).toBeGreaterThanOrEqual(0.455);
    expect(size).toBeLessThanOrEqual(45.5 * (1 + RESOLUTION) + 1);
    expect(f.measured.length).toBeLessThan(9); // not every candidate
    expect(f.measured.some((c) => c.mode === 'pq')).toBe(false);
  });

  it('measures a codec that trains first when its codec predicts nothing', async () => {
    const f = fake();
    await searchQuality(0.455, f.options, f.hooks);
    expect(f.measured.filter((c) => c.mode === 'pq')).toHaveLength(2);
  });

  it('measures a codec that trains first only when its predicted error beats every failing codec measured, and keeps it when it meets', async () => {
    // pq 16x8 (size 26) predicted to leave less error than anything measured: measured, and chosen when it meets
    const win = fake({ pqPredicted: 1, pqRecall: 0.5 });
    const r = await searchQuality(0.455, win.options, win.hooks);
    expect(r.chosen).toEqual({ mode: 'pq', subspaces: 8, bits: 8 });
    expect(r.skipped).toEqual([]);
    // predicted to leave more error than a codec that already failed: left out, with the reason
    const lose = fake({ pqPredicted: 1000 / 40, pqRecall: 0.5 }); // as much error as size 40, which fails 0.455
    const l = await searchQuality(0.455, lose.options, lose.hooks);
    expect(l.chosen!.mode).toBe('bits');
    expect(lose.measured.some((c) => c.mode === 'pq')).toBe(false);
    expect(l.skipped.map((s) => s.codec)).toEqual([{ mode: 'pq', subspaces: 8, bits: 8 }, { mode: 'pq', subspaces: 16, bits: 8 }]);
    expect(lose.size(l.skipped[0].beatenBy)).toBeLessThan(45.5);
  });

  it('never measures a codec that trains first when a smaller file already meets the goal', async () => {
    const f = fake({ pqPredicted: 0, pqRecall: 1 });
    const r = await searchQuality(0.15, f.options, f.hooks); // size 15 meets: below both pq sizes
    expect(f.size(r.chosen!)).toBeLessThan(18);
    expect(f.measured.some((c) => c.mode === 'pq')).toBe(false);
    expect(r.skipped).toEqual([]);
  });

  it('returns no choice when nothing meets the goal (the caller keeps the best measured)', async () => {
    const f = fake({ pqPredicted: 1000, pqRecall: 0 });
    const r = await searchQuality(0.99, f.options, f.hooks);
    expect(r.chosen).toBeUndefined();
    expect(f.measured.at(-1)).toEqual({ mode: 'int8' });
  });
});

/**
 * fake() with an error-sized codec 'ec' beside it: an ec plan of size s leaves the error of a cheap
 * file `gain` times larger (mse = 1000 / (gain·s)); recall follows the error as for the cheap ones,
 * `bias` lower (recall is a function of error only roughly, across codecs).
 */
function withEc(gain: number, bias = 0) {
  const f = fake({ pqPredicted: 1e9 });
  const ecSize = (mse: number) => Math.round((1000 / (gain * mse)) * 1000) / 1000;
  const size = (c: Plan & { s?: number }) => (c.mode === 'ec' ? c.s! : f.size(c));
  const hooks = {
    ...f.hooks,
    size,
    measure: async (c: Plan & { s?: number }) => {
      if (c.mode !== 'ec') return f.hooks.measure(c);
      f.measured.push(c);
      return { recall: (gain * c.s!) / 100 - bias, mse: 1000 / (gain * c.s!) };
    },
    atError: (mse: number) => (ecSize(mse) > 1 ? [{ mode: 'ec', s: ecSize(mse) }] : []),
  };
  return { ...f, hooks, size };
}

describe('searchQuality with a codec sized by its error (step 2)', () => {
  it('plans it at the error where recall reaches the goal, and keeps it within RESOLUTION of its smallest size that meets', async () => {
    const f = withEc(1.5); // ec meets 0.455 from size 45.5 / 1.5 = 30.33 on
    const r = await searchQuality(0.455, f.options, f.hooks);
    expect(r.chosen!.mode).toBe('ec');
    const s = f.size(r.chosen!);
    expect(s * 1.5 / 100).toBeGreaterThanOrEqual(0.455);
    expect(s).toBeLessThanOrEqual(30.34 * (1 + RESOLUTION) + 0.01);
    const ecs = f.measured.filter((c) => c.mode === 'ec');
    expect(ecs.length).toBeGreaterThan(0);
    expect(ecs.length).toBeLessThanOrEqual(MAX_ERROR_PROBES);
    // It met below the largest failing cheap size: bits is not refined between them.
    expect(f.measured.filter((c) => c.mode === 'bits').length).toBeLessThanOrEqual(3);
  });

  it('narrows on its own measurements when its recall at an error is lower than the cheap codecs\'', async () => {
    const f = withEc(1.5, 0.05); // meets from (0.455 + 0.05) · 100 / 1.5 = 33.67
    const r = await searchQuality(0.455, f.options, f.hooks);
    expect(r.chosen!.mode).toBe('ec');
    expect(f.size(r.chosen!)).toBeGreaterThanOrEqual(33.66);
    expect(f.size(r.chosen!)).toBeLessThanOrEqual(33.67 * (1 + RESOLUTION) + 0.01);
  });

  it('measures none of its plans when the plan at the goal\'s error is no smaller than what already meets', async () => {
    const f = withEc(0.9); // larger than bits at every error
    const r = await searchQuality(0.455, f.options, f.hooks);
    expect(r.chosen!.mode).toBe('bits');
    expect(f.measured.some((c) => c.mode === 'ec')).toBe(false);
  });

  it('keeps narrowing while every plan of its own meets, its recall saturated far above the other codecs\' at the same error', async () => {
    // ec's recall is flat (0.46 and up) from size 15 on, 0.3 below: its first plan, at the cheap codecs' crossing error, meets.
    const f = withEc(1.5);
    const ecRecall = (s: number) => (s >= 15 ? 0.46 + (s - 15) * 1e-4 : 0.3);
    const hooks = {
      ...f.hooks,
      measure: async (c: Plan & { s?: number }) => (c.mode === 'ec' ? (f.measured.push(c), { recall: ecRecall(c.s!), mse: 1000 / (1.5 * c.s!) }) : f.hooks.measure(c)),
    };
    const r = await searchQuality(0.455, f.options, hooks);
    expect(r.chosen!.mode).toBe('ec');
    const ecs = f.measured.filter((c) => c.mode === 'ec');
    expect(ecs.length).toBeGreaterThan(2);
    expect(f.size(r.chosen!)).toBeGreaterThanOrEqual(15);
    expect(f.size(r.chosen!)).toBeLessThan(0.75 * f.size(ecs[0]));
  });

  it('can meet a goal no cheap codec meets', async () => {
    const f = withEc(2);
    const r = await searchQuality(0.9, f.options, f.hooks); // cheap codecs reach 0.74 at most (int8); ec from 45
    expect(r.chosen!.mode).toBe('ec');
    expect(f.size(r.chosen!) * 2 / 100).toBeGreaterThanOrEqual(0.9);
  });
});

describe('the default goal', () => {
  it('is --quality 0.9 itself: the same goal, so the same candidates and the same work', () => {
    expect(goalOf({})).toEqual(goalOf({ quality: 0.9 }));
    expect(goalOf({ quality: 0.8 })).toEqual({ kind: 'quality', recall: 0.8 });
  });
});

describe("pq's predicted error", () => {
  it('water-fills: one variance at one bit keeps a quarter of it; a weak dimension gets no bits', () => {
    expect(waterFill(Float64Array.of(1), 1)).toBeCloseTo(0.25, 9);
    expect(waterFill(Float64Array.of(4, 1), 1)).toBeCloseTo(2, 6); // θ = 1: the second dimension is left as it is
    expect(waterFill(Float64Array.of(0, 0), 8)).toBe(0);
  });

  it("gives Shannon's bound on Gaussian residuals: d·σ²·2^(-2·bits/g) for subspaces of g dimensions", () => {
    const n = 4000, d = 16, sigma = 0.3;
    const r = rng(11);
    const x = new Float32Array(n * d);
    for (let i = 0; i < x.length; i++) x[i] = sigma * Math.sqrt(-2 * Math.log(1 - r())) * Math.cos(2 * Math.PI * r());
    const input = { x, n, d, anchors: new Float32Array(d), assign: new Uint32Array(n) };
    for (const M of [2, 4]) {
      const g = d / M;
      expect(gaussianBoundMse(input, M, 8) / (d * sigma ** 2 * 2 ** ((-2 * 8) / g))).toBeGreaterThan(0.85);
      expect(gaussianBoundMse(input, M, 8) / (d * sigma ** 2 * 2 ** ((-2 * 8) / g))).toBeLessThan(1.15);
    }
  });
});
