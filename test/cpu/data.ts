// Small deterministic datasets for the CPU and anneal tests (shared memory, like the readers make).
import type { Dataset } from '../../src/vectors/dataset.js';
import { rng } from '../rng.js';
import { datasetFromArray } from '../../src/vectors/dataset.js';

export function randomDataset(n: number, d: number, seed: number, scale = 1, offset = 0): Dataset {
  const r = rng(seed);
  const data = new Float32Array(new SharedArrayBuffer(n * d * 4));
  for (let i = 0; i < data.length; i++) data[i] = offset + scale * (r() * 2 - 1);
  return datasetFromArray(data, n, d, 'test');
}

/** k tight blobs of `per` points each around random centres, rows interleaved. */
export function blobs(k: number, per: number, d: number, seed: number, spread = 0.05): Dataset {
  const r = rng(seed);
  const centres = Array.from({ length: k }, () => Array.from({ length: d }, () => r() * 10));
  const n = k * per;
  const data = new Float32Array(new SharedArrayBuffer(n * d * 4));
  for (let i = 0; i < n; i++) for (let j = 0; j < d; j++) data[i * d + j] = centres[i % k][j] + spread * (r() * 2 - 1);
  return datasetFromArray(data, n, d, 'test');
}
