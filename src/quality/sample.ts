// Seeded samples of row indices: which vectors a quality figure is measured on. The same seed gives
// the same sample, so compress's figures and eval's are reproducible.
import { Rng } from '../anneal/random.js';

/** `count` distinct indices of 0..n-1 (at most n), in sample order, from a seeded partial Fisher–Yates shuffle. */
export function sampleIndices(n: number, count: number, seed: number): number[] {
  const rng = new Rng(seed);
  const pool = new Map<number, number>(); // sparse swap table: O(count) memory even for huge n
  const out: number[] = [];
  for (let i = 0; i < Math.min(count, n); i++) {
    const j = i + rng.int(n - i);
    const vi = pool.get(i) ?? i;
    const vj = pool.get(j) ?? j;
    pool.set(j, vi);
    out.push(vj);
  }
  return out;
}

/** Rows a figure is measured on: null = every row (the figure is exact). */
export type Rows = readonly number[] | null;

/** Every row when n <= limit, else a seeded sample of `limit` rows. */
export function rowsUpTo(n: number, limit: number, seed: number): Rows {
  return n <= limit ? null : sampleIndices(n, limit, seed);
}

export function rowCount(rows: Rows, n: number): number {
  return rows === null ? n : rows.length;
}

/** The r-th measured row. */
export function rowAt(rows: Rows, r: number): number {
  return rows === null ? r : rows[r];
}
