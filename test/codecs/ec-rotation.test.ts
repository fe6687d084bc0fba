// The 'ec' codec along principal directions (src/codecs/ec/rotation.ts, section layout version 2;
// the eigen-decomposition itself: eigen.test.ts): correlated residuals coded in fewer bytes than
// along the axes at the same error, the reader's reconstruction equal to the encoder's bit for bit,
// the same bytes every run, and damaged rotated sections refused with a reason (cuts, flips, random payloads).
import { describe, expect, it } from 'vitest';
import { encodeEc } from '../../dist/codecs/ec/encode.js';
import { ecSection } from '../../dist/codecs/ec/residuals.js';
import { rng } from '../rng.js';
import { decoded, joined } from './ec-helpers.js';

class Corrupt extends Error {}
const corrupt = (what: string) => new Corrupt(what);

/** n × d rows around m anchors whose residual is correlated: r = L z, z with falling spreads, L a fixed random mixing. */
function correlated(n: number, d: number, m: number, seed: number) {
  const r = rng(seed);
  const g = () => Math.sqrt(-2 * Math.log(1 - r())) * Math.cos(2 * Math.PI * r());
  const anchors = Float32Array.from({ length: m * d }, g);
  const L = Float64Array.from({ length: d * d }, g);
  const x = new Float32Array(n * d), assign = new Uint32Array(n);
  const z = new Float64Array(d);
  for (let i = 0; i < n; i++) {
    const a = (assign[i] = Math.floor(r() * m));
    for (let k = 0; k < d; k++) z[k] = 0.1 * Math.exp(-k / 4) * g();
    for (let k = 0; k < d; k++) {
      let s = 0;
      for (let j = 0; j < d; j++) s += L[k * d + j] * z[j];
      x[i * d + k] = anchors[a * d + k] + s;
    }
  }
  return { x, n, d, anchors, assign };
}

const mse = (x: Float32Array, y: Float32Array, n: number) => {
  let s = 0;
  for (let i = 0; i < x.length; i++) s += (x[i] - y[i]) ** 2;
  return s / n;
};

describe('ec along principal directions', () => {
  const input = correlated(9000, 24, 8, 1);

  it('codes correlated residuals in fewer bytes at the same step, and reads back bit for bit', async () => {
    const plain = await encodeEc(input, { step: 0.01 }, { rotate: false });
    const rot = await encodeEc(input, { step: 0.01 }, { rotate: true });
    expect(rot.residuals.layout.rotation).toBeDefined();
    const pb = joined(plain.residuals), rb = joined(rot.residuals);
    expect(rb.length).toBeLessThan(0.8 * pb.length);
    const back = ecSection.read(rb, input, corrupt);
    expect(back.layout.rotation!.k).toBe(rot.residuals.layout.rotation!.k);
    const a = decoded(rot.residuals, input), b = decoded(back, input);
    expect(Buffer.from(b.buffer).equals(Buffer.from(a.buffer))).toBe(true);
    // The encoder's error (summed in the rotated frame) is the decoded one's, up to f16 directions' skew.
    expect(Math.abs(mse(input.x, a, input.n) / rot.residualEnergy - 1)).toBeLessThan(0.05);
    // The same error as the axes at that step, within the quantizer's spread.
    expect(mse(input.x, a, input.n)).toBeLessThan(1.3 * mse(input.x, decoded(plain.residuals, input), input.n));
  });

  it('a byte target picks the directions where they pay, hits the target within 1 %, and keeps less error', async () => {
    for (const bytes of [input.n * 8, input.n * 16]) {
      const auto = await encodeEc(input, { payloadBytes: bytes });
      const plain = await encodeEc(input, { payloadBytes: bytes }, { rotate: false });
      expect(auto.residuals.layout.rotation).toBeDefined();
      const got = joined(auto.residuals).length;
      expect(Math.abs(got / bytes - 1)).toBeLessThan(0.01);
      expect(mse(input.x, decoded(auto.residuals, input), input.n)).toBeLessThan(0.8 * mse(input.x, decoded(plain.residuals, input), input.n));
    }
  });

  it('writes the same bytes every run and for any block size the same reconstruction', async () => {
    const a = joined((await encodeEc(input, { payloadBytes: input.n * 12 })).residuals);
    const b = joined((await encodeEc(input, { payloadBytes: input.n * 12 })).residuals);
    expect(Buffer.from(a).equals(Buffer.from(b))).toBe(true);
    const small = (await encodeEc(input, { step: 0.01 }, { rotate: true, blockRows: 333 })).residuals;
    const big = (await encodeEc(input, { step: 0.01 }, { rotate: true })).residuals;
    expect(Buffer.from(decoded(small, input).buffer).equals(Buffer.from(decoded(big, input).buffer))).toBe(true);
  });

  it('refuses every cut of a rotated section; flips, mutations and random payloads read or are refused, never crash or hang', async () => {
    const small = correlated(300, 6, 3, 5);
    const payload = joined((await encodeEc(small, { step: 0.02 }, { rotate: true, blockRows: 200 })).residuals);
    expect(new DataView(payload.buffer).getUint32(0, true)).toBe(2);
    for (let len = 0; len < payload.length; len++) expect(() => ecSection.read(payload.subarray(0, len), small, corrupt)).toThrow(Corrupt);
    let refused = 0, read = 0;
    const attempt = (c: Uint8Array) => {
      try {
        decoded(ecSection.read(c, small, corrupt), small);
        read++;
      } catch (e) {
        expect(e).toBeInstanceOf(Corrupt);
        refused++;
      }
    };
    for (let bit = 0; bit < 8 * payload.length; bit += 2) {
      const c = payload.slice();
      c[bit >> 3] ^= 1 << (bit & 7);
      attempt(c);
    }
    const r = rng(11);
    for (let t = 0; t < 300; t++) {
      const c = payload.slice();
      const hits = 1 + Math.floor(r() * 8);
      for (let h = 0; h < hits; h++) c[Math.floor(r() * c.length)] = Math.floor(r() * 256);
      attempt(c);
      const rand = Uint8Array.from({ length: Math.floor(r() * 2 * payload.length) }, () => Math.floor(r() * 256));
      if (rand.length >= 24) new DataView(rand.buffer).setUint32(0, 1 + Math.floor(r() * 2), true);
      attempt(rand);
    }
    expect(refused).toBeGreaterThan(read);
  }, 180_000);
});
