// `vlc compress --residual ec` end to end: the file fits --bytes within 1 %, is format version 5,
// decodes to the error compress measured (eval), is searchable and decompressible, keeps less error
// than int4 at int4's size, gives the same bytes for the same seed, and is refused with exit 2 when
// damaged; the flags that do not go with it are usage errors.
import * as fs from 'node:fs';
import * as path from 'node:path';
import { describe, expect, it } from 'vitest';
import { DEMO, residualRuns, vlc } from './helpers.js';

const { dir, compress, ITERS, readsBack, flipRefused, refused } = residualRuns('ec');

describe('--residual ec', { timeout: 180_000 }, () => {
  it('--bytes B: the whole file within 1 % below B, decodes as measured, is searchable, the same bytes again; damage is exit 2', () => {
    const file = path.join(dir, 'e.vlc');
    const r = compress(file, '--bytes', '24');
    expect(r.code, r.stderr).toBe(0);
    const s = JSON.parse(r.stdout);
    expect(s.residual).toBe('ec');
    expect(s.bytes_per_vector).toBeLessThanOrEqual(24);
    expect(s.bytes_per_vector).toBeGreaterThan(24 * 0.99);
    expect(s.bytes).toBe(fs.statSync(file).size);
    const info = JSON.parse(vlc(['info', file, '--json']).stdout);
    expect(info).toMatchObject({ residual: 'ec', mse: s.mse, bytes: s.bytes, format_version: 5 });
    expect(info.ec.coded_dimensions).toBeGreaterThan(0);
    expect(vlc(['info', file]).stdout).toMatch(/^residuals ec: \d+ of 64 dimensions coded, step /m);
    readsBack(file, s.mse);

    expect(compress(path.join(dir, 'e2.vlc'), '--bytes', '24').code).toBe(0);
    expect(fs.readFileSync(file).equals(fs.readFileSync(path.join(dir, 'e2.vlc')))).toBe(true);

    const bytes = fs.readFileSync(file);
    for (const at of [bytes.length - 50, bytes.length - 2000]) flipRefused(file, at);
    fs.writeFileSync(path.join(dir, 'cut.vlc'), bytes.subarray(0, bytes.length - 100));
    expect(vlc(['info', path.join(dir, 'cut.vlc')]).code).toBe(2);
  });

  it("without --bytes: int4's size, with less error than int4", () => {
    const ec = compress(path.join(dir, 'd.vlc'));
    const int4 = vlc(['compress', DEMO, '-o', path.join(dir, 'i4.vlc'), '--iters', ITERS, '--device', 'cpu', '--residual', 'int4', '--json']);
    expect(ec.code, ec.stderr).toBe(0);
    const a = JSON.parse(ec.stdout), b = JSON.parse(int4.stdout);
    expect(a.bytes).toBeLessThanOrEqual(b.bytes + 8);
    expect(a.bytes).toBeGreaterThan(b.bytes * 0.99);
    expect(a.mse).toBeLessThan(b.mse);
  });

  it.each([
    [['--pq', '8'], '--pq applies to product-quantized residuals; add --residual pq'],
    [['--bytes', '9'], '--bytes 9: the smallest ec file (no dimension coded) takes'],
    [['--quality', '0.9'], '--residual and --quality both say what to store; give one of them'],
  ])('%j is a usage error', (args, message) => refused(args, message));
});
