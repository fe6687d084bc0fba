// The GPU's k-NN over decoded vectors (CudaKnn.knnDecoded, backend/cuda/decode.ts) from a .vlc
// read where it lies (io/vlc/on-disk.ts): the codes go up a block of rows at a time — each block
// read once — and ec's blocks go up as bytes, decoded on the device alone (no block decoded on the
// host); the results are those of the file read whole, bit for bit, and the CPU's ranking of the
// host's reconstructions. Fake driver; the GPU suite runs the kernels themselves (test/gpu/decode.test.ts).
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { afterAll, afterEach, describe, expect, it } from 'vitest';
import { compress } from '../../dist/index.js';
import { setDriverForTests } from '../../dist/backend/cuda/driver.js';
import { createCudaBackend } from '../../dist/backend/cuda/index.js';
import { npyHeader } from '../../dist/io/writers/npy.js';
import { FakeCuda } from './fake-driver.js';
import { expectOnDiskKnnEqualsWhole } from './on-disk-problem.js';

const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'vlc-decode-on-disk-'));
afterAll(() => fs.rmSync(dir, { recursive: true, force: true }));
afterEach(() => setDriverForTests(undefined));

// ec: more rows than one of its blocks (4096), so that its section has several.
const n = 9001, d = 8, nq = 19, k = 6;
const input = path.join(dir, 'x.npy');
const x = new Float32Array(n * d).map((_, e) => Math.sin(e * 0.71) * 1.5 + ((e / d) % 11 | 0) * 0.4);
const queries = new Float32Array(nq * d).map((_, e) => Math.cos(e * 0.37) * 1.5 + ((e / d) % 7 | 0) * 0.5);
fs.writeFileSync(input, Buffer.concat([Buffer.from(npyHeader('<f4', [n, d])), Buffer.from(x.buffer)]));

describe('the k-NN over a base decoded on the GPU (fake driver), from a file read where it lies', () => {
  for (const residual of ['int8', 'int4', 'pq', 'bits', 'ec'] as const) {
    it(`--residual ${residual}: = the file read whole, ${residual === 'ec' ? 'its blocks uploaded as coded, none decoded on the host' : 'each block read once'}`, async () => {
      const file = path.join(dir, `${residual}.vlc`);
      await compress(input, { output: file, anchors: 24, iters: 4, residual, device: 'cpu', force: true, ...(residual === 'pq' ? { pq: 4 } : {}) });
      const fake = new FakeCuda({ poison: true });
      setDriverForTests(fake.api);
      const backend = await createCudaBackend(0);
      try {
        await expectOnDiskKnnEqualsWhole(backend.gpuKnn, file, residual === 'ec', queries, nq, k, 700);
      } finally {
        await backend.close();
      }
      expect(fake.launches).toContain(residual === 'pq' ? 'decode_pq' : residual === 'ec' ? 'ec_decode' : residual === 'bits' ? 'decode_bits' : 'decode_scalar');
      expect(fake.live).toBe(0);
    }, 240_000);
  }
});
