// GPU suite: a streamed compress on the GPU (api/compress-stream.ts: blocks of rows read where they
// lie, the final pass a block an engine, several engines at once) writes the bytes of the in-memory
// GPU path: one GPU, three engines (on the GPUs present, several on one GPU when there are fewer),
// every GPU present as a --gpu list, over one .npy f16 file and over shards whose edges fall
// inside blocks, int8, int4 and none. Skipped without a GPU.
import * as fs from 'node:fs';
import * as path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { compress } from '../../dist/index.js';
import { setStreamBlockRowsForTests, setStreamMinBytesForTests } from '../../dist/api/compress-stream.js';
import { setShardsForTests } from '../../dist/backend/select.js';
import { probeCuda } from '../../dist/backend/cuda/index.js';
import { f32ToF16 } from '../../dist/vectors/dataset.js';
import { clustered, npyBytes, tempDir } from '../cli/helpers.js';

const probe = probeCuda();
const gpus = probe.ok ? probe.devices.length : 0;

describe.skipIf(!probe.ok)('streamed compress on the GPU = in memory', () => {
  const dir = tempDir('gpu-stream');
  // 4 blocks of 16,384 rows and a short one; f16 as the billion is.
  const n = 4 * 16384 + 101;
  const d = 40;
  const h = new Uint16Array(n * d);
  const x = clustered(n, d, 11, 12);
  for (let i = 0; i < h.length; i++) h[i] = f32ToF16(x[i]);
  const rowBytes = d * 2;
  const npy = path.join(dir, 'x.npy');
  const shards = path.join(dir, 'shards');
  const cuts = [0, 30000, 30001, 50000, n];
  const common = { device: 'cuda' as const, anchors: 64, iters: 10, sample: { rows: 8000 }, seed: 5 };

  beforeAll(() => {
    fs.writeFileSync(npy, npyBytes('<f2', [n, d], new Uint8Array(h.buffer)));
    fs.mkdirSync(shards);
    cuts.slice(0, -1).forEach((c, k) =>
      fs.writeFileSync(path.join(shards, `s-${k}.npy`), npyBytes('<f2', [cuts[k + 1] - c, d], new Uint8Array(h.buffer, c * rowBytes, (cuts[k + 1] - c) * rowBytes))),
    );
    setStreamBlockRowsForTests(16384);
  });
  afterAll(() => {
    setStreamBlockRowsForTests();
    setStreamMinBytesForTests();
    setShardsForTests();
    fs.rmSync(dir, { recursive: true, force: true });
  });

  async function file(input: string, tag: string, stream: boolean, o: Record<string, unknown>): Promise<Buffer> {
    setStreamMinBytesForTests(stream ? 0 : Number.POSITIVE_INFINITY);
    const output = path.join(dir, `${tag}-${stream ? 'stream' : 'memory'}.vlc`);
    let streamed = false;
    const progress = { step: (label: string, unit: string) => ((streamed ||= label.startsWith('reading') && unit === 'vectors'), { update() {}, end() {} }) };
    const stats = await compress(input, { ...common, ...o, output, force: true, progress } as Parameters<typeof compress>[1]);
    expect(streamed).toBe(stream);
    expect(stats.n).toBe(n);
    return fs.readFileSync(output);
  }

  for (const residual of ['int8', 'int4', 'none']) {
    it(`one GPU, ${residual}: the in-memory bytes`, async () => {
      const want = await file(npy, `one-${residual}`, false, { residual, gpu: 0 });
      expect((await file(npy, `one-${residual}`, true, { residual, gpu: 0 })).equals(want)).toBe(true);
    });
  }

  it('three engines (blocks in flight at once), over shards: the in-memory bytes of one GPU', async () => {
    const want = await file(npy, 'three-one', false, { residual: 'int8', gpu: 0 });
    setShardsForTests(3);
    try {
      expect((await file(path.join(shards, 's-*.npy'), 'three', true, { residual: 'int8', gpu: 0 })).equals(want)).toBe(true);
    } finally {
      setShardsForTests();
    }
  });

  it.skipIf(gpus < 2)('every GPU as a --gpu list, over shards: the in-memory bytes of one GPU', async () => {
    const want = await file(npy, 'all-one', false, { residual: 'int8', gpu: 0 });
    const list = Array.from({ length: gpus }, (_, k) => k);
    const got = await file(path.join(shards, 's-*.npy'), 'all', true, { residual: 'int8', gpu: list, allGpus: true });
    expect(got.equals(want)).toBe(true);
    // and the in-memory path on the same GPUs agrees
    expect((await file(path.join(shards, 's-*.npy'), 'all', false, { residual: 'int8', gpu: list, allGpus: true })).equals(want)).toBe(true);
  });
});
