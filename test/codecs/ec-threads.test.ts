// The 'ec' section's blocks decoded on several threads (src/codecs/ec/decode-threads.ts): the same
// codes as one thread, block for block and in the same array widths, for odd sizes and every thread
// count; codes wider than int16 in some blocks; a damaged section refused for the same block in the
// same words whatever the thread count.
import { describe, expect, it } from 'vitest';
import { readSection } from '../../dist/codecs/ec/blocks.js';
import { encodeEc } from '../../dist/codecs/ec/encode.js';
import { decodeBlocksOnThreads } from '../../dist/codecs/ec/decode-threads.js';
import { BlockDecoder } from '../../dist/codecs/ec/fast-decode.js';
import { decodeBlocks } from '../../dist/codecs/ec/residuals.js';
import { joined, mixture } from './ec-helpers.js';

const corrupt = (what: string) => new Error(what);

function codesOn(payload: Uint8Array, n: number, d: number, threads: number) {
  return decodeBlocks(payload, readSection(payload, n, d, corrupt), n, threads, corrupt);
}

function errorOn(payload: Uint8Array, n: number, d: number, threads: number): string {
  try {
    codesOn(payload, n, d, threads);
  } catch (e) {
    return (e as Error).message;
  }
  return 'read';
}

describe('ec decode on threads', () => {
  for (const rotate of [false, true]) {
    it(`gives the one-thread codes for any thread count (${rotate ? 'principal directions' : 'axes'}, odd sizes)`, async () => {
      const input = mixture(3001, 19, 5, 11, 0.001);
      const { residuals } = await encodeEc(input, { step: rotate ? 0.02 : 0.0004 }, { blockRows: 97, rotate });
      const payload = joined(residuals);
      const one = codesOn(payload, input.n, input.d, 1);
      expect(one.length).toBe(Math.ceil(3001 / 97));
      // The outliers at this step code beyond int16 in some blocks (not rotated: they are escapes).
      if (!rotate) expect(one.some((q) => q instanceof Int32Array) && one.some((q) => q instanceof Int16Array)).toBe(true);
      const L = readSection(payload, input.n, input.d, corrupt);
      // Through the reader's path (this thread claims blocks too), and with the workers decoding every block.
      const runs = [2, 3, 5].flatMap((threads) => [
        codesOn(payload, input.n, input.d, threads),
        decodeBlocksOnThreads(payload, L, input.n, new BlockDecoder(L.alpha, L.models), threads, (b: number) => (what: string) => corrupt(`block ${b}: ${what}`), false),
      ]);
      for (const many of runs) {
        expect(many.length).toBe(one.length);
        many.forEach((q, b) => {
          expect(q.constructor).toBe(one[b].constructor);
          expect(Array.from(q)).toEqual(Array.from(one[b]));
        });
      }
    });
  }

  it('refuses a damaged section for its first bad block, in the same words, on any thread count', async () => {
    const input = mixture(2000, 9, 3, 12);
    const { residuals } = await encodeEc(input, { step: 0.01 }, { blockRows: 64 });
    const payload = joined(residuals);
    const L = readSection(payload, input.n, input.d, corrupt);
    const damaged = payload.slice();
    // Words of blocks 20 and 7 flipped: block 7 is the one named.
    for (const b of [20, 7]) for (let i = 0; i < 8; i++) damaged[L.blockAt[b] + 140 + i] ^= 0x5a;
    const want = errorOn(damaged, input.n, input.d, 1);
    expect(want).toMatch(/^block 7: /);
    for (const threads of [2, 3, 4]) expect(errorOn(damaged, input.n, input.d, threads)).toBe(want);
    const workersOnly = () => decodeBlocksOnThreads(damaged, L, input.n, new BlockDecoder(L.alpha, L.models), 3, (b: number) => (what: string) => corrupt(`block ${b}: ${what}`), false);
    expect(workersOnly).toThrow(want);
  });
});
