// The standard workloads (docs/algorithm.md §5), with the data each one benchmarks.
import type { Dataset } from '../vectors/dataset.js';
import { clusteredData, seedData } from './data.js';

export interface Workload {
  name: 'seed-small' | 'seed-large' | 'mnemo' | 'prod';
  n: number;
  d: number;
  m: number;
  /** The seed's own test data (f16) for its two sizes; seeded gaussian clusters (f32) otherwise. */
  make(n: number): Dataset;
}

export const WORKLOADS: Workload[] = [
  { name: 'seed-small', n: 1000, d: 64, m: 32, make: (n) => seedData(n, 64) },
  { name: 'seed-large', n: 10000, d: 128, m: 256, make: (n) => seedData(n, 128) },
  { name: 'mnemo', n: 100000, d: 384, m: 1024, make: (n) => clusteredData(n, 384, 384, 256) },
  { name: 'prod', n: 1000000, d: 128, m: 2048, make: (n) => clusteredData(n, 128, 128, 512) },
];

/** Points the CPU benchmark uses for a workload: small enough to stay quick (and CI-safe). */
export function cpuSubsample(w: Workload): number {
  const budget = 4e9; // flops of one assign pass: about a second on two cores
  const n = Math.floor(budget / (2 * w.m * w.d));
  return Math.max(Math.min(w.n, n), Math.min(w.n, w.m * 2));
}
