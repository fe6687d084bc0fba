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
import { readVlc } from '../../dist/io/vlc/file.js';
import { openVlcOnDisk, setOnDiskRowsForTests } from '../../dist/io/vlc/on-disk.js';
import { rewritePayload } from '../format/pq-rewrite.js';
import type { Neighbours } from '../../dist/backend/device.js';
import { FakeCuda, type FakeOptions } from './fake-driver.js';
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

describe('codes of a file read where it lies go up from page-locked buffers (backend/cuda/upload-blocks.ts)', () => {
  const rows = 700; // 13 blocks of the 9,001 rows
  const int8File = async () => {
    const file = path.join(dir, 'pinned-int8.vlc');
    if (!fs.existsSync(file)) await compress(input, { output: file, anchors: 24, iters: 4, residual: 'int8', device: 'cpu', force: true });
    return file;
  };
  /** `file` read where it lies (blocks of `rows`) and searched on a fake GPU; `check` sees the fake driver after the search; every device buffer freed. */
  type Backend = Awaited<ReturnType<typeof createCudaBackend>>;
  const searchFromDisk = async (file: string, o: FakeOptions, check: (fake: FakeCuda, search: Promise<Neighbours | undefined>, backend: Backend) => Promise<void>) => {
    const fake = new FakeCuda({ poison: true, ...o });
    setDriverForTests(fake.api);
    const backend = await createCudaBackend(0);
    setOnDiskRowsForTests(rows);
    const opened = openVlcOnDisk(file)!;
    try {
      await check(fake, backend.gpuKnn.knnDecoded(opened.file, n, queries, nq, k), backend);
      expect(fake.pinnedLive).toBe(0);
    } finally {
      opened.close();
      setOnDiskRowsForTests();
      await backend.close();
    }
    expect(fake.live).toBe(0);
  };

  const cases = [
    { what: 'copies run as soon as they can', o: { order: 'copies-first' as const }, pinned: true },
    { what: 'copies run only when waited for (a buffer read into again too early would show)', o: { order: 'kernels-first' as const }, pinned: true },
    { what: 'page-locked memory refused: the blocks go up from pageable memory', o: { hostAllocStatus: 2 }, pinned: false },
  ];
  for (const c of cases) it(`int8, ${c.what}: the result = the file read whole; every buffer freed`, async () => {
    const file = await int8File();
    const whole = await readVlc(file);
    await searchFromDisk(file, c.o, async (fake, search, backend) => {
      const fromDisk = await search;
      // Block 0 is the one the host held for the codec's parameters; the other 12 come through page-locked buffers.
      if (c.pinned) expect(fake.pinnedCopies).toBeGreaterThanOrEqual(Math.ceil(n / rows) - 1);
      else expect(fake.pinnedCopies).toBe(0);
      expect(fake.hostAllocs).toBe(c.pinned ? 3 : 0); // one buffer for each of the three reads in flight
      const fromWhole = await backend.gpuKnn.knnDecoded(whole, n, queries, nq, k);
      expect(Array.from(fromDisk!.ids)).toEqual(Array.from(fromWhole!.ids));
      expect(Array.from(fromDisk!.dists)).toEqual(Array.from(fromWhole!.dists));
    });
  }, 240_000);

  it('a code of -128 in a later block (checksums right) is refused as the whole-file read refuses it; nothing is left on the device', async () => {
    const good = new Uint8Array(fs.readFileSync(await int8File()));
    // Row 5,000's first code: block 7 of 13, read asynchronously.
    const bad = rewritePayload(good, (_, p) => void (p[4 * d + 5_000 * d] = 0x80));
    const file = path.join(dir, 'minus128.vlc');
    fs.writeFileSync(file, bad);
    await expect(readVlc(file)).rejects.toThrow('a code is outside -127..127');
    await searchFromDisk(file, {}, (_, search) => expect(search).rejects.toThrow('a code is outside -127..127'));
  }, 240_000);
});
