// `vlc bench` on the CPU (CI-safe: subsampled workloads) and its usage errors.
import { describe, expect, it, vi, afterEach } from 'vitest';
import { runVlc as vlc } from './in-process.js';

afterEach(() => vi.restoreAllMocks());

describe('vlc bench --device cpu', () => {
  it('times the seed workloads and reports JSON', async () => {
    const r = await vlc('bench', '--device', 'cpu', '--workloads', 'seed-small,seed-large', '--iters', '2', '--json', '-q');
    expect(r.code).toBe(0);
    const j = JSON.parse(r.out);
    expect(j.device).toBe('cpu');
    expect(j.schema).toBe(1);
    expect(j.workloads.map((w: { name: string }) => w.name)).toEqual(['seed-small', 'seed-large']);
    for (const w of j.workloads) {
      expect(w.iter_ms_median).toBeGreaterThan(0);
      expect(w.energy).toBeGreaterThan(0);
      expect(w.iter_tflops).toBeGreaterThan(0);
      expect(w.n).toBeLessThanOrEqual(w.n_full);
    }
    expect(j.workloads[1].m).toBe(256);
  }, 60_000);

  it('an unknown workload is a usage error naming the choices', async () => {
    const r = await vlc('bench', '--device', 'cpu', '--workloads', 'huge');
    expect(r.code).toBe(2);
    expect(r.err).toMatch(/unknown workload 'huge'; choose from seed-small, seed-large, mnemo, prod/);
  });
});
