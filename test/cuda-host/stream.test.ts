// A streamed compress on the CUDA backend through the fake driver (api/compress-stream.ts: the
// final pass a block an engine, blocks on several engines at once; the sample's engine sharded as
// in memory; each block's residual ranges and codes on the device, cuda/residual-blocks.ts): the
// bytes of the in-memory GPU path, over one file and over shards, int8 and int4, and every device
// allocation freed. The real device runs test/gpu/stream.test.ts.
import * as fs from 'node:fs';
import * as path from 'node:path';
import { afterAll, afterEach, describe, expect, it } from 'vitest';
import { compress } from '../../dist/index.js';
import { setStreamBlockRowsForTests, setStreamMinBytesForTests } from '../../dist/api/compress-stream.js';
import { setDriverForTests } from '../../dist/backend/cuda/driver.js';
import { setShardsForTests } from '../../dist/backend/select.js';
import { setParallelReadForTests } from '../../dist/io/readers/parallel-read.js';
import { clustered, tempDir, writeNpy } from '../cli/helpers.js';
import { FakeCuda } from './fake-driver.js';

const dir = tempDir('cuda-stream');
// Two blocks of 16,384 rows and a short one.
const n = 2 * 16384 + 29, d = 6;
const x = clustered(n, d, 2, 5);
const npy = writeNpy(path.join(dir, 'x.npy'), x, n, d);
const cuts = [0, 10000, 20000, n];
fs.mkdirSync(path.join(dir, 'shards'));
cuts.slice(0, -1).forEach((c, k) => writeNpy(path.join(dir, 'shards', `p${k}.npy`), x.subarray(c * d, cuts[k + 1] * d), cuts[k + 1] - c, d));

afterEach(() => {
  setDriverForTests(undefined);
  setShardsForTests();
  setStreamMinBytesForTests();
  setStreamBlockRowsForTests();
  setParallelReadForTests();
});
afterAll(() => fs.rmSync(dir, { recursive: true, force: true }));

async function fileOn(fake: FakeCuda, input: string, tag: string, stream: boolean, residual = 'int8'): Promise<Buffer> {
  setDriverForTests(fake.api);
  setStreamBlockRowsForTests(16384);
  setStreamMinBytesForTests(stream ? 0 : Number.POSITIVE_INFINITY);
  const output = path.join(dir, `${tag}.vlc`);
  let streamed = false;
  const progress = { step: (label: string, unit: string) => ((streamed ||= label.startsWith('reading') && unit === 'vectors'), { update() {}, end() {} }) };
  const stats = await compress(input, { device: 'cuda', anchors: 4, iters: 6, sample: { rows: 400 }, seed: 5, residual, output, progress } as Parameters<typeof compress>[1]);
  expect([streamed, stats.device, stats.n]).toEqual([stream, 'cuda', n]);
  return fs.readFileSync(output);
}

describe('streamed compress on the GPU (fake driver)', () => {
  it('one engine a block, then three at once over shards read on threads: the in-memory bytes, everything freed', async () => {
    const want = await fileOn(new FakeCuda(), npy, 'memory', false);
    const one = new FakeCuda();
    expect((await fileOn(one, npy, 'one', true)).equals(want)).toBe(true);
    expect(one.live).toBe(0);
    // Each of the 3 blocks' ranges (final pass) and codes (last pass) on the device.
    const runs = (prefix: string) => [...one.runs].reduce((t, [name, k]) => t + (name.startsWith(prefix) ? k : 0), 0);
    expect([runs('residual_ranges'), runs('residual_rows'), runs('crc_slices')]).toEqual([3, 3, 3]);
    setShardsForTests(3);
    setParallelReadForTests(0, 64 << 10); // and every block read and checked on threads, as a GPU's blocks of millions of rows are
    const three = new FakeCuda();
    expect((await fileOn(three, path.join(dir, 'shards', 'p*.npy'), 'three', true)).equals(want)).toBe(true);
    expect(three.live).toBe(0);
  }, 300_000);

  it('int4: the blocks coded on the device, packed on the host: the in-memory bytes', async () => {
    const want = await fileOn(new FakeCuda(), npy, 'memory4', false, 'int4');
    const fake = new FakeCuda();
    expect((await fileOn(fake, npy, 'stream4', true, 'int4')).equals(want)).toBe(true);
    expect(fake.live).toBe(0);
  }, 300_000);
});
