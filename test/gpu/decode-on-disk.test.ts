// On a real GPU: the k-NN over a base decoded on the device from a .vlc read where it lies
// (backend/cuda/decode.ts over io/vlc/on-disk.ts: the codes up a block of rows at a time, ec's
// blocks as bytes decoded on the device alone) = the file read whole, bit for bit, and the CPU's
// ranking of the host's reconstructions (test/cuda-host/on-disk-problem.ts). Skipped without a GPU.
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { afterAll, describe, it } from 'vitest';
import { compress } from '../../dist/index.js';
import { createCudaBackend, probeCuda } from '../../dist/backend/cuda/index.js';
import { npyHeader } from '../../dist/io/writers/npy.js';
import { rng } from '../rng.js';
import { expectOnDiskKnnEqualsWhole } from '../cuda-host/on-disk-problem.js';

const hasGpu = probeCuda().ok;
const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'vlc-gpu-decode-on-disk-'));
afterAll(() => fs.rmSync(dir, { recursive: true, force: true }));

const n = 60_013, d = 33, nq = 211, k = 10;
const r = rng(17);
const x = Float32Array.from({ length: n * d }, (_, e) => (r() - 0.5) * 2 + ((e / d) % 13 | 0) * 0.3);
const queries = Float32Array.from({ length: nq * d }, (_, e) => (r() - 0.5) * 2 + ((e / d) % 13 | 0) * 0.3);
const input = path.join(dir, 'x.npy');

describe.skipIf(!hasGpu)('the k-NN over the device decode of a file read where it lies = the file read whole', () => {
  for (const residual of ['int8', 'int4', 'pq', 'bits', 'ec'] as const) {
    it(`--residual ${residual}: n 60,013, d 33, blocks of 7,001 rows`, async () => {
      if (!fs.existsSync(input)) fs.writeFileSync(input, Buffer.concat([Buffer.from(npyHeader('<f4', [n, d])), Buffer.from(x.buffer)]));
      const file = path.join(dir, `${residual}.vlc`);
      await compress(input, { output: file, anchors: 64, iters: 8, residual, force: true });
      const backend = await createCudaBackend(0);
      try {
        await expectOnDiskKnnEqualsWhole(backend.gpuKnn, file, residual === 'ec', queries, nq, k, 7001);
      } finally {
        await backend.close();
      }
    }, 300_000);
  }
});
