// compress's report accounts for its wall time: the phases of --json add up to total_seconds, and
// what no phase holds (`other`) is a sliver of it.
import * as fs from 'node:fs';
import * as path from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { compress } from '../../dist/index.js';
import { clustered, DEMO, tempDir, vlc } from '../cli/helpers.js';

describe('compress phases', () => {
  const dir = tempDir('phases');
  afterAll(() => fs.rmSync(dir, { recursive: true, force: true }));

  it.each([
    ['every row', { sample: 'all' as const }],
    ['a sample, then the final pass', { sample: { rows: 900 } }],
  ])('add up to the total (%s)', async (_what, extra) => {
    const n = 3001, d = 11;
    const s = await compress({ data: clustered(n, d, 7), n, d }, { output: path.join(dir, `${extra.sample === 'all' ? 'all' : 'sample'}.vlc`), anchors: 20, iters: 15, device: 'cpu', residual: 'int8', ...extra });
    const { other, ...phases } = s.phases;
    const sum = Object.values(phases).reduce((a, b) => a + b, 0);
    for (const [k, v] of Object.entries(phases)) expect(v, k).toBeGreaterThanOrEqual(0);
    expect(sum + other).toBeCloseTo(s.total_seconds, 9);
    expect(other).toBeGreaterThan(-1e-9);
    expect(other).toBeLessThan(0.02 * s.total_seconds + 0.05); // log lines and the summary: milliseconds
    if (extra.sample !== 'all') expect(phases.final_pass).toBeGreaterThan(0);
    expect(phases.open).toBeGreaterThan(0);
  }, 60_000);

  it("the command line's report starts at the process's start: a `start` phase, inside the process's wall", () => {
    const t0 = performance.now();
    const r = vlc(['compress', DEMO, '-o', path.join(dir, 'cli.vlc'), '--anchors', '16', '--residual', 'int8', '--device', 'cpu', '--json']);
    const wall = (performance.now() - t0) / 1000;
    expect(r.code, r.stderr).toBe(0);
    const s = JSON.parse(r.stdout.split('\n')[0]);
    const { start, other, ...rest } = s.phases;
    expect(Object.keys(s.phases)[0]).toBe('start');
    expect(start).toBeGreaterThan(0); // Node's start and vlc's modules take milliseconds at least
    const sum = Object.values(rest as Record<string, number>).reduce((a, b) => a + b, 0);
    expect(start + sum + other).toBeCloseTo(s.total_seconds, 6);
    expect(s.total_seconds).toBeLessThan(wall); // the process's own time, within what the parent waited
  }, 60_000);
});
