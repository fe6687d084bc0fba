// The real compress command, sharded: the same .vlc bytes from one engine as from 2 or 3 engines
// each holding a part of the rows (1001 rows: splits of 500/501 and 333/334/334, which cut the
// k-means++ blocks of 256 rows anywhere). CUDA over a fake driver exposing three GPUs; the CPU
// backend. The sharding comes from select.ts's test hook (until --gpu takes a list).
import { afterEach, beforeAll, describe, expect, it } from 'vitest';
import { mkdtempSync, readFileSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { setDriverForTests } from '../../dist/backend/cuda/driver.js';
import { setShardsForTests } from '../../dist/backend/select.js';
import { npyHeader } from '../../dist/io/writers/npy.js';
import { FakeCuda } from '../cuda-host/fake-driver.js';
import { runVlc } from '../cuda-host/in-process.js';

let dir: string;
let input: string;

beforeAll(() => {
  dir = mkdtempSync(join(tmpdir(), 'vlc-sharded-'));
  input = join(dir, 'in.npy');
  const n = 1001, d = 8;
  const body = new Float32Array(n * d).map((_, e) => Math.sin(e * 0.37) * 2 + ((e / d) % 6 | 0) * 1.3);
  writeFileSync(input, Buffer.concat([Buffer.from(npyHeader('<f4', [n, d])), Buffer.from(body.buffer)]));
});

afterEach(() => {
  setShardsForTests(1);
  setDriverForTests(undefined);
});

const threeGpus = () =>
  new FakeCuda({ devices: [0, 1, 2].map((k) => ({ name: `Fake GPU ${k}`, cc: [9, 0] as [number, number], sms: 4, memBytes: 80 * 2 ** 30 })) });

async function compress(device: 'cuda' | 'cpu', shards: number, extra: string[]): Promise<Buffer> {
  const fake = threeGpus();
  setDriverForTests(fake.api);
  setShardsForTests(shards);
  const out = join(dir, `${device}-${shards}.vlc`);
  const r = await runVlc('compress', input, '-o', out, '--device', device, '--anchors', '6', '--seed', '5', '--iters', '60', '-q', ...extra);
  expect(r.code, r.err).toBe(0);
  if (device === 'cuda') {
    expect(fake.launches.filter((k) => k === 'max_abs_f32').length, 'one engine per shard').toBe(shards);
    expect(fake.live).toBe(0);
  }
  return readFileSync(out);
}

describe('compress sharded = compress on one engine, byte for byte', () => {
  for (const device of ['cuda', 'cpu'] as const) {
    it(`${device}: N = 1, 2, 3 (with int8 residuals)`, async () => {
      const one = await compress(device, 1, ['--residual', 'int8']);
      for (const n of [2, 3]) expect((await compress(device, n, ['--residual', 'int8'])).equals(one), `${n} shards`).toBe(true);
    });
  }
});
