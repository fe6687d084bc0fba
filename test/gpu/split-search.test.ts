// On a real machine with 2 or more GPUs: `vlc search` exhaustive with the rows split over the GPUs
// (backend/cuda/split-knn.ts) gives --gpu 0's ids and distances bit for bit, for every GPU count
// from 2 to the GPUs present, files of int8, pq and ec read where they lie (ranges cut at their
// blocks), a few hundred thousand rows. Skipped, and said so, on a machine with fewer than 2 GPUs.
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { compress, search } from '../../dist/index.js';
import { probeCuda } from '../../dist/backend/cuda/index.js';
import { npyHeader } from '../../dist/io/writers/npy.js';
import { rng } from '../rng.js';

const probe = probeCuda();
const gpus = probe.ok ? probe.devices.length : 0;
const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'vlc-gpu-split-search-'));
afterAll(() => fs.rmSync(dir, { recursive: true, force: true }));

const n = 300_007, d = 97, nq = 1_009, k = 13;
const npy = (file: string, x: Float32Array, rows: number) => fs.writeFileSync(file, Buffer.concat([Buffer.from(npyHeader('<f4', [rows, d])), Buffer.from(x.buffer)]));

describe.skipIf(gpus < 2)(`search split over ${gpus >= 2 ? `2..${gpus}` : '2 or more (this machine has fewer: skipped)'} GPUs = one GPU`, () => {
  const input = path.join(dir, 'x.npy'), queries = path.join(dir, 'q.npy');
  for (const residual of ['int8', 'pq', 'ec'] as const) {
    it(`--residual ${residual}: n ${n}, d ${d}, ${nq} queries, k ${k}`, async () => {
      if (!fs.existsSync(input)) {
        const r = rng(29);
        npy(input, Float32Array.from({ length: n * d }, (_, e) => (r() - 0.5) * 2 + ((e / d) % 13 | 0) * 0.3), n);
        npy(queries, Float32Array.from({ length: nq * d }, (_, e) => (r() - 0.5) * 2 + ((e / d) % 13 | 0) * 0.3), nq);
      }
      const file = path.join(dir, `${residual}.vlc`);
      await compress(input, { output: file, anchors: 256, iters: 8, residual, force: true, ...(residual === 'pq' ? { pq: 16 } : {}) });
      const one = await search(file, queries, { k, device: 'cuda', gpu: 0 });
      for (let count = 2; count <= gpus; count++) {
        const list = Array.from({ length: count }, (_, g) => g);
        const split = await search(file, queries, { k, device: 'cuda', gpu: list });
        expect(Array.from(split.ids), `--gpu ${list.join(',')}`).toEqual(Array.from(one.ids));
        expect(Array.from(new Uint32Array(split.distances.buffer, split.distances.byteOffset, split.distances.length)), `--gpu ${list.join(',')}`).toEqual(
          Array.from(new Uint32Array(one.distances.buffer, one.distances.byteOffset, one.distances.length)),
        );
      }
    }, 600_000);
  }
});
