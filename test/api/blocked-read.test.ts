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

  it.each(metrics)('%s: eval from disk (vlc and .npy in blocks) = from both read whole', async (metric) => {
    const file = fileOf(codec, metric);
    const { seconds: _a, ...fromDisk } = await evaluate(input, file, { device: 'cpu', queries: 60, seed: 3 });
    const { seconds: _b, ...whole } = await evaluate(await readVectors(input), await openVlc(file), { device: 'cpu', queries: 60, seed: 3 });
    expect(fromDisk).toEqual(whole);
    expect(fromDisk.recall_at_10).toBeGreaterThan(0);
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
