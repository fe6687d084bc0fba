// The 'ec' encoder's passes on the encoder threads (src/codecs/ec/encode-blocks.ts): the section's
// bytes and the measured error are the same on 1, 2 and 3 threads, on odd sizes (n, d and the block
// rows multiples of nothing), on the axes and along principal directions (and either, planned side by
// side), for a step and a byte target, f32 and f16 rows; and a section coded on threads reads back
// to the rows the encoder holds.
// The projection on the directions (f64, four directions at a time) makes each sum as one alone does.
import { describe, expect, it } from 'vitest';
import { encodeEc, type EcTarget } from '../../dist/codecs/ec/encode.js';
import { ecSection } from '../../dist/codecs/ec/residuals.js';
import { projectInto } from '../../dist/codecs/linear.js';
import { asPayload } from '../../dist/io/vlc/payload.js';
import { datasetFromArray, f32ToF16 } from '../../dist/vectors/dataset.js';
import { rng } from '../rng.js';
import { decoded, joined, mixture } from './ec-helpers.js';

const corrupt = (what: string) => new Error(what);

/** A mixture whose residuals share a few directions too (so the principal directions pay), with rare outliers (escapes). */
function rowsOf(n: number, d: number, seed: number) {
  const input = mixture(n, d, 7, seed, 0.002);
  for (let i = 0; i < n; i++) {
    const z = Math.sin(i * 0.37 + seed);
    for (let k = 0; k < d; k++) input.x[i * d + k] += 0.2 * z * Math.cos(k * 0.9);
  }
  return input;
}

const cases: Array<{ name: string; rotate: boolean | 'auto'; target: (n: number) => EcTarget }> = [
  { name: 'axes, a step', rotate: false, target: () => ({ step: 0.003 }) },
  { name: 'axes, a byte target', rotate: false, target: (n) => ({ payloadBytes: n * 9 }) },
  { name: 'principal directions, a step', rotate: true, target: () => ({ step: 0.02 }) },
  { name: 'principal directions, a byte target', rotate: true, target: (n) => ({ payloadBytes: n * 9 }) },
  // Both layouts planned: on threads, the principal directions' plan on a kept thread beside the axes'.
  { name: 'either layout, a byte target', rotate: 'auto', target: (n) => ({ payloadBytes: n * 9 }) },
];

describe('ec encode on threads', () => {
  for (const c of cases) {
    it(`writes the one-thread bytes and error on 2 and 3 threads (${c.name}, odd sizes)`, async () => {
      const input = rowsOf(2999, 23, 5);
      const opts = { blockRows: 101, rotate: c.rotate };
      const one = await encodeEc(input, c.target(input.n), { ...opts, threads: 1 });
      if (c.rotate !== 'auto') expect(one.residuals.layout.rotation !== undefined).toBe(c.rotate);
      expect(one.residuals.blockCount).toBe(Math.ceil(2999 / 101));
      const want = joined(one.residuals);
      for (const threads of [2, 3]) {
        const many = await encodeEc(input, c.target(input.n), { ...opts, threads });
        expect(Buffer.from(joined(many.residuals)).equals(Buffer.from(want))).toBe(true);
        expect(many.residualEnergy).toBe(one.residualEnergy);
        expect(many.step).toBe(one.step);
      }
    });
  }

  it('codes f16 rows on threads as on one, and the section read back decodes to the rows the encoder holds', async () => {
    const base = rowsOf(1501, 17, 9);
    const half = Uint16Array.from(base.x, (v) => f32ToF16(v));
    const input = { ...base, x: datasetFromArray(half, base.n, base.d) };
    for (const rotate of [false, true]) {
      const opts = { blockRows: 64, rotate };
      const one = await encodeEc(input, { step: 0.01 }, { ...opts, threads: 1 });
      const three = await encodeEc(input, { step: 0.01 }, { ...opts, threads: 3 });
      const payload = joined(three.residuals);
      expect(Buffer.from(payload).equals(Buffer.from(joined(one.residuals)))).toBe(true);
      expect(three.residualEnergy).toBe(one.residualEnergy);
      const read = ecSection.read(asPayload(payload), { n: base.n, d: base.d, m: 7, assignments: base.assign, version: 5 }, corrupt);
      const held = decoded(three.residuals, base), fromFile = decoded(read as typeof three.residuals, base);
      expect(Buffer.from(fromFile.buffer).equals(Buffer.from(held.buffer))).toBe(true);
    }
  });

  it('projects in f64 to the one-at-a-time sums, bit for bit (a tail of directions, zeros among the values)', () => {
    const r = rng(3);
    for (const [rows, d, k] of [[7, 13, 5], [4, 1, 1], [3, 9, 9], [13, 384, 17]]) {
      const x = Float64Array.from({ length: rows * d }, () => (r() < 0.1 ? 0 : r() - 0.5));
      const P = Float64Array.from({ length: k * d }, () => r() - 0.5);
      const y = new Float64Array(rows * k);
      projectInto(P, k, d, x, rows, y);
      for (let u = 0; u < rows; u++)
        for (let c = 0; c < k; c++) {
          let t = 0;
          for (let j = 0; j < d; j++) t += P[c * d + j] * x[u * d + j];
          expect(y[u * k + c]).toBe(t);
        }
    }
  });
});
