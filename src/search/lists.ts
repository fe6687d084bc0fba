// Inverted lists: the vectors of each anchor, from the assignments (a counting sort, ids ascending).
import type { InvertedLists } from './types.js';

export function invertedLists(assignments: ArrayLike<number>, n: number, m: number): InvertedLists {
  const start = new Uint32Array(m + 1);
  for (let i = 0; i < n; i++) start[assignments[i] + 1]++;
  for (let j = 0; j < m; j++) start[j + 1] += start[j];
  const fill = start.slice(0, m);
  const members = new Uint32Array(n);
  for (let i = 0; i < n; i++) members[fill[assignments[i]]++] = i;
  return { start, members };
}
