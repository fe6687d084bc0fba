// Random exact k-NN problems and the comparison of two answers, shared by the fake-driver suite
// (knn.test.ts) and the GPU suite (test/gpu/knn.test.ts). Two exact searches that sum the d terms
// in different orders agree on distances to the last bits of f32, so: distances within a tiny
// relative tolerance, ids equal wherever the distances around them are clearly apart, and within a
// group of (near-)equal distances the same set of ids — in ascending order when the distances are
// exactly equal (copies of one base vector: ties go to the lower id, even past rank k).
import { expect } from 'vitest';
import type { Neighbours } from '../../dist/backend/types.js';
import { rng } from '../rng.js';

export interface KnnProblem {
  base: Float32Array;
  queries: Float32Array;
  nb: number;
  nq: number;
  d: number;
}

/**
 * nb base vectors and nq queries of d dims, uniform in ±1 plus `offset` on every coordinate; every
 * 7th base vector repeats an earlier one (ties), and every 5th query is a base vector (distance 0).
 */
export function knnProblem(nb: number, nq: number, d: number, seed: number, offset = 0): KnnProblem {
  const r = rng(seed);
  const base = new Float32Array(new SharedArrayBuffer(Math.max(1, nb * d) * 4), 0, nb * d);
  for (let e = 0; e < nb * d; e++) base[e] = offset + (r() - 0.5) * 2;
  for (let i = 7; i < nb; i += 7) {
    const from = Math.floor(r() * i);
    base.copyWithin(i * d, from * d, (from + 1) * d);
  }
  const queries = new Float32Array(new SharedArrayBuffer(Math.max(1, nq * d) * 4), 0, nq * d);
  for (let e = 0; e < nq * d; e++) queries[e] = offset + (r() - 0.5) * 2;
  for (let q = 0; q < nq && nb > 0; q += 5) {
    const from = Math.floor(r() * nb);
    queries.set(base.subarray(from * d, (from + 1) * d), q * d);
  }
  return { base, queries, nb, nq, d };
}

/**
 * `got` (nq × k) and `want` (nq × wantK, wantK >= k: the reference may look one rank further)
 * are the same answer up to f32 summation order (see the header). With wantK > k a group of
 * near-equal distances that ends at rank k − 1 is known to be closed, so k = 1 is compared too.
 */
export function expectSameNeighbours(got: Neighbours, want: Neighbours, nq: number, k: number, relTol = 1e-5, wantK = k): void {
  expect(got.ids.length).toBe(nq * k);
  expect(got.dists.length).toBe(nq * k);
  expect(want.ids.length).toBe(nq * wantK);
  let compared = 0;
  for (let q = 0; q < nq; q++) {
    const o = q * k, wo = q * wantK;
    const wd = Array.from(want.dists.subarray(wo, wo + wantK)), gd = Array.from(got.dists.subarray(o, o + k));
    const wi = Array.from(want.ids.subarray(wo, wo + wantK)), gi = Array.from(got.ids.subarray(o, o + k));
    const close = (a: number, b: number) => a === b || Math.abs(a - b) <= relTol * Math.max(Math.abs(a), Math.abs(b), 1e-30);
    for (let p = 0; p < k; p++) {
      if (!close(gd[p], wd[p])) throw new Error(`query ${q}, rank ${p}: distance ${gd[p]} (id ${gi[p]}) vs ${wd[p]} (id ${wi[p]})`);
      if (p > 0 && gd[p] < gd[p - 1]) throw new Error(`query ${q}: distances not ascending at rank ${p}`);
    }
    // Groups of consecutive ranks (of the reference's list) whose distances are within the tolerance of each other.
    for (let p0 = 0; p0 < k; ) {
      let p1 = p0 + 1;
      while (p1 < wantK && close(wd[p1], wd[p1 - 1])) p1++;
      // A group that reaches the end of the reference's list, or is cut by rank k, may hold other
      // members than the list shows: not determined, unless its distances are exactly equal on
      // each side (copies of one vector): both lists then hold the lowest ids of the whole group.
      const end = Math.min(p1, k);
      const ws = wi.slice(p0, end), gs = gi.slice(p0, end);
      // (A group of one is no tie: at the list's end its vector and the next one outside it may
      // be equal on one side's sums and apart on the other's — seen on the GPU, run h11.)
      const exactTie = end - p0 > 1 && wd.slice(p0, p1).every((v) => v === wd[p0]) && gd.slice(p0, end).every((v) => v === gd[p0]);
      const closed = p1 <= k && (p1 < wantK || wd[wantK - 1] === Infinity);
      if (closed || exactTie) {
        if (exactTie) expect(gs, `query ${q}, ranks ${p0}..${end - 1} (equal distances ${wd[p0]})`).toEqual(ws);
        else expect([...gs].sort((a, b) => a - b), `query ${q}, ranks ${p0}..${end - 1} (near-equal distances)`).toEqual([...ws].sort((a, b) => a - b));
        compared += end - p0;
      }
      p0 = p1;
    }
  }
  // The comparison must have checked most ids, or it checked nothing worth reporting.
  expect(compared).toBeGreaterThan(0.5 * nq * k);
}
