// The search over pq-coded files: asymmetric distances from per-query tables (search/pq-adc.ts)
// give what decoding every candidate gives; visiting every list, the exact k nearest of the
// decoded vectors (ids and distances); the worker threads change nothing.
import { describe, expect, it } from 'vitest';
import { knn } from '../../dist/backend/cpu/index.js';
import type { PqBits } from '../../dist/codecs/pq.js';
import { decodeVlc, encodeVlcBytes, type VlcFile } from '../../dist/io/vlc/format.js';
import { reconstruct } from '../../dist/io/vlc/reconstruct.js';
import { searchCompressed, vlcSearchIndex, type SearchIndex } from '../../dist/search/index.js';
import { cpuKnn } from '../../dist/backend/cpu/index.js';
import { pqContent } from '../format/pq-content.js';
import { rng } from '../rng.js';

/** A pq-coded file of n random codes over m anchors (M subspaces of d, or of `dims` projected directions; `bits` per code). */
function pqFile(n: number, d: number, m: number, M: number, bits: PqBits, dims = 0): VlcFile {
  return decodeVlc(encodeVlcBytes(pqContent(n, d, m, M, bits, dims).content));
}

function queriesNear(file: VlcFile, nq: number, seed: number): Float32Array {
  const { d } = file.manifest;
  const rand = rng(seed);
  const x = reconstruct(file);
  return Float32Array.from({ length: nq * d }, (_, e) => x[(Math.floor(e / d) * 7 % file.manifest.n) * d + (e % d)] + (rand() - 0.5) * 0.3);
}

describe('search over pq codes', () => {
  for (const [d, M, bits, dims] of [[16, 4, 8, 0], [13, 5, 4, 0], [17, 3, 8, 7], [13, 5, 4, 9]] as const) {
    it(`visiting every list finds the exact top-k of the decoded vectors (d = ${d}, M = ${M}, ${bits}-bit${dims ? `, on ${dims} directions` : ''})`, async () => {
      const file = pqFile(600, d, 12, M, bits, dims);
      const nq = 40;
      const k = 10;
      const q = queriesNear(file, nq, 3);
      const got = await searchCompressed(vlcSearchIndex(file), q, nq, { k, nprobe: 12, threads: 1 }, cpuKnn);
      const want = await knn(reconstruct(file), 600, q, nq, d, k);
      let same = 0;
      for (let e = 0; e < nq * k; e++) {
        expect(got.dists[e]).toBeCloseTo(want.dists[e], 3);
        if (got.ids[e] === want.ids[e]) same++;
      }
      // Ids may differ only where two distances tie to f32 rounding.
      expect(same / (nq * k)).toBeGreaterThan(0.99);
    });
  }

  it('gives the same results on one thread and on two, and leaves out the excluded ids', async () => {
    const file = pqFile(3000, 16, 20, 8, 8);
    const nq = 2400; // two threads need 1000 queries each (parallel.ts)
    const q = queriesNear(file, nq, 5);
    const exclude = Int32Array.from({ length: nq }, (_, r) => (r * 7) % 3000);
    const index = vlcSearchIndex(file);
    const one = await searchCompressed(index, q, nq, { k: 5, nprobe: 3, exclude, threads: 1 }, cpuKnn);
    const two = await searchCompressed(index, q, nq, { k: 5, nprobe: 3, exclude, threads: 2 }, cpuKnn);
    expect(Array.from(two.ids)).toEqual(Array.from(one.ids));
    expect(Array.from(two.dists)).toEqual(Array.from(one.dists));
    for (let r = 0; r < nq; r++) expect(Array.from(one.ids.subarray(r * 5, r * 5 + 5))).not.toContain(exclude[r]);
    expect(one.ids.every((id) => id >= 0)).toBe(true);
  });

  /** The generic steps of search/index.ts on the same index: without `pq`, the scorer by id. */
  const generic = (index: SearchIndex): SearchIndex => ({ ...index, pq: undefined });

  const cases: [string, number, number, number, number, number, number[], number?][] = [
    // name, n, d, m, M, bits, nprobes, projected dimensions
    ['lists of ~50, 8-bit', 3000, 16, 60, 8, 8, [1, 2, 5, 60]],
    ['lists of ~50, 8-bit, codes on 10 of 19 directions', 3000, 19, 60, 4, 8, [1, 5], 10],
    ['lists of 1-2 (queries run past the first ranking and sort every anchor), 4-bit', 90, 13, 60, 5, 4, [1, 3]],
    ['every anchor twice (equal anchor distances: ties go to the lower anchor id)', 90, 13, 60, 5, 4, [1, 3]],
    ['m × d beyond one load of the kernel (anchors in tiles)', 4300, 1000, 4200, 10, 8, [1, 4]],
  ];
  for (const [name, n, d, m, M, bits, nprobes, dims] of cases) {
    it(`the pq search gives the generic steps' ids and distances exactly: ${name}`, async () => {
      const file = pqFile(n, d, m, M, bits, dims);
      if (name.startsWith('every anchor twice')) file.anchors.copyWithin((m / 2) * d, 0, (m / 2) * d);
      const index = vlcSearchIndex(file);
      const nq = 30;
      const q = queriesNear(file, nq, 11);
      const exclude = Int32Array.from({ length: nq }, (_, r) => (r % 3 === 0 ? (r * 7) % n : -1));
      for (const nprobe of nprobes) {
        for (const k of [1, 10, 25]) {
          const fast = await searchCompressed(index, q, nq, { k, nprobe, exclude, threads: 1 }, cpuKnn);
          const ref = await searchCompressed(generic(index), q, nq, { k, nprobe, exclude }, cpuKnn);
          expect(Array.from(fast.ids)).toEqual(Array.from(ref.ids));
          expect(Array.from(fast.dists)).toEqual(Array.from(ref.dists));
        }
      }
    }, 60_000);
  }

  it.each([0, 10])('the pq search on two worker threads gives the generic steps exactly (with ties among the anchors; %i projected dimensions)', async (dims) => {
    const file = pqFile(3000, 16, 20, 8, 8, dims); // anchors on a 1/16 grid: equal anchor distances occur
    const nq = 2400;
    const q = queriesNear(file, nq, 5);
    const index = vlcSearchIndex(file);
    for (const nprobe of [1, 3]) {
      const two = await searchCompressed(index, q, nq, { k: 10, nprobe, threads: 2 }, cpuKnn);
      const ref = await searchCompressed(generic(index), q, nq, { k: 10, nprobe }, cpuKnn);
      expect(Array.from(two.ids)).toEqual(Array.from(ref.ids));
      expect(Array.from(two.dists)).toEqual(Array.from(ref.dists));
    }
  });
});
