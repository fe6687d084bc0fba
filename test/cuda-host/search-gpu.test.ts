// `vlc search` on a GPU (fake driver) is exhaustive exact search over every decoded vector: its
// ids and distances are those of ranking all the reconstructions (io/vlc/reconstruct.ts) with the
// CPU's exact k-NN, for files without residuals (ties everywhere: the lower id), int8, int4, pq
// and ec, decoded on the device (cuda/decode.cu; ec's rANS blocks by cuda/ec.cu);
// --nprobe with --device cuda, or -k above the GPU's limit with it, are usage errors (exit 2).
import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, describe, expect, it, vi } from 'vitest';
import { setDriverForTests } from '../../dist/backend/cuda/driver.js';
import { knn as cpuKnn } from '../../dist/backend/cpu/knn.js';
import { readVlc } from '../../dist/io/vlc/file.js';
import { reconstruct } from '../../dist/io/vlc/reconstruct.js';
import { npyHeader } from '../../dist/io/writers/npy.js';
import { FakeCuda } from './fake-driver.js';
import { runVlc } from './in-process.js';
import { expectSameNeighbours } from './knn-problem.js';

const dir = mkdtempSync(join(tmpdir(), 'vlc-search-gpu-'));
const n = 1203, d = 16, nq = 37, k = 7;
const npy = (file: string, x: Float32Array, rows: number) =>
  writeFileSync(file, Buffer.concat([Buffer.from(npyHeader('<f4', [rows, d])), Buffer.from(x.buffer)]));
const input = join(dir, 'x.npy'), queriesFile = join(dir, 'q.npy');
const x = new Float32Array(n * d).map((_, e) => Math.sin(e * 0.71) * 1.5 + ((e / d) % 11 | 0) * 0.4);
const queries = new Float32Array(nq * d).map((_, e) => Math.cos(e * 0.37) * 1.5 + ((e / d) % 7 | 0) * 0.5);
npy(input, x, n);
npy(queriesFile, queries, nq);

afterEach(() => {
  setDriverForTests(undefined);
  vi.restoreAllMocks();
});

describe('vlc search on the GPU (fake driver): exhaustive over the decoded vectors', () => {
  for (const residual of ['none', 'int8', 'int4', 'pq', 'ec']) {
    it(`--residual ${residual}: the ranking of every reconstruction`, async () => {
      const file = join(dir, `${residual}.vlc`);
      const made = await runVlc('compress', input, '-o', file, '--device', 'cpu', '--anchors', '24', '--iters', '4', '--residual', residual, '-q');
      expect(made.code, made.err).toBe(0);
      const fake = new FakeCuda({ poison: true });
      setDriverForTests(fake.api);
      const r = await runVlc('search', file, '--queries', queriesFile, '-k', String(k), '--device', 'cuda', '--json');
      expect(r.code, r.err).toBe(0);
      expect(fake.launches).toContain('knn_scan');
      // Decoded on the device: the f32 rows never go up from the host.
      expect(fake.launches).toContain(residual === 'pq' ? 'decode_pq' : residual === 'ec' ? 'ec_decode' : 'decode_scalar');
      expect(fake.live).toBe(0);
      const out = JSON.parse(r.out);
      expect(out.nprobe).toBeNull();
      const got = {
        ids: Int32Array.from(out.results.flatMap((row: { ids: number[] }) => row.ids)),
        dists: Float32Array.from(out.results.flatMap((row: { distances: number[] }) => row.distances)),
      };
      const want = await cpuKnn(reconstruct(await readVlc(file)), n, queries, nq, d, k, 2);
      expectSameNeighbours(got, want, nq, k);
    }, 120_000);
  }

  it('JSON lines as on the CPU path; auto without a GPU keeps the CPU index search', async () => {
    const file = join(dir, 'none.vlc');
    setDriverForTests(new FakeCuda().api);
    const lines = await runVlc('search', file, '--queries', queriesFile, '-k', '3', '--device', 'cuda');
    expect(lines.code, lines.err).toBe(0);
    const first = JSON.parse(lines.out.split('\n')[0]);
    expect(Object.keys(first)).toEqual(['query', 'ids', 'distances']);
    const none = new FakeCuda({ devices: [] });
    setDriverForTests(none.api);
    const cpu = await runVlc('search', file, '--queries', queriesFile, '-k', '3', '--json');
    expect(cpu.code, cpu.err).toBe(0);
    expect(JSON.parse(cpu.out).nprobe).toBe(1);
    expect(none.launches).toEqual([]);
  }, 120_000);

  it('--nprobe or -k above 128 with --device cuda: exit 2, one line', async () => {
    const file = join(dir, 'none.vlc');
    setDriverForTests(new FakeCuda().api);
    for (const extra of [['--nprobe', '4'], ['-k', '129']]) {
      const r = await runVlc('search', file, '--queries', queriesFile, '--device', 'cuda', ...extra);
      expect(r.code).toBe(2);
      expect(r.err.trim().split('\n'), r.err).toHaveLength(1);
    }
  });
});
