// io/writers/half.ts: the table-driven f32 -> f16 conversion that decompress and the .vlc writer
// use in bulk gives exactly vectors/dataset.ts halfFromFloatBits's bits (vlc's one narrowing rule:
// round to nearest even, finite values beyond ±65504 saturated, ±Inf and NaN kept). Every sign and
// exponent, with the mantissas where rounding decides (each shift's half-way point and its
// neighbours, odd and even kept bits, the carry into the next binade and into Inf) and random
// ones. (All 2^32 floats were compared once when it was written: no difference.)
import { describe, expect, it } from 'vitest';
import { f32ToF16Into, halvesFromFloatBits } from '../../dist/io/writers/half.js';
import { halfFromFloatBits } from '../../dist/vectors/dataset.js';

function mantissas(): number[] {
  const m = new Set<number>([0, 1, 2, 3, 0x7fffff, 0x7ffffe, 0x7fe000, 0x7fefff, 0x7ff000, 0x7ff001, 0x400000, 0x3fffff]);
  for (let s = 1; s <= 24; s++) {
    const half = 2 ** (s - 1);
    for (const base of [0, 2 ** s, 3 * 2 ** s, 0x7fffff - (0x7fffff % 2 ** s)])
      for (const x of [half - 1, half, half + 1]) if (base + x <= 0x7fffff) m.add(base + x);
  }
  let seed = 12345;
  for (let i = 0; i < 300; i++) m.add((seed = (Math.imul(seed, 1103515245) + 12345) >>> 0) & 0x7fffff);
  return [...m];
}

describe('f32 -> f16 in bulk (io/writers/half.ts)', () => {
  it('every sign and exponent, rounding-deciding and random mantissas: halfFromFloatBits, bit for bit', () => {
    const ms = mantissas();
    const bits = new Uint32Array(512 * ms.length);
    let at = 0;
    for (let t = 0; t < 512; t++) for (const m of ms) bits[at++] = ((t << 23) | m) >>> 0;
    const out = new Uint16Array(bits.length);
    halvesFromFloatBits(bits, out);
    let differ = 0;
    for (let i = 0; i < bits.length; i++) if (out[i] !== halfFromFloatBits(bits[i])) differ++;
    expect(differ).toBe(0);
    expect(bits.length).toBeGreaterThan(512 * 100);
  });

  it('the rule itself at its edges: ties to even, the least subnormal, saturation at ±65504, Inf and NaN kept', () => {
    const src = Float32Array.from([1 + 2 ** -11, 1 + 3 * 2 ** -11, 2 ** -25, 2 ** -25 * 1.0000001, 65504, 65519.99, 65520, -1e9, Infinity, -Infinity, NaN, -0]);
    const out = new Uint16Array(src.length);
    f32ToF16Into(src, 0, out);
    expect(Array.from(out, (h) => h.toString(16))).toEqual(['3c00', '3c02', '0', '1', '7bff', '7bff', '7bff', 'fbff', '7c00', 'fc00', '7e00', '8000']);
  });

  it('from an offset into the floats', () => {
    const src = Float32Array.from({ length: 37 }, (_, i) => (i - 18) * 1234.567);
    const out = new Uint16Array(20);
    f32ToF16Into(src, 11, out);
    const bits = new Uint32Array(src.buffer);
    expect(Array.from(out)).toEqual(Array.from({ length: 20 }, (_, i) => halfFromFloatBits(bits[11 + i])));
  });
});
