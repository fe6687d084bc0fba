// src/quality/: the figures compress and eval report (reconstruction error, recall of exact search
// over decoded vectors), the sampling behind them, and the choice of codec behind --quality/--bytes.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { cpuKnn } from '../../dist/backend/cpu/index.js';
import { decodedPerQuery, decodedPerQueryPrefixes, decodedRecall, trueNeighbours, trueNeighboursPrefixes } from '../../dist/quality/recall.js';
import { blockKnn } from '../../dist/backend/block-knn.js';
import { reconstructionQuality } from '../../dist/quality/reconstruction.js';
import { choose, planChoice } from '../../dist/quality/choose.js';
import { RESOLUTION } from '../../dist/quality/search.js';
import { rowsUpTo, sampleIndices } from '../../dist/quality/sample.js';
import { recallSample, sampledRecall } from '../../dist/quality/measure.js';
import { decoderOf, encoderOn, sizer } from '../../dist/api/compress-codec.js';
import { partDecoderOf } from '../../dist/quality/choose.js';
import { encodeScalar } from '../../dist/codecs/scalar.js';
import { createCpuBackend } from '../../dist/backend/cpu/index.js';
import { DEFAULT_CONFIG } from '../../dist/anneal/config.js';
import { clustered } from '../cli/helpers.js';
import { rng } from '../rng.js';
import { datasetFromArray, f32ToF16, setMaxViewBytesForTests } from '../../dist/vectors/dataset.js';

const shared = (x: Float32Array) => {
  const s = new Float32Array(new SharedArrayBuffer(x.byteLength));
  s.set(x);
  return s;
};

describe('samples', () => {
  it('draws distinct indices in range, the same for the same seed; every row up to the limit', () => {
    const s = sampleIndices(1000, 300, 5);
    expect(new Set(s).size).toBe(300);
    expect(s.every((i) => i >= 0 && i < 1000)).toBe(true);
    expect(sampleIndices(1000, 300, 5)).toEqual(s);
    expect(sampleIndices(1000, 300, 6)).not.toEqual(s);
    expect(sampleIndices(10, 20, 1).sort((a, b) => a - b)).toEqual([0, 1, 2, 3, 4, 5, 6, 7, 8, 9]);
    expect(rowsUpTo(100, 100, 1)).toBeNull();
    expect(rowsUpTo(101, 100, 1)).toHaveLength(100);
  });
});

describe('reconstruction figures', () => {
  it('match a direct computation, over every row or a sample', () => {
    const n = 50, d = 5;
    const x = clustered(n, d, 3);
    const noisy = x.map((v, i) => v + 0.1 * Math.sin(i));
    const decode = (i: number, out: Float32Array) => out.set(noisy.subarray(i * d, (i + 1) * d));
    let se = 0, sx = 0, cos = 0;
    for (let i = 0; i < n; i++) {
      let xy = 0, xx = 0, yy = 0;
      for (let k = 0; k < d; k++) {
        const a = x[i * d + k], b = noisy[i * d + k];
        se += (a - b) ** 2; sx += a * a; xy += a * b; xx += a * a; yy += b * b;
      }
      cos += xy / Math.sqrt(xx * yy);
    }
    const q = reconstructionQuality(x, n, d, decode);
    expect(q.measured).toBe(n);
    expect(q.mse).toBeCloseTo(se / n, 6);
    expect(q.relative_error).toBeCloseTo(Math.sqrt(se / sx), 6);
    expect(q.mean_cosine).toBeCloseTo(cos / n, 6);
    expect(reconstructionQuality(x, n, d, decode, [3, 7]).measured).toBe(2);
  });

  it('over every row a chunk at a time (decodeRange): the per-row figures to the bit, f32 and f16 originals, in views of a few rows, or read in blocks', () => {
    const n = 160_001, d = 7; // two chunks of decoded rows (2^20 floats each), many views, sizes not a multiple of anything
    const x = clustered(n, d, 5);
    const noisy = x.map((v, i) => v + 0.05 * Math.sin(i * 0.37));
    const decode = (i: number, out: Float32Array) => out.set(noisy.subarray(i * d, (i + 1) * d));
    const decodeRange = (r0: number, r1: number, out: Float32Array) => out.set(noisy.subarray(r0 * d, r1 * d));
    const half = datasetFromArray(Uint16Array.from(x, (v) => f32ToF16(v)), n, d);
    const reader = {
      n, d, maxAbs: () => Math.max(...x.map(Math.abs)),
      read: (r0: number, r1: number, out: Float32Array) => out.set(x.subarray(r0 * d, r1 * d)),
      gather: (list: readonly number[], out: Float32Array) => list.forEach((i, j) => out.set(x.subarray(i * d, (i + 1) * d), j * d)),
    };
    for (const [what, xs] of [['f32', x], ['f16', half], ['a RowsReader', reader]] as const) {
      setMaxViewBytesForTests(10_007 * d * 4); // views of at most 10,007 f32 rows (20,014 of f16): each chunk spans several
      try {
        const perRow = reconstructionQuality(xs, n, d, decode);
        const chunked = reconstructionQuality(xs, n, d, decode, null, undefined, decodeRange);
        expect(chunked, what).toEqual(perRow);
        expect(chunked.measured).toBe(n);
      } finally {
        setMaxViewBytesForTests();
      }
    }
  });
});

describe('recall of exact search over decoded vectors', () => {
  const n = 400, d = 8;
  const x = shared(clustered(n, d, 9, 20));

  it('merges base blocks exactly as one call over the whole base', async () => {
    const q = x.slice(0, 30 * d);
    const whole = await cpuKnn.knn(x, n, q, 30, d, 12);
    const blocks = await blockKnn(q, 30, d, 12, n, (r0: number, r1: number) => x.subarray(r0 * d, r1 * d), cpuKnn, 37 * d);
    expect(Array.from(blocks.ids)).toEqual(Array.from(whole.ids));
    expect(Array.from(blocks.dists)).toEqual(Array.from(whole.dists));
  });

  it('searches a base and its half and quarter at once, as each alone (ties, a sampled base or every row, another scale)', async () => {
    const r = rng(12);
    // Decoded rows with exact duplicates (ties) and a range that gives the half another power-of-two scale.
    // The last rows far out: the whole base's largest |x| (and so its scale) is not its half's.
    const far = (e: number) => (e >= (n - 5) * d ? 16 : 1);
    const dec = Float32Array.from(x, (v, e) => (Math.floor(e / d) % 9 === 4 ? x[e - d] : v + (r() - 0.5) * 0.4) * far(e));
    const decode = (i: number, out: Float32Array) => out.set(dec.subarray(i * d, (i + 1) * d));
    const xs = shared(Float32Array.from(x, (v, e) => v * far(e)));
    for (const base of [null, sampleIndices(n, 301, 7)]) {
      const nb = base ? base.length : n;
      const plan = { base, queries: Array.from({ length: 37 }, (_, q) => q * 2) };
      const halfPlan = { base: base ? base.slice(0, nb >> 1) : [...Array(nb >> 1).keys()], queries: plan.queries };
      const quarterPlan = { base: halfPlan.base.slice(0, nb >> 2), queries: plan.queries };
      const [truth, halfTruth, quarterTruth] = await Promise.all([plan, halfPlan, quarterPlan].map((p) => trueNeighbours(xs, n, d, p, cpuKnn)));
      const got = await decodedPerQueryPrefixes(xs, n, d, decode, plan, truth, [{ rows: nb >> 1, truth: halfTruth }, { rows: nb >> 2, truth: quarterTruth }], cpuKnn);
      const want = [
        await decodedPerQuery(xs, n, d, decode, plan, truth, cpuKnn),
        await decodedPerQuery(xs, n, d, decode, halfPlan, halfTruth, cpuKnn),
        await decodedPerQuery(xs, n, d, decode, quarterPlan, quarterTruth, cpuKnn),
      ];
      expect(got, `base ${base ? 'sampled' : 'every row'}`).toEqual(want);
      // The true neighbours the same way: one search, each prefix's ids as its own search's.
      const truths = await trueNeighboursPrefixes(xs, n, d, plan, [nb >> 1, nb >> 2], cpuKnn);
      expect(truths!.map((t) => Array.from(t.ids))).toEqual([truth, halfTruth, quarterTruth].map((t) => Array.from(t.ids)));
      const sample = await recallSample(xs, n, d, plan, 10 * n, cpuKnn);
      expect([sample.truth, sample.half!.truth, sample.quarter!.truth].map((t) => Array.from(t.ids))).toEqual([truth, halfTruth, quarterTruth].map((t) => Array.from(t.ids)));
      expect(want[1].perQuery).not.toEqual(want[0].perQuery); // the prefixes measure something else
      // A query past a prefix: not searched together.
      expect(await decodedPerQueryPrefixes(xs, n, d, decode, { base, queries: [...plan.queries, nb - 1] }, truth, [{ rows: nb >> 1, truth: halfTruth }], cpuKnn)).toBeUndefined();
    }
  });

  it('is 1 for lossless decoding, lower for noisy decoding, and measures each query without itself', async () => {
    const plan = { base: null, queries: sampleIndices(n, 60, 2) };
    const truth = await trueNeighbours(x, n, d, plan, cpuKnn);
    const exact = await decodedRecall(x, n, d, (i, out) => out.set(x.subarray(i * d, (i + 1) * d)), plan, truth, cpuKnn);
    expect(exact).toMatchObject({ recall_at_1: 1, recall_at_10: 1, recall_at_10_se: 0, k: 10, queries: 60, base: n });
    const r = rng(4);
    const noise = Float32Array.from(x, (v) => v + (r() - 0.5) * 0.6);
    const noisy = await decodedRecall(x, n, d, (i, out) => out.set(noise.subarray(i * d, (i + 1) * d)), plan, truth, cpuKnn);
    expect(noisy.recall_at_10!).toBeLessThan(1);
    expect(noisy.recall_at_10!).toBeGreaterThan(0.2);
    expect(noisy.recall_at_10_se!).toBeGreaterThan(0);
  });

  it('on a base sample: positions index the sample, and k shrinks with a tiny base', async () => {
    const base = sampleIndices(n, 100, 3);
    const plan = { base, queries: [0, 1, 2] };
    const truth = await trueNeighbours(x, n, d, plan, cpuKnn);
    const got = await decodedRecall(x, n, d, (i, out) => out.set(x.subarray(i * d, (i + 1) * d)), plan, truth, cpuKnn);
    expect(got).toMatchObject({ recall_at_10: 1, base: 100, queries: 3 });
    const tiny = { base: [5, 9, 11], queries: [0] };
    const t2 = await trueNeighbours(x, n, d, tiny, cpuKnn);
    expect((await decodedRecall(x, n, d, () => {}, tiny, t2, cpuKnn)).k).toBe(2);
  });
});

describe('recall over a base sample, extrapolated to every vector', () => {
  const n = 2400, d = 8;
  const x = shared(clustered(n, d, 13, 40));
  /** Noisy decoded vectors (seeded), their row decoder, and a plan of 40 queries over a seeded base of 600. */
  const noisy = (seed: number, baseSeed: number) => {
    const r = rng(seed);
    const noise = Float32Array.from(x, (v) => v + (r() - 0.5) * 0.5);
    const decode = (i: number, out: Float32Array) => out.set(noise.subarray(i * d, (i + 1) * d));
    return { noise, decode, plan: { base: sampleIndices(n, 600, baseSeed), queries: [...Array(40).keys()] } };
  };

  it('predicts each query from the sample and its half: r(n) = r(B) - log2(n/B) (r(B/2) - r(B))', async () => {
    const { decode, plan } = noisy(6, 1);
    const s = await recallSample(x, n, d, plan, n, cpuKnn);
    expect(s.half!.plan.base).toEqual(plan.base.slice(0, 300));
    const got = await sampledRecall(x, n, d, decode, s, cpuKnn);
    const whole = await decodedRecall(x, n, d, decode, plan, s.truth, cpuKnn);
    const half = await decodedRecall(x, n, d, decode, s.half!.plan, s.half!.truth, cpuKnn);
    expect(got.recall_at_10).toBe(whole.recall_at_10);
    // the mean of per-query predictions is the prediction of the means (two doublings from 600 to 2400)
    expect(got.recall_at_10_all).toBeCloseTo(Math.min(1, whole.recall_at_10! - 2 * (half.recall_at_10! - whole.recall_at_10!)), 12);
    // lossless decoding stays at 1; a base of every vector is not extrapolated
    const exact = await sampledRecall(x, n, d, (i: number, out: Float32Array) => out.set(x.subarray(i * d, (i + 1) * d)), s, cpuKnn);
    expect(exact.recall_at_10_all).toBe(1);
    const all = await recallSample(x, n, d, { base: null, queries: [1, 2, 3] }, n, cpuKnn);
    expect(all.half).toBeNull();
  });

  it('gives the same figures with the base decoded a range at a time (as the chooser decodes its part), a wrong range not', async () => {
    const { noise, decode, plan } = noisy(8, 2);
    const s = await recallSample(x, n, d, plan, 4 * n, cpuKnn);
    // Base positions r0..r1: the rows plan.base[r0..r1) of x, as choose.ts's part holds them.
    const range = (shift: number) => (r0: number, r1: number, out: Float32Array) => {
      for (let p = r0; p < r1; p++) out.set(noise.subarray(plan.base[(p + shift) % 600] * d, (plan.base[(p + shift) % 600] + 1) * d), (p - r0) * d);
    };
    const one = await sampledRecall(x, n, d, decode, s, cpuKnn, true);
    expect(await sampledRecall(x, n, d, decode, s, cpuKnn, true, range(0))).toEqual(one);
    expect(await sampledRecall(x, n, d, decode, s, cpuKnn, true, range(1))).not.toEqual(one);
  });
});

describe('choosing the codec', () => {
  const n = 3000, d = 16;
  const x = shared(clustered(n, d, 5, 30));
  const m = 32;
  const anchors = new Float32Array(m * d);
  for (let j = 0; j < m; j++) anchors.set(x.subarray(j * 97 * d, (j * 97 + 1) * d), j * d);
  const assignments = new Uint32Array(n);
  for (let i = 0; i < n; i++) {
    let best = Infinity;
    for (let j = 0; j < m; j++) {
      let s = 0;
      for (let k = 0; k < d; k++) s += (x[i * d + k] - anchors[j * d + k]) ** 2;
      if (s < best) [best, assignments[i]] = [s, j];
    }
  }
  const trained = { x, n, d, anchors, assignments };
  const ds = { n, d, dtype: 'f32' as const, data: x, format: 'test', dropped: 0 };
  const size = sizer({ ds, anchorDtype: 'f16', cfg: { ...DEFAULT_CONFIG, m }, seed: 1, device: 'cpu' });
  const perVector = size.perVector;
  const NONE = { mode: 'none' } as const;
  const INT4 = { mode: 'int4' } as const;
  const INT8 = { mode: 'int8' } as const;
  const scalar = async (c: { mode: 'int8' | 'int4' }, t: typeof trained) => partDecoderOf(t, (await encodeScalar(c.mode, { x: t.x, n: t.n, d: t.d, anchors: t.anchors, assign: t.assignments })).residuals);
  let backend: ReturnType<typeof createCpuBackend>;
  beforeAll(() => void (backend = createCpuBackend({})));
  afterAll(async () => backend.close());

  it('sizes files as the encoder writes them (upper bound: within a manifest of slack)', () => {
    // ids 1 byte, anchors m·d·2 over n, int4: d/2 + 4d/n of scales; header, manifest (its longest numbers) and framing under 2 KiB / n.
    for (const [c, body] of [[NONE, 1 + (m * d * 2) / n], [INT4, 1 + (m * d * 2 + 4 * d) / n + d / 2], [INT8, 1 + (m * d * 2 + 4 * d) / n + d]] as const) {
      expect(perVector(c, m)).toBeGreaterThan(body);
      expect(perVector(c, m)).toBeLessThan(body + 2048 / n);
    }
  });

  it('--quality: the same candidates whatever R (none, bits at eighths of d, int4, int8, pq at d/8 and d/4), by size', () => {
    const plan = planChoice({ kind: 'quality', recall: 0.5 }, n, d, m, false, perVector);
    expect(planChoice({ kind: 'quality', recall: 0.99 }, n, d, m, false, perVector)).toEqual(plan);
    expect(plan.options.filter((c) => c.mode === 'bits').map((c) => (c as { codeBytes: number }).codeBytes)).toEqual([2, 4, 6, 10, 12, 14]); // d/2 and d: int4's and int8's
    expect(plan.options.filter((c) => c.mode === 'pq')).toEqual([{ mode: 'pq', subspaces: 2, bits: 8 }, { mode: 'pq', subspaces: 4, bits: 8 }]);
    expect(plan.options).toEqual(expect.arrayContaining([NONE, INT4, INT8]));
    const sizes = plan.options.map((c) => perVector(c, m));
    expect([...sizes].sort((a, b) => a - b)).toEqual(sizes);
  });

  it('--quality: the smallest codec measured whose predicted recall reaches the target, found without measuring every candidate; none reaching it: the best, not met', async () => {
    const goal = { kind: 'quality', recall: 0.8 } as const;
    const plan = planChoice(goal, n, d, m, false, perVector);
    const size = (c: { mode: string }) => perVector(c, m);
    const low = await choose(goal, plan, trained, encoderOn(backend, 1, {}), cpuKnn, size);
    expect(low.met).toBe(true);
    expect(low.measured.length).toBeLessThan(plan.options.length);
    expect(low.tried.some((c) => c.mode === 'pq')).toBe(false); // pq's predicted error could not beat a codec that failed
    // the choice is made on the point figure over all n (its standard error is reported beside it, not subtracted)
    const lower = (r: { recall_at_10_all: number | null }) => r.recall_at_10_all!;
    const chosen = low.measured[low.tried.indexOf(low.codec)];
    // n <= 65,536: the sample is every vector, so nothing is extrapolated
    expect(chosen.recall_at_10_all).toBe(chosen.recall_at_10);
    expect(lower(chosen)).toBeGreaterThanOrEqual(0.8);
    // every smaller codec measured missed the goal, and the largest of them is within the refinement's resolution (or one code byte)
    const smaller = low.measured.filter((r) => r.bytes_per_vector < chosen.bytes_per_vector);
    expect(smaller.length).toBeGreaterThan(0);
    expect(smaller.every((r) => lower(r) < 0.8)).toBe(true);
    // (unless a codec that missed is larger than the choice: ec met below the bracket of the codecs sized by bytes, which
    // step 3 then has nothing to refine; ec itself was narrowed by error, search.test.ts)
    const gap = chosen.bytes_per_vector - Math.max(...smaller.map((r) => r.bytes_per_vector));
    const below = low.measured.some((r) => lower(r) < 0.8 && r.bytes_per_vector > chosen.bytes_per_vector);
    if (!below) expect(gap).toBeLessThanOrEqual(Math.max(RESOLUTION * chosen.bytes_per_vector, 1 + 1e-9));
    else expect(chosen.residual).toBe('ec');
    const high = await choose({ ...goal, recall: 1 }, plan, trained, encoderOn(backend, 1, {}), cpuKnn, size);
    // Nothing meets recall 1: the codec kept is the one measured best (int8, or ec at a finer step).
    const kept = high.measured[high.tried.indexOf(high.codec)];
    expect(kept.recall_at_10_all).toBe(Math.max(...high.measured.map((r) => r.recall_at_10_all!)));
    expect(high.tried.some((c) => c.mode === 'int8')).toBe(true);
    expect(high.met).toBe(lower(kept) >= 1);
    expect(high.tried.some((c) => c.mode === 'pq')).toBe(false);
  }, 120_000);

  it('pq is trained on the backend when measured (its codebooks), and reports its parameters', async () => {
    const plan = planChoice({ kind: 'quality', recall: 0.99 }, n, d, m, false, perVector);
    const c = await choose({ kind: 'quality', recall: 0.99 }, { m, options: [plan.options.find((o) => o.mode === 'pq')!] }, trained, encoderOn(backend, 1, {}), cpuKnn, (o) => perVector(o, m));
    expect(c.measured[0]).toMatchObject({ residual: 'pq', pq_subspaces: 2, pq_bits: 8 });
    expect(c.measured[0].recall_at_10!).toBeGreaterThan(0);
  }, 120_000);

  it('--bytes: the best measured recall among the codecs that fit (pq below int4 only, the most subspaces; bits: the most code bytes that fit); only ids: the most anchors that fit', async () => {
    const budget = perVector(INT4, m) + 1; // int4 fits, int8 does not
    const plan = planChoice({ kind: 'bytes', perVector: budget }, n, d, m, false, perVector);
    expect(plan.options.map((c) => c.mode).sort()).toEqual(['bits', 'ec', 'int4', 'none']); // no pq where int4 fits
    const below = planChoice({ kind: 'bytes', perVector: perVector(INT4, m) - 1 }, n, d, m, false, perVector);
    expect(below.options.map((c) => c.mode).sort()).toEqual(['bits', 'ec', 'none', 'pq']);
    // ec: the whole budget, to the byte (its payload a byte larger would not fit).
    const ec = plan.options.find((c) => c.mode === 'ec') as { mode: 'ec'; payload: number; n: number };
    expect(perVector(ec, m)).toBeLessThanOrEqual(budget);
    expect(perVector({ ...ec, payload: ec.payload + 8 }, m)).toBeGreaterThan(budget);
    expect(below.options.find((c) => c.mode === 'pq')).toEqual({ mode: 'pq', subspaces: 4, bits: 8 }); // capped at d/4
    // bits: the most code bytes that fit — int4's d/2 and a byte more (int4 keeps d f32 scales, bits d bytes of counts beside them).
    const bits = plan.options.find((c) => c.mode === 'bits') as { mode: 'bits'; codeBytes: number };
    expect(perVector(bits, m)).toBeLessThanOrEqual(budget);
    expect(perVector({ mode: 'bits', codeBytes: bits.codeBytes + 1 }, m)).toBeGreaterThan(budget);
    const c = await choose({ kind: 'bytes', perVector: budget }, { m, options: [NONE, INT4] }, trained, scalar as never, cpuKnn, (o) => perVector(o, m));
    expect(c.codec).toEqual(INT4);
    const idsOnly = planChoice({ kind: 'bytes', perVector: 3 }, n, d, m, false, perVector);
    expect(idsOnly.options).toEqual([NONE]);
    expect(perVector(NONE, idsOnly.m)).toBeLessThanOrEqual(3);
    expect(perVector(NONE, idsOnly.m + 1)).toBeGreaterThan(3);
    expect(idsOnly.m).toBeGreaterThan(m);
    expect(() => planChoice({ kind: 'bytes', perVector: 1 }, n, d, m, false, perVector)).toThrow(/--bytes 1 is below the smallest file/);
    expect(() => planChoice({ kind: 'bytes', perVector: 1.5 }, n, d, m, true, perVector)).toThrow(/with --anchors 32/);
  });

  it('measures the decoder compress writes: the same reconstruction as the file', () => {
    const decode = decoderOf(trained);
    const out = new Float32Array(d);
    decode(7, out);
    expect(Array.from(out)).toEqual(Array.from(anchors.subarray(assignments[7] * d, (assignments[7] + 1) * d)));
  });
});
