// Inverted lists: the vectors of each anchor, from the assignments (a counting sort, ids ascending).
// On SharedArrayBuffers, so that the search's worker threads read them without a copy.
import type { InvertedLists } from './types.js';

export function invertedLists(assignments: ArrayLike<number>, n: number, m: number): InvertedLists {
  const start = new Uint32Array(new SharedArrayBuffer(4 * (m + 1)));
  for (let i = 0; i < n; i++) start[assignments[i] + 1]++;
  for (let j = 0; j < m; j++) start[j + 1] += start[j];
  const fill = start.slice(0, m);
  const members = new Uint32Array(new SharedArrayBuffer(4 * n));
  for (let i = 0; i < n; i++) members[fill[assignments[i]]++] = i;
  return { start, members };
}
