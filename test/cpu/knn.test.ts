import { describe, expect, it } from 'vitest';
import { knn } from '../../dist/backend/cpu/index.js';
import { randomDataset } from './data.js';
import { viewAll } from '../../src/vectors/dataset.js';

function brute(base: Float32Array, nb: number, q: Float32Array, nq: number, d: number, k: number) {
  const out: Array<Array<[number, number]>> = [];
  for (let a = 0; a < nq; a++) {
    const all: Array<[number, number]> = [];
    for (let b = 0; b < nb; b++) {
      let s = 0;
      for (let j = 0; j < d; j++) s += (q[a * d + j] - base[b * d + j]) ** 2;
      all.push([s, b]);
    }
    all.sort((x, y) => x[0] - y[0] || x[1] - y[1]);
    out.push(all.slice(0, k));
  }
  return out;
}

describe('knn', () => {
  it('matches brute force (odd sizes, several tiles and query blocks)', async () => {
    const nb = 2100, nq = 131, d = 11, k = 7;
    const base = viewAll(randomDataset(nb, d, 1)) as Float32Array;
    const q = viewAll(randomDataset(nq, d, 2)) as Float32Array;
    const { ids, dists } = await knn(base, nb, q, nq, d, k);
    const want = brute(base, nb, q, nq, d, k);
    for (let a = 0; a < nq; a++) {
      for (let r = 0; r < k; r++) {
        expect(ids[a * k + r]).toBe(want[a][r][1]);
        expect(dists[a * k + r]).toBeCloseTo(want[a][r][0], 4);
        if (r > 0) expect(dists[a * k + r]).toBeGreaterThanOrEqual(dists[a * k + r - 1]);
      }
    }
  });

  it('pads with -1 / Infinity when k > nb and breaks ties by lower id', async () => {
    const d = 3;
    const base = new Float32Array([1, 0, 0, 0, 1, 0, 1, 0, 0]); // rows 0 and 2 identical
    const q = new Float32Array([1, 0, 0]);
    const { ids, dists } = await knn(base, 3, q, 1, d, 5);
    expect(Array.from(ids)).toEqual([0, 2, 1, -1, -1]);
    expect(dists[0]).toBe(0);
    expect(dists[2]).toBeCloseTo(2, 6);
    expect(dists[4]).toBe(Infinity);
  });
});
