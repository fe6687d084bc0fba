// The automatic choice offers ec only up to EC_AUTO_MAX_VALUES values (n·d): its encoder runs on
// one host thread, so past that size --quality and --bytes measure the other codecs and say why
// once; --residual ec is not limited.
import { afterEach, describe, expect, it, vi } from 'vitest';
import { EC_AUTO_MAX_VALUES, ecCodec } from '../../dist/codec-registry/ec.js';
import { largestFitting } from '../../dist/codec-registry/codec.js';
import { log } from '../../dist/log.js';
import { rng } from '../rng.js';

afterEach(() => vi.restoreAllMocks());

describe('ec in the automatic choice', () => {
  const d = 16, n = 3001;
  const r = rng(5);
  const anchors = Float32Array.from({ length: 4 * d }, () => r() * 4 - 2);
  const assign = Uint32Array.from({ length: n }, () => Math.floor(r() * 4));
  const x = Float32Array.from({ length: n * d }, (_, e) => anchors[assign[Math.floor(e / d)] * d + (e % d)] + r() - 0.5);
  const input = { x, n, d, anchors, assign };
  const shape = (all: number) => ({ n: all, d, m: 4, fileBytes: (p: number | null) => (p ?? 0) + 1000 });

  it('offered up to the limit, left out past it with one line', () => {
    const info = vi.spyOn(log(), 'info').mockImplementation(() => undefined);
    const within = Math.floor(EC_AUTO_MAX_VALUES / d);
    expect(ecCodec.atError!(0.05, input, shape(within))).toMatchObject({ mode: 'ec' });
    expect(ecCodec.candidates({ kind: 'bytes', perVector: 64 }, shape(within), () => 10).length).toBe(1);
    expect(info).not.toHaveBeenCalled();
    const past = within + 1;
    expect(ecCodec.atError!(0.05, input, shape(past))).toBeUndefined();
    expect(ecCodec.atError!(0.02, input, shape(past))).toBeUndefined();
    expect(ecCodec.candidates({ kind: 'bytes', perVector: 64 }, shape(past), () => 10)).toEqual([]);
    expect(info).toHaveBeenCalledTimes(1);
    expect(String(info.mock.calls[0][0])).toMatch(/^left out ec residuals from the choice: .*--residual ec codes them anyway$/);
  });

  it('sizing a large input terminates: the bisection of payload bytes past 2^31 (it wrapped negative and never ended)', () => {
    expect(largestFitting(2 ** 31 + 5, (k) => k <= 2 ** 31 + 1)).toBe(2 ** 31 + 1);
    expect(largestFitting(3 * 2 ** 31, () => true)).toBe(3 * 2 ** 31);
  });
});
