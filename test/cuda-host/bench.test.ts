// `vlc bench` on the CPU (CI-safe: subsampled workloads) and its usage errors.
import { describe, expect, it, vi, afterEach } from 'vitest';
import { main } from '../../dist/cli.js';

afterEach(() => vi.restoreAllMocks());

async function vlc(...args: string[]) {
  let out = '';
  let err = '';
  vi.spyOn(process.stdout, 'write').mockImplementation((c: string | Uint8Array) => ((out += String(c)), true));
  vi.spyOn(process.stderr, 'write').mockImplementation((c: string | Uint8Array) => ((err += String(c)), true));
  const code = await main(['node', 'vlc', ...args]);
  vi.restoreAllMocks();
  return { code, out, err };
}

describe('vlc bench --device cpu', () => {
  it('times the seed workloads and reports JSON', async () => {
    const r = await vlc('bench', '--device', 'cpu', '--workloads', 'seed-small,seed-large', '--iters', '2', '--json', '-q');
    expect(r.code).toBe(0);
    const j = JSON.parse(r.out);
    expect(j.kind).toBe('cpu');
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
