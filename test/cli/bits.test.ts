// `vlc compress --residual bits` end to end: the file fits --bytes, is format version 3, decodes to
// the error compress measured, is searchable and evaluable, gives the same bytes for the same seed,
// and is refused with one line when damaged; the flags that do not go with it are usage errors.
import * as fs from 'node:fs';
import * as path from 'node:path';
import { describe, expect, it } from 'vitest';
import { DEMO, residualRuns, vlc } from './helpers.js';

const { dir, compress, ITERS, readsBack, flipRefused, refused } = residualRuns('bits');

describe('--residual bits', { timeout: 120_000 }, () => {
  it('--bytes B: the file fits, decodes as measured, is searchable, the same bytes again; damage is exit 2', () => {
    const file = path.join(dir, 'b.vlc');
    const r = compress(file, '--bytes', '24');
    expect(r.code, r.stderr).toBe(0);
    const s = JSON.parse(r.stdout);
    expect(s.residual).toBe('bits');
    expect(s.bytes_per_vector).toBeLessThanOrEqual(24);
    expect(24 - s.bytes_per_vector).toBeLessThan(1.1); // one code byte more would not have fitted
    expect(s.bytes).toBe(fs.statSync(file).size);
    const none = JSON.parse(vlc(['compress', DEMO, '-o', path.join(dir, 'n.vlc'), '--iters', ITERS, '--device', 'cpu', '--residual', 'none', '--json']).stdout);
    expect(s.mse).toBeLessThan(none.mse * 0.5);
    const info = JSON.parse(vlc(['info', file, '--json']).stdout);
    expect(info).toMatchObject({ residual: 'bits', mse: s.mse, bytes: s.bytes, format_version: 3 });
    expect(vlc(['info', file]).stdout).toMatch(/residuals bits/);
    expect(info.bits.code_bytes * 2000).toBeLessThan(s.bytes);
    expect(info.bits.dimensions_by_bits).toHaveLength(9);
    expect(info.bits.dimensions_by_bits.reduce((a: number, b: number) => a + b, 0)).toBe(64);
    expect(info.bits.dimensions_by_bits.reduce((a: number, c: number, b: number) => a + b * c, 0)).toBeLessThanOrEqual(8 * info.bits.code_bytes);
    expect(vlc(['info', file]).stdout).toMatch(/^residuals bits: \d+ code bytes\/vector; dimensions by width/m);
    readsBack(file, s.mse);

    expect(compress(path.join(dir, 'b2.vlc'), '--bytes', '24').code).toBe(0);
    expect(fs.readFileSync(file).equals(fs.readFileSync(path.join(dir, 'b2.vlc')))).toBe(true);

    flipRefused(file, fs.statSync(file).size - 50);
  });

  it('without --bytes: d/2 code bytes, the size of int4', () => {
    const bits = compress(path.join(dir, 'd.vlc'));
    const int4 = vlc(['compress', DEMO, '-o', path.join(dir, 'i4.vlc'), '--iters', ITERS, '--device', 'cpu', '--residual', 'int4', '--json']);
    expect(bits.code, bits.stderr).toBe(0);
    // The same code bytes a vector; bits adds d bytes of bit counts to int4's d f32 scales.
    expect(Math.abs(JSON.parse(bits.stdout).bytes - JSON.parse(int4.stdout).bytes)).toBeLessThan(200);
  });

  it.each([
    [['--pq', '8'], '--pq applies to product-quantized residuals; add --residual pq'],
    [['--pq-bits', '4'], '--pq-bits applies to product-quantized residuals; add --residual pq'],
    [['--bytes', '5'], '--bytes 5: the smallest bits file (1 code byte) takes'],
    [['--quality', '0.9'], '--residual and --quality both say what to store; give one of them'],
  ])('%j is a usage error', (args, message) => refused(args, message));
});
