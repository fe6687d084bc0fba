// The commands use the GPU's exact k-NN when their device is CUDA (fake driver): compress's
// quality figures and `vlc eval`'s exact searches launch knn_scan, and eval's figures on the GPU
// are those on the CPU; --device cpu launches nothing; eval --device cuda without a GPU is exit 3.
import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, describe, expect, it, vi } from 'vitest';
import { setDriverForTests } from '../../dist/backend/cuda/driver.js';
import { npyHeader } from '../../dist/io/writers/npy.js';
import { FakeCuda } from './fake-driver.js';
import { runVlc } from './in-process.js';

const dir = mkdtempSync(join(tmpdir(), 'vlc-cuda-knn-'));
const n = 1500, d = 12;
const input = join(dir, 'x.npy');
const body = new Float32Array(n * d).map((_, e) => Math.sin(e * 0.37) * 2 + ((e / d) % 9 | 0));
writeFileSync(input, Buffer.concat([Buffer.from(npyHeader('<f4', [n, d])), Buffer.from(body.buffer)]));

afterEach(() => {
  setDriverForTests(undefined);
  vi.restoreAllMocks();
});

describe('exact k-NN on the GPU in the commands (fake driver)', () => {
  const file = join(dir, 'x.vlc');

  it('compress --device cuda measures its quality figures with the GPU k-NN', async () => {
    const fake = new FakeCuda({ poison: true });
    setDriverForTests(fake.api);
    const r = await runVlc('compress', input, '-o', file, '--device', 'cuda', '--anchors', '16', '--iters', '5', '--residual', 'int8', '--json');
    expect(r.code, r.err).toBe(0);
    expect(fake.launches).toContain('knn_scan');
    expect(JSON.parse(r.out).recall_at_10).toBeGreaterThan(0.5);
    expect(fake.live).toBe(0);
  }, 120_000);

  it('eval: the same figures on the GPU as on the CPU; --device cpu launches nothing', async () => {
    const fake = new FakeCuda({ poison: true });
    setDriverForTests(fake.api);
    const gpu = await runVlc('eval', input, file, '--queries', '300', '--device', 'cuda', '--json');
    expect(gpu.code, gpu.err).toBe(0);
    expect(fake.launches.filter((l) => l === 'knn_scan').length).toBe(2); // the ground truth, then the decoded vectors
    expect(fake.live).toBe(0);
    const cpuFake = new FakeCuda();
    setDriverForTests(cpuFake.api);
    const cpu = await runVlc('eval', input, file, '--queries', '300', '--device', 'cpu', '--json');
    expect(cpu.code, cpu.err).toBe(0);
    expect(cpuFake.launches).toEqual([]);
    const pick = (o: Record<string, unknown>) => ({ mse: o.mse, k: o.k, r1: o.recall_at_1, r10: o.recall_at_10 });
    expect(pick(JSON.parse(gpu.out))).toEqual(pick(JSON.parse(cpu.out)));
  }, 120_000);

  it('bits residuals on a GPU: encoded and decoded on the GPU; the error and the neighbours the CPU gives', async () => {
    const fake = new FakeCuda({ poison: true });
    setDriverForTests(fake.api);
    const onGpu = join(dir, 'bits-gpu.vlc'), onCpu = join(dir, 'bits-cpu.vlc');
    const args = ['--anchors', '16', '--iters', '5', '--residual', 'bits', '--bytes', '9', '--json'];
    const g = await runVlc('compress', input, '-o', onGpu, '--device', 'cuda', ...args);
    expect(g.code, g.err).toBe(0);
    expect(fake.live).toBe(0);
    const c = await runVlc('compress', input, '-o', onCpu, '--device', 'cpu', ...args);
    expect(c.code, c.err).toBe(0);
    expect(JSON.parse(g.out).mse).toBe(JSON.parse(c.out).mse);
    const found = await runVlc('search', onGpu, '--queries', input, '-k', '5', '--device', 'cuda', '--json');
    expect(found.code, found.err).toBe(0);
    expect(fake.launches).toContain('knn_scan');
    expect(fake.launches).toContain('decode_bits');
    expect(fake.launches.some((k) => k.startsWith('residual_bits_rows'))).toBe(true);
    const cpu = await runVlc('search', onGpu, '--queries', input, '-k', '5', '--device', 'cpu', '--json', '--nprobe', '16');
    expect(JSON.parse(found.out).results.map((r: { ids: number[] }) => r.ids)).toEqual(JSON.parse(cpu.out).results.map((r: { ids: number[] }) => r.ids));
    expect(fake.live).toBe(0);
  }, 120_000);

  it('eval --device cuda without a GPU: exit 3, one line', async () => {
    setDriverForTests(new FakeCuda({ devices: [] }).api);
    const r = await runVlc('eval', input, file, '--device', 'cuda');
    expect(r.code).toBe(3);
    expect(r.err.trim().split('\n')).toHaveLength(1);
  });
});
