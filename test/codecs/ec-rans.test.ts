// The 'ec' codec's rANS coder (src/codecs/ec/rans.ts): exact round trips at every stream length and
// scale, the lane layout checked by an independent decoder written from the file's comment, the
// coded size against the models' ideal, and damaged streams refused without reading out of bounds.
import { describe, expect, it } from 'vitest';
import { LANES, RansError, RansModels, modelCostBits, quantizeFreqs, ransDecode, ransEncode } from '../../dist/codecs/ec/rans.js';
import { rng } from '../rng.js';

/** Models of `period` dimensions over `A` symbols, skewed differently per model, and symbols drawn from them. */
function stream(count: number, period: number, A: number, S: number, seed: number) {
  const r = rng(seed);
  const weights = Array.from({ length: period }, (_, j) => Array.from({ length: A }, (_, s) => (s === A - 1 && j % 2 ? 0 : Math.exp(-((s - A / 2) ** 2) / (1 + j)))));
  const cdf = weights.map((w) => {
    const t = w.reduce((a, b) => a + b, 0);
    let c = 0;
    return w.map((v) => (c += v / t));
  });
  const sym = new Uint16Array(count);
  for (let t = 0; t < count; t++) {
    const u = r(), c = cdf[t % period];
    let s = 0;
    while (s < A - 1 && (c[s] < u || weights[t % period][s] === 0)) s++;
    sym[t] = s;
  }
  const counts = Array.from({ length: period }, () => new Float64Array(A));
  for (let t = 0; t < count; t++) counts[t % period][sym[t]]++;
  const start = Uint32Array.from({ length: period + 1 }, (_, j) => j * A);
  const freq = new Uint32Array(period * A);
  counts.forEach((c, j) => {
    if (!c.some((v) => v > 0)) c[0] = 1; // a model no symbol reached
    freq.set(quantizeFreqs(c, S), j * A);
  });
  return { sym, models: new RansModels(S, start, freq), counts };
}

const bytesOf = (w: Uint16Array) => new Uint8Array(w.buffer, w.byteOffset, w.byteLength);

/** The layout as the comment of rans.ts states it, decoded symbol by symbol with nothing shared. */
function referenceDecode(words: Uint16Array, states: Uint32Array, count: number, period: number, m: RansModels): number[] {
  const x = Array.from(states);
  const out: number[] = [];
  let p = 0;
  for (let t = 0; t < count; t++) {
    const lane = t % 32, j = t % period, slot = x[lane] % m.M;
    let s = 0, c = 0;
    while (c + m.freq[m.start[j] + s] <= slot) c += m.freq[m.start[j] + s++];
    x[lane] = m.freq[m.start[j] + s] * Math.floor(x[lane] / m.M) + slot - c;
    if (x[lane] < 2 ** 16) x[lane] = x[lane] * 65536 + words[p++];
    out.push(s);
  }
  expect(p).toBe(words.length);
  expect(x.every((v) => v === 2 ** 16)).toBe(true);
  return out;
}

describe('ec rANS', () => {
  it('quantizes counts to frequencies summing to 2^S, > 0 exactly where a count is, the same every time', () => {
    const r = rng(1);
    for (const S of [8, 12, 16])
      for (let trial = 0; trial < 20; trial++) {
        const counts = Array.from({ length: 1 + Math.floor(r() * 200) }, () => (r() < 0.3 ? 0 : Math.floor(r() ** 4 * 1e5)));
        if (!counts.some((c) => c > 0)) counts[0] = 1;
        if (counts.filter((c) => c > 0).length > 2 ** S) continue;
        const f = quantizeFreqs(counts, S);
        expect(f.reduce((a, b) => a + b, 0)).toBe(2 ** S);
        counts.forEach((c, s) => expect(f[s] > 0).toBe(c > 0));
        expect(Array.from(quantizeFreqs(counts, S))).toEqual(Array.from(f));
      }
    expect(() => quantizeFreqs(new Array(300).fill(1), 8)).toThrow(/300 symbols/);
    expect(() => quantizeFreqs([0, 0], 12)).toThrow(/no symbol/);
  });

  it('round-trips exactly at every stream length, period and scale, and matches the layout its comment states', () => {
    for (const S of [8, 12, 16])
      for (const period of [1, 3, 40])
        for (const count of [0, 1, 31, 32, 33, 1000, 4099]) {
          const { sym, models } = stream(count, period, 9, S, count + period + S);
          const { states, words } = ransEncode(sym, count, period, models);
          const out = new Int32Array(count);
          ransDecode(bytesOf(words), 0, words.length, states, count, period, models, out);
          expect(Array.from(out)).toEqual(Array.from(sym));
          if (count <= 1000 && S === 12) expect(referenceDecode(words, states, count, period, models)).toEqual(Array.from(sym));
        }
  });

  it('codes within 0.1 % of the models ideal size (Σ −log2 p) on a long stream', () => {
    const count = 400_000, period = 64;
    const { sym, models } = stream(count, period, 33, 12, 9);
    const { words } = ransEncode(sym, count, period, models);
    const ideal = modelCostBits(sym, count, period, models) / 8;
    const coded = 2 * words.length + 4 * LANES;
    expect(coded / ideal).toBeLessThan(1.001);
    expect(coded / ideal).toBeGreaterThan(0.999);
  });

  it('refuses a symbol its model cannot code', () => {
    const { models } = stream(100, 2, 9, 12, 3); // model 1 gives the last symbol no frequency
    const sym = new Uint16Array(4).fill(8);
    expect(() => ransEncode(sym, 4, 2, models)).toThrow(/no frequency in model 1/);
  });

  it('refuses damaged streams with a RansError and never reads past the words it is given', () => {
    const count = 2000, period = 5;
    const { sym, models } = stream(count, period, 9, 12, 4);
    const { states, words } = ransEncode(sym, count, period, models);
    const b = bytesOf(words);
    const out = new Int32Array(count);
    const dec = (bytes: Uint8Array, W: number, st: ArrayLike<number>) => () => ransDecode(bytes, 0, W, st, count, period, models, out);
    expect(dec(b, words.length - 1, states)).toThrow(RansError); // a word short
    expect(dec(b, words.length + 1, states)).toThrow(/run past/); // more words than bytes
    const longer = new Uint8Array(b.length + 2);
    longer.set(b);
    expect(dec(longer, words.length + 1, states)).toThrow(/left after/);
    expect(dec(b, words.length, Uint32Array.from(states, (s, l) => (l === 3 ? 5 : s)))).toThrow(/lane 3's state/);
    // Every single-bit flip of the words or states: an error of the coder's own, or (rarely) other symbols, never a crash.
    let refused = 0;
    for (let bit = 0; bit < 8 * b.length; bit += 7) {
      const c = b.slice();
      c[bit >> 3] ^= 1 << (bit & 7);
      try {
        dec(c, words.length, states)();
      } catch (e) {
        expect(e).toBeInstanceOf(RansError);
        refused++;
      }
    }
    expect(refused).toBeGreaterThan(0);
  });
});
