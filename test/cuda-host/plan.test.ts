// Memory planning (src/backend/cuda/plan.ts), pure: resident when everything fits, tiles as large
// as fit otherwise, forced tiles, and the error (exit 3, bytes needed and free) when even the
// smallest tile does not fit. The engine's use of it runs in tiled.test.ts.
import { describe, expect, it } from 'vitest';
import { engineBytes, planMemory, reduceGrid, type PlanInput } from '../../dist/backend/cuda/plan.js';

const GiB = 2 ** 30;
const base: PlanInput = { n: 100_000, d: 128, m: 1024, dtype: 'f32', smCount: 132, free: 70 * GiB, total: 80 * GiB, where: 'cuda:0' };

describe('planMemory', () => {
  it('resident when it fits: one span, the reduce grid of all the rows', () => {
    expect(planMemory(base)).toEqual({ tileRows: 0, tiles: 1, reduceGrid: reduceGrid(base.n, 132) });
    expect(reduceGrid(base.n, 132)).toBe(132 * 8);
    expect(reduceGrid(40, 132)).toBe(5);
  });

  it('tiles when the free memory or the limit is short, the largest multiple of 256 rows that fits with the margin', () => {
    const resident = engineBytes(base.n, base.d, base.m, 'f32', 132);
    for (const o of [{ free: resident - 1 }, { maxDeviceBytes: resident - 1 }]) {
      const p = planMemory({ ...base, ...o });
      const budget = resident - 1;
      expect(p.tileRows % 256).toBe(0);
      expect(p.tiles).toBe(Math.ceil(base.n / p.tileRows));
      expect(p.tiledBecause).toBe('memory');
      const margin = Math.min(64 * 2 ** 20, budget / 16);
      expect(engineBytes(base.n, base.d, base.m, 'f32', 132, p.tileRows) + margin).toBeLessThanOrEqual(budget);
      expect(engineBytes(base.n, base.d, base.m, 'f32', 132, p.tileRows + 256) + margin).toBeGreaterThan(budget);
      expect(p.note).toMatch(/^100000×128 f32 vectors with 1024 anchors need .* of GPU memory on cuda:0, .*: streaming the vectors from host memory in \d+ tiles of \d+ rows, which is slower/);
    }
    expect(planMemory({ ...base, maxDeviceBytes: resident - 1 }).note).toMatch(/allowed \(VLC_CUDA_MAX_BYTES\)/);
  });

  it('forced tiles: the rows asked for (at most the data rounded up to 256), said only at debug level', () => {
    expect(planMemory({ ...base, tileRows: 4096 })).toMatchObject({ tileRows: 4096, tiles: 25, tiledBecause: 'option' });
    expect(planMemory({ ...base, n: 300, tileRows: 4096 })).toMatchObject({ tileRows: 512, tiles: 1 });
  });

  it('a driver that cannot say how much is free (total 0) constrains nothing; a limit still does', () => {
    expect(planMemory({ ...base, free: 0, total: 0 }).tileRows).toBe(0);
    expect(planMemory({ ...base, free: 0, total: 0, maxDeviceBytes: GiB / 64 }).tileRows).toBeGreaterThan(0);
  });

  it('not even one tile of 256 rows: exit 3 with the bytes needed, with all resident, and free', () => {
    const minimal = engineBytes(base.n, base.d, base.m, 'f32', 132, 256);
    let err: (Error & { exitCode?: number }) | undefined;
    try {
      planMemory({ ...base, free: minimal - 1 });
    } catch (e) {
      err = e as Error & { exitCode?: number };
    }
    expect(err?.exitCode).toBe(3);
    expect(err?.message).toMatch(/^the data do not fit on cuda:0: 100000×128 f32 vectors with 1024 anchors need .* even with the vectors streamed from host memory in tiles of 256 rows \(.* with all of them on the GPU\), .* free of 80\.00 GiB; use fewer vectors or anchors/);
    expect(planMemory({ ...base, free: minimal }).tileRows).toBe(256);
  });
});
