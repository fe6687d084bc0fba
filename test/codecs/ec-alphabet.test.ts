// The ec models' alphabets (model.ts alphabetOf): the tails cut where escaping their codes costs
// fewest bits. Measured in coded bytes (the models as stored plus a block coded under them), the cut
// it picks is never worse than a fixed count cut (a code seen fewer than N / 2^S times escaped,
// the rule it replaced) or no cut at all, and better in sum.
import { describe, expect, it } from 'vitest';
import { encodeBlock } from '../../dist/codecs/ec/blocks.js';
import { CodeHistogram, alphabetOf, modelsOf, writeModels, type Alphabet } from '../../dist/codecs/ec/model.js';
import { rng } from '../rng.js';

/** rows × dims Gaussian codes round(σ_k · g), and their histogram over a window of ±8σ_k. */
function codes(rows: number, spreads: number[], seed: number) {
  const r = rng(seed);
  const g = () => Math.sqrt(-2 * Math.log(1 - r())) * Math.cos(2 * Math.PI * r());
  const dims = spreads.length, q = new Int32Array(rows * dims);
  for (let t = 0; t < q.length; t++) q[t] = Math.round(spreads[t % dims] * g());
  const h = CodeHistogram.around(spreads.map((s) => 8 * s + 2));
  for (let i = 0; i < rows; i++) h.addRow(q, i * dims);
  return { q, h };
}

/** The rule alphabetOf replaced: each tail's end cut while it is seen fewer than N / 2^S times. */
function countCut(h: CodeHistogram, scaleBits: number): Alphabet {
  const dims = h.lo.length, lo = new Int32Array(dims), size = new Uint32Array(dims), rare = h.total / 2 ** scaleBits;
  for (let k = 0; k < dims; k++) {
    const c = h.counts.subarray(h.start[k], h.start[k + 1]);
    let a = 0, b = c.length - 1;
    while (a < b && c[a] < rare) a++;
    while (b > a && c[b] < rare) b--;
    (lo[k] = h.lo[k] + a), (size[k] = b - a + 1);
  }
  return { lo, size };
}

/** No cut: every code seen, from the lowest to the highest. */
function noCut(h: CodeHistogram): Alphabet {
  const dims = h.lo.length, lo = new Int32Array(dims), size = new Uint32Array(dims);
  for (let k = 0; k < dims; k++) {
    const c = h.counts.subarray(h.start[k], h.start[k + 1]);
    let a = 0, b = c.length - 1;
    while (a < b && c[a] === 0) a++;
    while (b > a && c[b] === 0) b--;
    (lo[k] = h.lo[k] + a), (size[k] = b - a + 1);
  }
  return { lo, size };
}

/** Models plus one block of every row, in bytes. */
function codedBytes(q: Int32Array, rows: number, h: CodeHistogram, alpha: Alphabet, scaleBits: number): number {
  const models = modelsOf(h, alpha, scaleBits);
  return writeModels(alpha, models).length + encodeBlock(q, rows, alpha, models).length;
}

describe('ec alphabets', () => {
  it('cut the tails where that codes fewest bytes: never more than a count cut or no cut, fewer in sum', () => {
    let mine = 0, counted = 0;
    for (const [rows, spreads, S] of [
      [3000, [0.4, 2, 12, 60], 12],
      [20000, [1, 8, 40, 150], 12],
      [20000, [1, 8, 40, 150], 14],
      [50000, [3, 30, 300], 13],
    ] as const) {
      const { q, h } = codes(rows, [...spreads], rows + S);
      const a = alphabetOf(h, S);
      const got = codedBytes(q, rows, h, a, S), byCount = codedBytes(q, rows, h, countCut(h, S), S), whole = codedBytes(q, rows, h, noCut(h), S);
      expect(got).toBeLessThanOrEqual(byCount);
      expect(got).toBeLessThanOrEqual(whole);
      // the same counts give the same alphabet
      const again = alphabetOf(h, S);
      expect(Array.from(again.lo)).toEqual(Array.from(a.lo));
      expect(Array.from(again.size)).toEqual(Array.from(a.size));
      (mine += got), (counted += byCount);
    }
    expect(mine).toBeLessThan(counted);
  });

  it('scales the codes bits, not the models bytes, with the rows a sample stands for', () => {
    const { h } = codes(4000, [150, 150], 7);
    const own = alphabetOf(h, 13), many = alphabetOf(h, 13, 4000 * 50);
    // standing for 50 times the rows, each escape costs 50 times more against the same model bytes: fewer are cut
    for (let k = 0; k < 2; k++) expect(many.size[k]).toBeGreaterThan(own.size[k]);
  });
});
