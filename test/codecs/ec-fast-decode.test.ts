// The readers' block decoder (src/codecs/ec/fast-decode.ts) against the reference (blocks.ts
// decodeBlock over rans.ts ransDecode): on random alphabets and models — frequencies of 0, symbols
// narrower than a bucket, escapes, codes beyond int16, every scale — the same codes for every block,
// and for damaged blocks the same refusal in the same words (or, where a flip still decodes, the
// same codes).
import { describe, expect, it } from 'vitest';
import { decodeBlock, encodeBlock } from '../../dist/codecs/ec/blocks.js';
import { BlockDecoder } from '../../dist/codecs/ec/fast-decode.js';
import type { RansModels } from '../../dist/codecs/ec/rans.js';
import { randomBlock } from './ec-helpers.js';
import { rng } from '../rng.js';

const fail = (what: string) => new Error(what);

/** The fast decoder's codes: into its own array width, widened when an escape does not fit. */
function fast(dec: BlockDecoder, bytes: Uint8Array, rows: number): Int32Array {
  const out = dec.alloc(rows);
  if (dec.decode(bytes, 0, bytes.length, rows, out, fail)) return Int32Array.from(out);
  const wide = new Int32Array(out.length);
  expect(dec.decode(bytes, 0, bytes.length, rows, wide, fail)).toBe(true);
  return wide;
}

function reference(bytes: Uint8Array, rows: number, alpha: { lo: Int32Array; size: Uint32Array }, models: RansModels): Int32Array {
  const out = new Int32Array(rows * alpha.lo.length);
  decodeBlock(bytes, 0, bytes.length, rows, alpha, models, out, fail);
  return out;
}

/** What a decoder makes of the bytes: its codes, or its error's message. */
function outcome(f: () => Int32Array): Int32Array | string {
  try {
    return f();
  } catch (e) {
    return (e as Error).message;
  }
}

describe('ec fast block decoder', () => {
  it('decodes random models (holes, escapes, wide codes, scales 8 to 16) to the reference codes', () => {
    let escapes = 0, wideBlocks = 0;
    for (let seed = 1; seed <= 40; seed++) {
      const S = 8 + (seed % 9), rows = 1 + ((seed * 37) % 97), dims = 1 + ((seed * 13) % 23);
      const { q, alpha, models } = randomBlock(seed, rows, dims, S, seed % 4 === 0);
      const bytes = encodeBlock(q, rows, alpha, models);
      const dec = new BlockDecoder(alpha, models);
      const ref = reference(bytes, rows, alpha, models);
      expect(ref).toEqual(q);
      expect(fast(dec, bytes, rows)).toEqual(ref);
      // The same decoder again (its scratch reused) and into an Int32Array directly.
      const wide = new Int32Array(rows * dims);
      expect(dec.decode(bytes, 0, bytes.length, rows, wide, fail)).toBe(true);
      expect(wide).toEqual(ref);
      for (let t = 0; t < q.length; t++) if (q[t] < alpha.lo[t % dims] || q[t] >= alpha.lo[t % dims] + alpha.size[t % dims]) escapes++;
      if (!dec.narrow || q.some((v) => v !== (v << 16) >> 16)) wideBlocks++;
    }
    expect(escapes).toBeGreaterThan(20);
    expect(wideBlocks).toBeGreaterThan(3);
  });

  it('reads a block inside a larger array at any alignment', () => {
    const { q, alpha, models } = randomBlock(99, 50, 7, 12, false);
    const bytes = encodeBlock(q, 50, alpha, models);
    const dec = new BlockDecoder(alpha, models);
    for (const shift of [1, 2, 3, 4]) {
      const big = new Uint8Array(bytes.length + 8);
      big.set(bytes, shift);
      const out = new Int32Array(q.length);
      expect(dec.decode(big, shift, bytes.length, 50, out, fail)).toBe(true);
      expect(out).toEqual(q);
    }
  });

  it('refuses damaged blocks as the reference does, in the same words', () => {
    let refused = 0, read = 0;
    for (let seed = 1; seed <= 6; seed++) {
      const rows = 20 + seed, dims = 3 + seed;
      const { q, alpha, models } = randomBlock(100 + seed, rows, dims, 10 + seed, seed % 2 === 0);
      const bytes = encodeBlock(q, rows, alpha, models);
      const dec = new BlockDecoder(alpha, models);
      const r = rng(seed);
      for (let trial = 0; trial < 150; trial++) {
        const c = bytes.slice();
        const flips = 1 + Math.floor(r() * 3);
        for (let f = 0; f < flips; f++) c[Math.floor(r() * c.length)] ^= 1 << Math.floor(r() * 8);
        const want = outcome(() => reference(c, rows, alpha, models));
        expect(outcome(() => fast(dec, c, rows))).toEqual(want);
        if (typeof want === 'string') refused++;
        else read++;
      }
      // Cut short, and the wrong row count.
      expect(outcome(() => fast(dec, bytes.subarray(0, bytes.length - 4), rows))).toEqual(outcome(() => reference(bytes.subarray(0, bytes.length - 4), rows, alpha, models)));
      expect(outcome(() => fast(dec, bytes, rows - 1))).toEqual(outcome(() => reference(bytes, rows - 1, alpha, models)));
    }
    expect(refused).toBeGreaterThan(100);
    expect(read + refused).toBe(900);
  });
});
