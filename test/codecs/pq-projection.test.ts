// pq's projection (--pq-dims): the principal directions found (codec-train/pca.ts), their grouping into
// subspaces of balanced variance (codec-train/projection.ts), and what it buys: on residuals whose
// variance sits in few directions, the same code bytes give a smaller error; the same input and
// seed give the same bytes.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createCpuBackend } from '../../dist/backend/cpu/index.js';
import { leadingDirections } from '../../dist/codec-train/pca.js';
import { orthonormalize } from '../../dist/codecs/linear.js';
import { balancedOrder } from '../../dist/codec-train/projection.js';
import { encodePq, encodePqMeasured } from '../../dist/codec-train/pq.js';
import { residualMse } from '../../dist/codecs/index.js';
import { subspaceBounds } from '../../dist/codecs/pq.js';
import { rng } from '../rng.js';

/** A random orthonormal d × d basis (rows). */
function randomBasis(d: number, seed: number): Float64Array {
  const rand = rng(seed);
  const B = Float64Array.from({ length: d * d }, () => rand() - 0.5);
  orthonormalize(B, d, d);
  return B;
}

/** n rows Σ_e g_e σ_e b_e (g standard-ish normal): variance σ_e² along basis row b_e. */
function anisotropic(n: number, d: number, sigma: number[], B: Float64Array, seed: number): Float32Array {
  const rand = rng(seed);
  const gauss = () => {
    let s = 0;
    for (let i = 0; i < 12; i++) s += rand();
    return s - 6;
  };
  const x = new Float32Array(n * d);
  for (let i = 0; i < n; i++)
    for (let e = 0; e < d; e++) {
      const g = gauss() * sigma[e];
      for (let j = 0; j < d; j++) x[i * d + j] += g * B[e * d + j];
    }
  return x;
}

describe('principal directions', () => {
  it('finds the k largest-variance directions of an odd-sized anisotropic set, and their variances', () => {
    const d = 23, n = 3001, k = 5;
    const sigma = Array.from({ length: d }, (_, e) => (e < k ? 10 - e : 0.3));
    const B = randomBasis(d, 9);
    const x = anisotropic(n, d, sigma, B, 4);
    const { vectors, values } = leadingDirections(x, n, d, k, 1);
    for (let r = 0; r < k; r++) {
      // Direction r lies in the span of the k planted ones (what is left outside it is tiny) …
      let inside = 0;
      for (let e = 0; e < k; e++) {
        let c = 0;
        for (let j = 0; j < d; j++) c += vectors[r * d + j] * B[e * d + j];
        inside += c * c;
      }
      expect(inside).toBeGreaterThan(0.999);
      // … with about the planted variance, largest first.
      expect(values[r] / sigma[r] ** 2).toBeGreaterThan(0.85);
      expect(values[r] / sigma[r] ** 2).toBeLessThan(1.15);
      if (r > 0) expect(values[r]).toBeLessThanOrEqual(values[r - 1]);
    }
  });

  it('groups directions in rounds so that subspaces carry balanced variance, whatever the scale', () => {
    const bounds = subspaceBounds(5, 2); // sizes 3 and 2
    expect(balancedOrder(Float64Array.of(8, 4, 2, 1, 0.5), bounds)).toEqual([0, 3, 4, 1, 2]);
    expect(balancedOrder(Float64Array.of(8000, 4000, 2000, 1000, 500), bounds)).toEqual([0, 3, 4, 1, 2]);
    expect(balancedOrder(Float64Array.of(8e-6, 4e-6, 2e-6, 1e-6, 5e-7), bounds)).toEqual([0, 3, 4, 1, 2]);
    // Zero variances are grouped too (no −∞ products).
    expect(balancedOrder(Float64Array.of(3, 0, 0, 0), subspaceBounds(4, 2)).sort()).toEqual([0, 1, 2, 3]);
  });
});

describe('pq with a projection', () => {
  let backend: ReturnType<typeof createCpuBackend>;
  beforeAll(() => void (backend = createCpuBackend({})));
  afterAll(async () => backend.close());

  const d = 37, n = 1500, m = 3;
  const sigma = Array.from({ length: d }, (_, e) => 6 * 0.75 ** e + 0.02);
  const x = anisotropic(n, d, sigma, randomBasis(d, 21), 8);
  const anchors = new Float32Array(m * d);
  const assign = Uint32Array.from({ length: n }, (_, i) => i % m);
  const input = { x, n, d, anchors, assign };

  it('codes the same bytes with a smaller error where the variance sits in few directions, the same bytes for the same seed', async () => {
    const o = { subspaces: 4, bits: 4 as const, seed: 5, maxIters: 15 };
    const plain = await encodePq(input, backend, o);
    const projected = await encodePq(input, backend, { ...o, dims: 11 });
    expect(projected.dims).toBe(11);
    expect(projected.formatVersion).toBe(4);
    const e0 = residualMse(plain, input);
    const e1 = residualMse(projected, input);
    expect(e1).toBeLessThan(0.8 * e0);
    const again = await encodePq(input, backend, { ...o, dims: 11 });
    const bytes = (r: { payload(): Uint8Array | Uint8Array[] }) => Buffer.concat([r.payload()].flat());
    expect(bytes(again).equals(bytes(projected))).toBe(true);
  });

  it('trains its subspaces one at a time or several at once to the same bytes (the sample every vector, or a part)', async () => {
    const bytes = (r: { payload(): Uint8Array | Uint8Array[] }) => Buffer.concat([r.payload()].flat());
    for (const o of [{ subspaces: 7, bits: 8 as const, seed: 3, maxIters: 6 }, { subspaces: 5, bits: 4 as const, seed: 4, maxIters: 6, sample: 701 }]) {
      const one = bytes(await encodePq(input, backend, { ...o, atOnce: 1 }));
      for (const atOnce of [3, 7]) expect(bytes(await encodePq(input, backend, { ...o, atOnce })).equals(one)).toBe(true);
    }
  });

  it('reports the decoded file\'s error without decoding it (to f32 rounding), and the decoder\'s for plain pq', async () => {
    const o = { subspaces: 5, bits: 8 as const, seed: 2, maxIters: 10 };
    for (const dims of [0, 13, d]) {
      const { residuals, residualEnergy } = await encodePqMeasured(input, backend, { ...o, dims });
      const decoded = residualMse(residuals, input);
      if (dims === 0) expect(residualEnergy).toBe(decoded);
      else expect(Math.abs(residualEnergy - decoded) / decoded).toBeLessThan(1e-5);
    }
  });

  it('refuses more subspaces than projected dimensions, and more dimensions than d', async () => {
    await expect(encodePq(input, backend, { subspaces: 6, bits: 8, seed: 1, dims: 5 })).rejects.toThrow(/M = 6 subspaces, 5 dimensions allow 1..5/);
    await expect(encodePq(input, backend, { subspaces: 2, bits: 8, seed: 1, dims: 38 })).rejects.toThrow(/38 projected dimensions, d = 37/);
  });
});
