// The real compress command, sharded: the same .vlc bytes from one engine as from 2 or 3 engines
// each holding a part of the rows (1001 rows: splits of 500/501 and 333/334/334, which cut the
// k-means++ blocks of 256 rows anywhere). CUDA over a fake driver exposing three GPUs; the CPU
// backend. The sharding comes from select.ts's test hook, and from --gpu 0,1 (below).
import fs from 'node:fs';
import { syncBuiltinESMExports } from 'node:module';
import { afterEach, beforeAll, describe, expect, it } from 'vitest';
import { mkdtempSync, readFileSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { setDriverForTests } from '../../dist/backend/cuda/driver.js';
import { setShardsForTests } from '../../dist/backend/select.js';
import { npyHeader } from '../../dist/io/writers/npy.js';
import { engineBytes } from '../../dist/backend/cuda/plan.js';
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

/** vlc's log lines (fd 2) from now until stop(): test/setup/quiet.ts keeps them off the output. */
function logLines() {
  const lines: string[] = [];
  const write = fs.writeSync;
  fs.writeSync = ((fd: number, data: unknown, ...rest: unknown[]) => {
    if (fd === 2 && typeof data === 'string') lines.push(data);
    return (write as (...a: unknown[]) => number)(fd, data, ...rest);
  }) as typeof fs.writeSync;
  syncBuiltinESMExports();
  return { lines, stop: () => ((fs.writeSync = write), syncBuiltinESMExports()) };
}

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

describe('--gpu 0,1: the rows split over the GPUs listed, one CUDA context each', () => {
  async function onGpus(gpu: string, extra: string[] = [], from = input) {
    const fake = threeGpus();
    setDriverForTests(fake.api);
    const out = join(dir, `gpus-${gpu.replace(/,/g, '-')}-${extra.join('')}${process.env.VLC_CUDA_MAX_BYTES ? '-streamed' : ''}.vlc`);
    const r = await runVlc('compress', from, '-o', out, '--device', 'cuda', '--gpu', gpu, '--anchors', '6', '--seed', '5', '--iters', '60', '-q', '--json', '-f', '--all-gpus', ...extra);
    return { r, fake, out };
  }

  it('without --all-gpus, work this small runs on the first GPU listed, says so, and writes the same bytes; a GPU that does not exist is still an error', async () => {
    const all = await onGpus('0,1');
    const fake = threeGpus();
    setDriverForTests(fake.api);
    const out = join(dir, 'gpus-fewer.vlc');
    const said = logLines();
    const r = await runVlc('compress', input, '-o', out, '--device', 'cuda', '--gpu', '2,0', '--anchors', '6', '--seed', '5', '--iters', '60', '--json', '-f');
    said.stop();
    expect(r.code, r.err).toBe(0);
    expect(said.lines.join('')).toMatch(/using GPU 2 of --gpu 2,0: at 1,001 x 8 with 6 anchors more GPUs cost more than they save \(predicted .* s of training on 1, .* s on 2; the same file either way\); --all-gpus uses them all/);
    expect(JSON.parse(r.out).device_label).not.toMatch(/shards/);
    expect(readFileSync(out).equals(readFileSync(all.out))).toBe(true);
    setDriverForTests(threeGpus().api);
    const bad = await runVlc('compress', input, '-o', join(dir, 'gpus-bad.vlc'), '--device', 'cuda', '--gpu', '0,7', '--anchors', '6', '-q');
    expect(bad.code).toBe(2);
    expect(bad.err).toMatch(/--gpu 7: no such GPU/);
  });

  it('gives the bytes of one GPU, with --sample and with the final pass streamed (VLC_CUDA_MAX_BYTES)', async () => {
    for (const extra of [[], ['--sample', '400']]) {
      const one = await onGpus('0', extra);
      expect(one.r.code, one.r.err).toBe(0);
      for (const gpus of ['0,1', '2,0,1']) {
        const many = await onGpus(gpus, extra);
        expect(many.r.code, many.r.err).toBe(0);
        expect(JSON.parse(many.r.out).device_label).toMatch(new RegExp(`^${gpus.split(',').length} shards: `));
        // One engine per GPU for every engine opened (the sample's and the final pass's with --sample).
        expect(many.fake.launches.filter((k) => k === 'max_abs_f32').length).toBe(gpus.split(',').length * (extra.length ? 2 : 1));
        expect([many.fake.live, many.fake.retained]).toEqual([0, 0]);
        expect(many.fake.peerCopies, 'the passes combined between the GPUs (cuda/peer.ts)').toBeGreaterThan(0);
        expect(readFileSync(many.out).equals(readFileSync(one.out)), `--gpu ${gpus} ${extra.join(' ')}`).toBe(true);
      }
    }
    // 2200 rows: each GPU's final pass over its 1100 rows streamed in tiles of 256 (the 400-row
    // sample's engines stay resident); the same bytes as one GPU with every row resident.
    const big = join(dir, 'big.npy');
    const body = new Float32Array(2200 * 8).map((_, e) => Math.cos(e * 0.29) * 2 + ((e / 8) % 7 | 0));
    writeFileSync(big, Buffer.concat([Buffer.from(npyHeader('<f4', [2200, 8])), Buffer.from(body.buffer)]));
    // A fixed codec: the default search may train pq, whose engines do not fit the small VLC_CUDA_MAX_BYTES below.
    const resident = await onGpus('0', ['--sample', '400', '--residual', 'int8'], big);
    // Resident: its only asynchronous copies are the page-locked uploads (cuda/pin.ts: one piece each
    // for the engine's rows and the residual encoder's), no tiles.
    expect(resident.fake.asyncCopies).toBeLessThanOrEqual(2);
    process.env.VLC_CUDA_MAX_BYTES = String(engineBytes(1100, 8, 6, 'f32', 4, 256));
    try {
      const streamed = await onGpus('0,1', ['--sample', '400', '--residual', 'int8'], big);
      expect(streamed.r.code, streamed.r.err).toBe(0);
      expect(streamed.fake.asyncCopies - resident.fake.asyncCopies).toBeGreaterThanOrEqual(2 * 5); // tiles
      expect([streamed.fake.live, streamed.fake.livePinned]).toEqual([0, 0]);
      expect(readFileSync(streamed.out).equals(readFileSync(resident.out))).toBe(true);
    } finally {
      delete process.env.VLC_CUDA_MAX_BYTES;
    }
  }, 240_000);

  it('a GPU named twice or one that does not exist: one line, exit 2, no file', async () => {
    for (const [gpu, msg] of [['0,0', /--gpu 0,0: each GPU may be named once/], ['0,7', /--gpu 7: no such GPU; this machine has GPUs 0/]] as const) {
      const { r, out } = await onGpus(gpu);
      expect(r.code).toBe(2);
      expect(r.err.trim().split('\n')).toHaveLength(1);
      expect(r.err).toMatch(msg);
      expect(() => readFileSync(out)).toThrow();
    }
  });
});
