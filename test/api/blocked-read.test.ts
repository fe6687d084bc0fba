// info, search (exhaustive, CPU) and eval of a .vlc read where it lies — its codes a block of rows
// at a time (io/vlc/on-disk.ts), the original vectors of eval read from their .npy a block at a
// time (quality/originals.ts) — give what the whole-file reads give, bit for bit: every codec,
// every metric, odd sizes, blocks shrunk so that every pass crosses many of them.
import * as path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { clustered, tempDir, writeNpy } from '../cli/helpers.js';
import { compress, evaluate, info, openVlc, readVectors, search } from '../../dist/index.js';
import { setOnDiskRowsForTests, openVlcOnDisk, BlockedResiduals } from '../../dist/io/vlc/on-disk.js';
import { setReadFloatsForTests } from '../../dist/quality/originals.js';
import { reconstructRange } from '../../dist/io/vlc/reconstruct.js';
import { readVlc } from '../../dist/io/vlc/file.js';
import { searchCompressed, setBlockScanQueriesForTests, vlcSearchIndex } from '../../dist/search/index.js';
import { cpuKnn } from '../../dist/backend/cpu/index.js';
import { rowsF32 } from '../../dist/vectors/dataset.js';

const dir = tempDir('blocked-read');
const n = 1337, d = 13, nq = 23, k = 7;
const input = path.join(dir, 'x.npy');
const queriesPath = path.join(dir, 'q.npy');
const codecs = ['none', 'int8', 'int4', 'bits', 'pq', 'ec'] as const;
const metrics = ['l2', 'ip', 'cosine'] as const;
const fileOf = (codec: string, metric: string) => path.join(dir, `x-${codec}-${metric}.vlc`);

beforeAll(async () => {
  writeNpy(input, clustered(n, d, 3, 6), n, d);
  writeNpy(queriesPath, clustered(nq, d, 9, 5), nq, d);
  for (const residual of codecs)
    for (const metric of metrics)
      await compress(input, { output: fileOf(residual, metric), anchors: 9, iters: 6, residual, metric, device: 'cpu', ...(residual === 'pq' ? { pq: 5 } : {}) });
  setOnDiskRowsForTests(50); // ec: its own blocks (4096 rows) are one block here
  setReadFloatsForTests(41 * d);
}, 600_000);
afterAll(() => {
  setOnDiskRowsForTests();
  setReadFloatsForTests();
});

describe.each(codecs)('%s', (codec) => {
  it.each(metrics)('%s: search --exhaustive on the CPU from disk = from the file read whole', async (metric) => {
    const file = fileOf(codec, metric);
    const fromDisk = await search(file, queriesPath, { k, exhaustive: true, device: 'cpu' });
    const whole = await search(await openVlc(file), queriesPath, { k, exhaustive: true, device: 'cpu' });
    expect(fromDisk.nprobe).toBeNull();
    expect(fromDisk.metric).toBe(metric);
    expect(Array.from(fromDisk.ids)).toEqual(Array.from(whole.ids));
    expect(Array.from(fromDisk.distances)).toEqual(Array.from(whole.distances));
    expect(fromDisk.ids.every((id) => id >= 0 && id < n)).toBe(true);
  });

  it.each(metrics)('%s: the index search from disk (rows in blocks, block-scan.ts) = from the file read whole, at every nprobe', async (metric) => {
    const file = fileOf(codec, metric);
    for (const nprobe of [undefined, 1, 4, 9]) {
      const fromDisk = await search(file, queriesPath, { k, nprobe, device: 'cpu' });
      const whole = await search(await openVlc(file), queriesPath, { k, nprobe, device: 'cpu' });
      expect(fromDisk.nprobe).toBe(whole.nprobe);
      expect(Array.from(fromDisk.ids)).toEqual(Array.from(whole.ids));
      expect(Array.from(fromDisk.distances)).toEqual(Array.from(whole.distances));
      expect(fromDisk.ids.every((id) => id >= 0 && id < n)).toBe(true);
    }
  });

  it.each(metrics)('%s: eval --nprobe from disk = from both read whole (the queries in passes of 7)', async (metric) => {
    const file = fileOf(codec, metric);
    setBlockScanQueriesForTests(7);
    let disk;
    try {
      disk = await evaluate(input, file, { device: 'cpu', queries: 60, seed: 3, nprobe: 2 });
    } finally {
      setBlockScanQueriesForTests();
    }
    const { seconds: _a, ...fromDisk } = disk;
    const { seconds: _b, ...whole } = await evaluate(await readVectors(input), await openVlc(file), { device: 'cpu', queries: 60, seed: 3, nprobe: 2 });
    expect(fromDisk).toEqual(whole);
    expect(fromDisk.search!.recall_at_10).toBeGreaterThan(0);
  });

  it.each(metrics)('%s: eval from disk (vlc and .npy in blocks) = from both read whole', async (metric) => {
    const file = fileOf(codec, metric);
    const { seconds: _a, ...fromDisk } = await evaluate(input, file, { device: 'cpu', queries: 60, seed: 3 });
    const { seconds: _b, ...whole } = await evaluate(await readVectors(input), await openVlc(file), { device: 'cpu', queries: 60, seed: 3 });
    expect(fromDisk).toEqual(whole);
    expect(fromDisk.recall_at_10).toBeGreaterThan(0);
  });

  it('the index search from disk reads each block of rows once (pq: its section whole)', async () => {
    const opened = openVlcOnDisk(fileOf(codec, 'l2'))!;
    try {
      const queries = await readVectors(queriesPath);
      const index = vlcSearchIndex(opened.file);
      const got = await searchCompressed(index, rowsF32(queries, 0, nq), nq, { k, nprobe: 9 }, cpuKnn);
      const want = await searchCompressed(vlcSearchIndex(await openVlc(fileOf(codec, 'l2'))), rowsF32(queries, 0, nq), nq, { k, nprobe: 9 }, cpuKnn);
      expect(Array.from(got.ids)).toEqual(Array.from(want.ids));
      const r = opened.file.residuals as InstanceType<typeof BlockedResiduals> | undefined;
      if (codec === 'none') expect(r).toBeUndefined();
      else if (codec === 'pq') expect(index.blocks).toBeUndefined();
      else {
        expect(index.blocks).toBeDefined();
        expect(r!.reads).toBe(codec === 'ec' ? 1 : Math.ceil(n / 50)); // nprobe 9 = every anchor: every block, once
      }
    } finally {
      opened.close();
    }
  });

  it('info from disk = from the file read whole, and reads no block past the first', async () => {
    const file = fileOf(codec, 'l2');
    expect(await info(file)).toEqual(await info(await openVlc(file)));
    const opened = openVlcOnDisk(file)!;
    try {
      const r = opened.file.residuals;
      if (codec === 'none') expect(r).toBeUndefined();
      else {
        expect(r).toBeInstanceOf(BlockedResiduals);
        const blocked = r as InstanceType<typeof BlockedResiduals>;
        expect(blocked.reads).toBe(0); // opening reads no codes
        // Decoding every row in order reads each block once: many blocks of 50 rows, one ec block.
        const whole = await openVlc(file);
        const out = new Float32Array(n * d);
        reconstructRange(opened.file, 0, n, out);
        expect(blocked.reads).toBe(codec === 'ec' ? 1 : Math.ceil(n / 50));
        expect(Array.from(out)).toEqual(Array.from(whole.rows(0, n)));
      }
    } finally {
      opened.close();
    }
  });
});

describe('the index search from disk when queries run short of k in their first ranking (ranked again against every anchor)', () => {
  const many = path.join(dir, 'x-many-anchors.vlc');
  it.each(['int8', 'bits', 'ec'] as const)('%s', async (residual) => {
    await compress(input, { output: many, anchors: 64, iters: 6, residual, device: 'cpu', force: true });
    const kk = 700; // more than the first ranking's 32 anchors hold for some queries:
    const index = vlcSearchIndex(await readVlc(many));
    const qs = rowsF32(await readVectors(queriesPath), 0, nq);
    const first = await cpuKnn.knn(index.anchors, index.m, qs, nq, d, 32);
    const held = (q: number) => Array.from(first.ids.subarray(q * 32, (q + 1) * 32)).reduce((s, j) => s + index.lists.start[j + 1] - index.lists.start[j], 0);
    expect(Array.from({ length: nq }, (_, q) => held(q)).some((h) => h < kk)).toBe(true);
    const fromDisk = await search(many, queriesPath, { k: kk, nprobe: 2, device: 'cpu' });
    const whole = await search(await openVlc(many), queriesPath, { k: kk, nprobe: 2, device: 'cpu' });
    expect(Array.from(fromDisk.ids)).toEqual(Array.from(whole.ids));
    expect(Array.from(fromDisk.distances)).toEqual(Array.from(whole.distances));
    expect(fromDisk.ids.every((id) => id >= 0 && id < n)).toBe(true);
    const evalDisk = await evaluate(input, many, { device: 'cpu', queries: 40, seed: 5, nprobe: 1 });
    const evalWhole = await evaluate(await readVectors(input), await openVlc(many), { device: 'cpu', queries: 40, seed: 5, nprobe: 1 });
    expect({ ...evalDisk, seconds: 0 }).toEqual({ ...evalWhole, seconds: 0 });
  });
});
