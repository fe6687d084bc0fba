// The entropy-coded residual codec ('ec', src/codecs/ec/): a Gaussian-mixture residual coded within
// 1 % of its codes' empirical entropy and read back to the encoder's reconstruction bit for bit;
// escapes, byte targets, water-filling's uncoded dimensions, the same bytes every run and for any
// block size's codes, and damaged sections refused with a reason, never a crash.
import { describe, expect, it } from 'vitest';
import { encodeEc } from '../../dist/codecs/ec/encode.js';
import { ecSection, type EcResiduals } from '../../dist/codecs/ec/residuals.js';
import { columnsOf, planStep, pointWork, stepPoint, waterFillingBits, type PointTask } from '../../dist/codecs/ec/steps.js';
import { onDimensions, sharedF64 } from '../../dist/codecs/dims-on-threads.js';
import { decoded, joined, mixture } from './ec-helpers.js';

class Corrupt extends Error {}
const corrupt = (what: string) => new Corrupt(what);

/** Empirical entropy of each coded dimension's codes over all rows, summed, in bytes. */
function codeEntropyBytes(res: EcResiduals): number {
  const D = res.layout.dims.length, maps = Array.from({ length: D }, () => new Map<number, number>());
  for (let b = 0; b < res.blockCount; b++) {
    const q = res.decodeBlock(b);
    for (let t = 0; t < q.length; t++) maps[t % D].set(q[t], (maps[t % D].get(q[t]) ?? 0) + 1);
  }
  let h = 0;
  for (const mp of maps) for (const c of mp.values()) h -= c * Math.log2(c / res.n);
  return h / 8;
}

describe('ec codec', () => {
  const input = mixture(12_000, 48, 16, 1);

  it('codes a mixture residual within 2 % of its codes empirical entropy (1 % without the models) and reads back bit for bit', async () => {
    for (const step of [0.004, 0.03, 0.1]) {
      const { residuals, residualEnergy } = await encodeEc(input, { step });
      const payload = joined(residuals);
      const H = codeEntropyBytes(residuals);
      // The models (up to 259 codes a dimension here) weigh on 12,000 rows; the blocks alone sit closer.
      expect(payload.length / H).toBeLessThan(1.02);
      expect((payload.length - residuals.payload()[0].length) / H).toBeLessThan(1.01);
      const back = ecSection.read(payload, input, corrupt);
      expect(Array.from(back.layout.blockAt)).toEqual(Array.from(residuals.layout.blockAt)); // the encoder's table is the reader's
      const a = decoded(residuals, input), b = decoded(back, input);
      expect(Buffer.from(b.buffer).equals(Buffer.from(a.buffer))).toBe(true);
      let err = 0;
      for (let i = 0; i < a.length; i++) err += (input.x[i] - a[i]) ** 2;
      expect(err / input.n).toBeCloseTo(residualEnergy, 10);
    }
  });

  it('leaves the quiet dimensions uncoded (water-filling) and meets an MSE target on the sample', async () => {
    const { residuals, residualEnergy } = await encodeEc(input, { mse: 0.05 });
    const dims = Array.from(residuals.layout.dims);
    expect(dims.length).toBeGreaterThan(4);
    expect(dims.length).toBeLessThan(48); // spreads 0.3·e^(−k/8): the last dimensions are below the water
    expect(dims).toEqual(dims.map((_, i) => i)); // the busiest ones, in order
    expect(residualEnergy).toBeLessThan(0.05 * 1.05);
    expect(residualEnergy).toBeGreaterThan(0.05 * 0.8);
    // Gaussian residuals: the codec's rate sits above the reverse-water-filling bound at its MSE, by
    // less than the 0.254 bit a coded dimension an entropy-coded uniform quantizer costs at high rate.
    const vars = Array.from({ length: 48 }, (_, k) => (0.3 * Math.exp(-k / 8)) ** 2);
    const bound = waterFillingBits(vars, residualEnergy).bits;
    const rate = (8 * (joined(residuals).length - residuals.payload()[0].length)) / input.n;
    expect(rate).toBeGreaterThan(bound);
    expect((rate - bound) / dims.length).toBeLessThan(0.3);
  });

  it('escapes rare large codes and still round-trips', async () => {
    const heavy = mixture(5000, 16, 4, 2, 0.002);
    const { residuals } = await encodeEc(heavy, { step: 0.01 }, { blockRows: 512 });
    const payload = joined(residuals);
    const back = ecSection.read(payload, heavy, corrupt);
    expect(Buffer.from(decoded(back, heavy).buffer).equals(Buffer.from(decoded(residuals, heavy).buffer))).toBe(true);
    // Some block carries escape bytes (the u32 after the 32 states).
    const L = back.layout;
    let esc = 0;
    for (let b = 0; b < back.blockCount; b++) esc += new DataView(payload.buffer, L.blockAt[b] + 132, 4).getUint32(0, true);
    expect(esc).toBeGreaterThan(0);
  });

  it('hits a payload byte target within 1 %', async () => {
    for (const bytes of [input.n * 10, input.n * 24]) {
      const { residuals } = await encodeEc(input, { payloadBytes: bytes });
      const got = joined(residuals).length;
      expect(Math.abs(got / bytes - 1)).toBeLessThan(0.01);
    }
  });

  it('writes the same bytes every run; the codes do not depend on the block size', async () => {
    const a = joined((await encodeEc(input, { step: 0.02 })).residuals);
    const b = joined((await encodeEc(input, { step: 0.02 })).residuals);
    expect(Buffer.from(a).equals(Buffer.from(b))).toBe(true);
    const small = (await encodeEc(input, { step: 0.02 }, { blockRows: 100 })).residuals;
    expect(Buffer.from(decoded(small, input).buffer).equals(Buffer.from(decoded(ecSection.read(a, input, corrupt), input).buffer))).toBe(true);
  });

  it('handles one row, rows fewer than a block, and residuals that are all zero', async () => {
    const one = mixture(1, 8, 1, 3);
    const r1 = (await encodeEc(one, { step: 0.01 })).residuals;
    expect(Buffer.from(decoded(ecSection.read(joined(r1), one, corrupt), one).buffer).equals(Buffer.from(decoded(r1, one).buffer))).toBe(true);
    const zero = { ...mixture(300, 8, 2, 4) };
    zero.x = new Float32Array(300 * 8);
    zero.anchors = new Float32Array(2 * 8);
    const { residuals, residualEnergy } = await encodeEc(zero, { mse: 0.01 });
    expect(residualEnergy).toBe(0);
    expect(residuals.layout.dims.length).toBe(0);
    expect(ecSection.read(joined(residuals), zero, corrupt).blockCount).toBe(1);
  });

  it('refuses every cut of its section, and every bit flip either reads or is refused with a reason', async () => {
    const small = mixture(400, 5, 3, 5, 0.01);
    const payload = joined((await encodeEc(small, { step: 0.02 }, { blockRows: 300 })).residuals);
    for (let len = 0; len < payload.length; len++) expect(() => ecSection.read(payload.subarray(0, len), small, corrupt)).toThrow(Corrupt);
    const longer = new Uint8Array(payload.length + 4);
    longer.set(payload);
    expect(() => ecSection.read(longer, small, corrupt)).toThrow(/the blocks take/);
    let refused = 0, read = 0;
    for (let bit = 0; bit < 8 * payload.length; bit += 3) {
      const c = payload.slice();
      c[bit >> 3] ^= 1 << (bit & 7);
      try {
        const r = ecSection.read(c, small, corrupt);
        decoded(r, small); // a flip that reads decodes every row without error
        read++;
      } catch (e) {
        expect(e).toBeInstanceOf(Corrupt);
        expect((e as Error).message.length).toBeGreaterThan(10);
        refused++;
      }
    }
    expect(refused).toBeGreaterThan(read); // most damage is seen (the file's CRC sees the rest)
    expect(() => ecSection.read(payload, { n: 401, d: 5 }, corrupt)).toThrow(Corrupt); // not this file's rows
  }, 180_000);
});

describe("ec's plans for --quality (codec-registry/ec.ts atError, codecs/ec/predict.ts)", () => {
  it('planStep answers the same for several targets on one sample (its points remembered) as on a fresh copy each time', () => {
    const rows = 1500, d = 23;
    let seed = 9;
    const rnd = () => ((seed = (Math.imul(seed, 1103515245) + 12345) >>> 0) / 2 ** 32);
    const sample = Float64Array.from({ length: rows * d }, (_, e) => Math.fround((rnd() - 0.5) * Math.exp(-(e % d) / 7)));
    const shared = columnsOf(sample, d);
    const targets = [{ mse: 0.05 }, { mse: 0.0501 }, { bits: 40 }, { mse: 0.2 }, { bits: 41 }, { mse: 0.05 }];
    for (const extra of [0, 3])
      for (const t of targets) {
        const got = planStep(shared, t, extra), want = planStep(columnsOf(sample, d), t, extra);
        expect([got.step, got.mse, got.bits, Array.from(got.coded)]).toEqual([want.step, want.mse, want.bits, Array.from(want.coded)]);
      }
  });

  it('measures a step point on several threads as on one: each dimension\'s error and entropy, the sums, to the bit', () => {
    const rows = 2111, d = 29;
    let seed = 5;
    const rnd = () => ((seed = (Math.imul(seed, 1103515245) + 12345) >>> 0) / 2 ** 32);
    // Spreads falling with the dimension (the last ones uncoded at coarse steps), a constant dimension, rare outliers.
    const sample = Float64Array.from({ length: rows * d }, (_, e) => (e % d === 4 ? 0 : Math.fround((rnd() - 0.5) * Math.exp(-(e % d) / 6) * (rnd() < 0.01 ? 40 : 1))));
    const cols = columnsOf(sample, d);
    for (const step of [0.003, 0.02, 0.3])
      for (const extra of [0, 2]) {
        const one = stepPoint(cols, step, extra, 1);
        for (const threads of [2, 5]) {
          const many = stepPoint(cols, step, extra, threads);
          expect([many.step, many.mse, many.bits, Array.from(many.coded)]).toEqual([one.step, one.mse, one.bits, Array.from(one.coded)]);
        }
        if (step === 0.02) expect(one.coded.some((c) => c) && one.coded.some((c) => !c)).toBe(true); // some dimensions coded, some not
      }
    // Every dimension on the workers (the caller only waits): their errors and entropies are the caller's.
    const task = (): PointTask => ({ kind: 'ec-point', cols: sharedF64(cols.cols), rows, step: 0.02, mse: sharedF64(new Float64Array(d)), entropy: sharedF64(new Float64Array(d)) });
    const here = task(), there = task();
    onDimensions(here, d, 1, pointWork(here));
    onDimensions(there, d, 3, pointWork(there), false);
    expect(Array.from(there.mse)).toEqual(Array.from(here.mse));
    expect(Array.from(there.entropy)).toEqual(Array.from(here.entropy));
  });

  it('plans the step that leaves a given error, its section estimated within 3 % of the coded one; for the whole file\'s n', async () => {
    const { ecCodec } = await import('../../dist/codec-registry/ec.js');
    const input = mixture(6_001, 24, 16, 41);
    let energy = 0;
    for (let i = 0; i < input.n; i++)
      for (let k = 0; k < input.d; k++) energy += (input.x[i * input.d + k] - input.anchors[input.assign[i] * input.d + k]) ** 2;
    energy /= input.n;
    const shape = (n: number) => ({ n, d: input.d, m: 16, fileBytes: () => 0 });
    for (const share of [0.3, 0.05, 0.005]) {
      const p = ecCodec.atError!(share * energy, input, shape(input.n))!;
      expect(p.step).toBeGreaterThan(0);
      expect(ecCodec.atError!(share * energy, input, shape(input.n))).toEqual(p); // the same plan every time
      const out = await ecCodec.encode(p, input, undefined as never);
      expect(out.residualEnergy).toBeLessThanOrEqual(share * energy * 1.05);
      expect(out.residualEnergy).toBeGreaterThan(share * energy * 0.7);
      expect(Math.abs(out.residuals.payloadBytes() / p.payload - 1)).toBeLessThan(0.03);
      // The sample standing for a file 10 times larger: about 10 times the codes, the models once.
      const big = ecCodec.atError!(share * energy, input, shape(10 * input.n))!;
      expect(big.step).toBe(p.step);
      expect(big.payload / p.payload).toBeGreaterThan(8);
      expect(big.payload / p.payload).toBeLessThan(10.01);
    }
    // An error the residual keeps without codes: nothing to plan.
    expect(ecCodec.atError!(energy * 1.01, input, shape(input.n))).toBeUndefined();
  });
});
