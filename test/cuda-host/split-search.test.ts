// The exhaustive search over decoded vectors split over several GPUs (backend/cuda/split-knn.ts,
// `vlc search --gpu 0,1`) on the fake driver: 2 and 3 GPUs give one GPU's ids and distances bit for
// bit, for files of every codec (none, int8, int4, bits, pq, ec) held in memory and read where they
// lie (blocked), the k-NN's pieces small so that range boundaries fall inside one GPU's pieces;
// the ranges are cut at the file's blocks, each GPU holds only its range's codes, every device
// allocation is freed; a GPU without room falls back for its range alone; the CLI takes a list.
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { afterAll, afterEach, describe, expect, it, vi } from 'vitest';
import { compress, search, UsageError } from '../../dist/index.js';
import { setDriverForTests } from '../../dist/backend/cuda/driver.js';
import { createCudaBackend, type CudaBackend } from '../../dist/backend/cuda/index.js';
import { splitKnn } from '../../dist/backend/cuda/split-knn.js';
import { knn as cpuKnn } from '../../dist/backend/cpu/knn.js';
import { readVlc } from '../../dist/io/vlc/file.js';
import { openVlcOnDisk, setOnDiskRowsForTests } from '../../dist/io/vlc/on-disk.js';
import { reconstruct, reconstructRange } from '../../dist/io/vlc/reconstruct.js';
import { rowCuts, rowRange } from '../../dist/io/vlc/row-range.js';
import { npyHeader } from '../../dist/io/writers/npy.js';
import type { Neighbours } from '../../dist/backend/types.js';
import { log } from '../../dist/log.js';
import { FakeCuda } from './fake-driver.js';
import { damagedEc, ecProblem } from './ec-problem.js';
import { runVlc } from './in-process.js';
import { expectSameNeighbours } from './knn-problem.js';

const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'vlc-split-search-'));
afterAll(() => fs.rmSync(dir, { recursive: true, force: true }));
afterEach(() => {
  setDriverForTests(undefined);
  setOnDiskRowsForTests();
  vi.restoreAllMocks();
});

// ec: more rows than two of its blocks (4096), so that three GPUs get a block each.
const n = 9001, d = 9, nq = 19, k = 7;
const npy = (file: string, x: Float32Array, rows: number) => fs.writeFileSync(file, Buffer.concat([Buffer.from(npyHeader('<f4', [rows, d])), Buffer.from(x.buffer)]));
const input = path.join(dir, 'x.npy'), queriesFile = path.join(dir, 'q.npy');
const x = new Float32Array(n * d).map((_, e) => Math.sin(e * 0.71) * 1.5 + ((e / d) % 11 | 0) * 0.4);
// Every 5th query is a stored row's neighbourhood exactly: ties among copies of one anchor (residual none).
const queries = new Float32Array(nq * d).map((_, e) => Math.cos(e * 0.37) * 1.5 + ((e / d) % 7 | 0) * 0.5);
npy(input, x, n);
npy(queriesFile, queries, nq);
const device = { name: 'Fake GPU 80GB', cc: [9, 0] as [number, number], sms: 4, memBytes: 80 * 2 ** 30 };
// The k-NN's device bytes at most: pieces of a few thousand rows, so ranges' edges fall inside one GPU's pieces.
const PIECE_BYTES = 130_000;

async function openGpus(count: number, o: { maxDeviceBytes?: number[] } = {}): Promise<CudaBackend[]> {
  const out: CudaBackend[] = [];
  for (let g = 0; g < count; g++) out.push(await createCudaBackend(g, { maxDeviceBytes: o.maxDeviceBytes?.[g] ?? PIECE_BYTES }));
  return out;
}

function expectBitsEqual(got: Neighbours, want: Neighbours, what: string): void {
  expect(Array.from(got.ids), what).toEqual(Array.from(want.ids));
  expect(Array.from(new Uint32Array(got.dists.buffer, got.dists.byteOffset, got.dists.length)), what).toEqual(
    Array.from(new Uint32Array(want.dists.buffer, want.dists.byteOffset, want.dists.length)),
  );
}

const residuals = ['none', 'int8', 'int4', 'bits', 'pq', 'ec'] as const;

/** The input compressed with `residual` on the CPU (once: each test may run alone). */
async function vlcOf(residual: (typeof residuals)[number]): Promise<string> {
  const file = path.join(dir, `${residual}.vlc`);
  if (!fs.existsSync(file)) await compress(input, { output: file, anchors: 24, iters: 4, residual, device: 'cpu', ...(residual === 'pq' ? { pq: 3 } : {}) });
  return file;
}

describe('exhaustive search split over several GPUs (fake driver): one GPU\'s results', () => {
  for (const residual of residuals) {
    it(`--residual ${residual}: 2 and 3 GPUs = 1, in memory and read where it lies`, async () => {
      const file = await vlcOf(residual);
      const whole = await readVlc(file);
      const fake = new FakeCuda({ poison: true, devices: [device, device, device] });
      setDriverForTests(fake.api);
      setOnDiskRowsForTests(700);
      const onDisk = openVlcOnDisk(file)!;
      const gpus = await openGpus(3);
      try {
        const scans = fake.launches.length;
        const one = (await gpus[0].exactKnn.knnDecoded(whole, n, queries, nq, k))!;
        // Ranked on the GPU in pieces of fewer rows than any range: the ranges' edges lie inside one GPU's pieces.
        expect(fake.launches.slice(scans).filter((l) => l === 'knn_scan').length).toBeGreaterThanOrEqual(5);
        // One GPU is the host's ranking of the reconstructions (test/cuda-host/search-gpu.test.ts holds it so too).
        expectSameNeighbours(one, await cpuKnn(reconstruct(whole), n, queries, nq, d, k + 1), nq, k, 1e-5, k + 1);
        for (const [name, f] of [['in memory', whole], ['read where it lies', onDisk.file]] as const) {
          for (const count of [2, 3]) {
            const allocs = gpus.map((b) => vi.spyOn(b.ctx.pool, 'alloc'));
            const heard: number[] = [];
            const got = await splitKnn(gpus.slice(0, count)).knnDecoded(f, n, queries, nq, k, (done, total) => {
              expect(total).toBe(n);
              heard.push(done);
            });
            expectBitsEqual(got!, one, `${name}, ${count} GPUs`);
            // Progress counts rows over every GPU, up to all n.
            expect(heard.every((v, i) => i === 0 || v > heard[i - 1])).toBe(true);
            expect(heard[heard.length - 1]).toBe(n);
            // Each GPU took its range's assignments (u32) alone, cut at the file's blocks.
            const cuts = rowCuts(f, n, count);
            expect(cuts.length).toBe(count);
            cuts.forEach(([a, b], g) => {
              const assigned = allocs[g].mock.calls.filter(([what]) => what === 'decode assignments').map(([, bytes]) => bytes);
              expect(assigned, `GPU ${g}`).toEqual([(b - a) * 4]);
            });
            allocs.forEach((s) => s.mockRestore());
          }
        }
      } finally {
        onDisk.close();
        await Promise.all(gpus.map((b) => b.close()));
      }
      expect(fake.live).toBe(0);
    }, 240_000);
  }

  it('ranges are cut only between the file\'s blocks, balanced by rows', async () => {
    const whole = await readVlc(await vlcOf('ec'));
    expect(rowCuts(whole, n, 3)).toEqual([[0, 4096], [4096, 8192], [8192, n]]);
    expect(rowCuts(whole, n, 4)).toEqual([[0, 4096], [4096, 8192], [8192, n]]); // 3 blocks: one GPU idle
    const int8 = await readVlc(await vlcOf('int8'));
    expect(rowCuts(int8, n, 2)).toEqual([[0, 4501], [4501, n]]);
    setOnDiskRowsForTests(700);
    const onDisk = openVlcOnDisk(await vlcOf('int8'))!;
    try {
      expect(rowCuts(onDisk.file, n, 3)).toEqual([[0, 2800], [2800, 6300], [6300, n]]);
    } finally {
      onDisk.close();
    }
  });

  it('a range of rows decoded on the host (what a GPU without room falls back to) = those rows of the file', async () => {
    setOnDiskRowsForTests(700);
    for (const residual of residuals) {
      const file = await vlcOf(residual);
      const whole = await readVlc(file);
      const onDisk = openVlcOnDisk(file)!;
      try {
        for (const f of [whole, onDisk.file]) {
          for (const [a, b] of [[2800, 6300], [4096, n], [0, 701]]) {
            const want = reconstructRange(whole, a, b, new Float32Array((b - a) * d));
            // A view of a view: rows 1 .. of rows a - 1 .. b.
            const view = rowRange(rowRange(f, a - (a > 0 ? 1 : 0), b), a > 0 ? 1 : 0, b - a + (a > 0 ? 1 : 0));
            const got = reconstructRange(view, 0, b - a, new Float32Array((b - a) * d));
            expect(Array.from(new Uint32Array(got.buffer)), `${residual} rows ${a}..${b}`).toEqual(Array.from(new Uint32Array(want.buffer)));
          }
        }
      } finally {
        onDisk.close();
      }
    }
  }, 120_000);

  it('a GPU without room for the k-NN: its range alone decoded on the host; the same neighbours', async () => {
    const file = await vlcOf('int8');
    const whole = await readVlc(file);
    const fake = new FakeCuda({ devices: [device, device] });
    setDriverForTests(fake.api);
    const gpus = await openGpus(2, { maxDeviceBytes: [PIECE_BYTES, 1000] });
    try {
      const one = (await gpus[0].exactKnn.knnDecoded(whole, n, queries, nq, k))!;
      const debug = vi.spyOn(log(), 'debug');
      const got = (await splitKnn(gpus).knnDecoded(whole, n, queries, nq, k))!;
      // -v says how the rows were split, and which range was decoded on the host.
      const said = debug.mock.calls.map((c) => String(c[c.length - 1]));
      expect(said).toContain('searching rows 0..4500 on cuda:0, rows 4501..9000 on cuda:1');
      expect(said.some((l) => l.startsWith('rows 4501..9000: decoded on the host (no room on cuda:1'))).toBe(true);
      // Ranked by the CPU's k-NN there, which sums the terms in its own order: the last bits may differ.
      expectSameNeighbours(got, one, nq, k);
    } finally {
      await Promise.all(gpus.map((b) => b.close()));
    }
    expect(fake.live).toBe(0);
  }, 120_000);

  it('a failure on one GPU (an upload, a kernel): the first error, every GPU\'s buffers freed', async () => {
    const whole = await readVlc(await vlcOf('int8'));
    for (const failing of ['upload', 'kernel'] as const) {
      const fake = new FakeCuda({ devices: [device, device, device], ...(failing === 'kernel' ? { failKernel: { name: 'knn_merge', status: 719 } } : {}) });
      setDriverForTests(fake.api);
      const gpus = await openGpus(3);
      try {
        if (failing === 'upload') vi.spyOn(gpus[1].gpuKnn, 'decodedRows').mockImplementation(() => {
          throw new Error('no room for the codes');
        });
        const before = fake.live;
        await expect(splitKnn(gpus).knnDecoded(whole, n, queries, nq, k)).rejects.toThrow(failing === 'upload' ? 'no room for the codes' : /knn_merge|launch failure/);
        expect(fake.live, failing).toBe(before);
      } finally {
        await Promise.all(gpus.map((b) => b.close()));
      }
      expect(fake.live).toBe(0);
    }
  }, 120_000);

  it('an ec block the device finds damaged: an error naming the file\'s block, on one GPU and on the GPU of its range', async () => {
    const file = damagedEc(await ecProblem('axis', 600, 11, 5, 9, { blockRows: 200 }), 2);
    const qs = new Float32Array(3 * 11).map((_, e) => Math.sin(e));
    const fake = new FakeCuda({ devices: [device, device] });
    setDriverForTests(fake.api);
    const gpus = await openGpus(2);
    try {
      expect(rowCuts(file, 600, 2)).toEqual([[0, 400], [400, 600]]); // block 2 is the second GPU's first
      await expect(gpus[0].gpuKnn.knnDecoded(file, 600, qs, 3, 4)).rejects.toThrow(/block 2 did not decode/);
      await expect(splitKnn(gpus).knnDecoded(file, 600, qs, 3, 4)).rejects.toThrow(/block 2 did not decode/);
    } finally {
      await Promise.all(gpus.map((b) => b.close()));
    }
    expect(fake.live).toBe(0);
  });

  it('vlc search --gpu 0,1 and 2,0,1: --gpu 0\'s output; a missing GPU: exit 2, one line', async () => {
    const file = await vlcOf('int4');
    const fake = new FakeCuda({ devices: [device, device, device] });
    setDriverForTests(fake.api);
    const args = ['search', file, '--queries', queriesFile, '-k', String(k), '--device', 'cuda', '--json'];
    const one = await runVlc(...args, '--gpu', '0');
    expect(one.code, one.err).toBe(0);
    for (const list of ['0,1', '2,0,1']) {
      const r = await runVlc(...args, '--gpu', list);
      expect(r.code, r.err).toBe(0);
      expect(r.out).toBe(one.out);
    }
    expect(fake.live).toBe(0);
    const bad = await runVlc(...args, '--gpu', '0,5');
    expect(bad.code).toBe(2);
    expect(bad.err.trim().split('\n'), bad.err).toHaveLength(1);
    expect(bad.err).toContain('--gpu 5: no such GPU');
    // The library's list: empty, or a GPU twice, is a usage error too.
    for (const gpu of [[], [1, 1]]) await expect(search(file, queriesFile, { k, device: 'cuda', gpu })).rejects.toThrow(UsageError);
    expect(fake.live).toBe(0);
  }, 120_000);
});
