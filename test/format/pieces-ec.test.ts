// An ec section larger than 4 GiB is read through views: its head, its offset table and each
// block where it lies, at offsets past 2^32. No real 4 GiB file is made: the payload is a
// SharedArrayBuffer whose pages are mapped only where touched (a few MB of memory), holding a real
// section's head and blocks with a first block stretched to 4 GiB of zeros that is never decoded.
import { describe, expect, it } from 'vitest';
import { encodeEc } from '../../dist/codecs/ec/encode.js';
import { ecSection } from '../../dist/codecs/ec/residuals.js';
import { Payload } from '../../dist/io/vlc/payload.js';
import { rng } from '../rng.js';
import { decoded, joined } from '../codecs/ec-helpers.js';

class Corrupt extends Error {}
const corrupt = (what: string) => new Corrupt(what);

describe('ec sections past 2^32 bytes', () => {
  it('a block lying past 2^32 is found through the offset table and decodes as in the small section; read() no longer refuses the size', async () => {
    const n = 600, d = 11, m = 3, blockRows = 200;
    const r = rng(5);
    const anchors = Float32Array.from({ length: m * d }, () => r() * 4);
    const assign = Uint32Array.from({ length: n }, () => Math.floor(r() * m));
    const x = Float32Array.from({ length: n * d }, (_, t) => anchors[assign[Math.floor(t / d)] * d + (t % d)] + (r() - 0.5));
    const input = { x, n, d, anchors, assign };
    const { residuals } = await encodeEc(input, { step: 0.05 }, { blockRows });
    const small = joined(residuals);
    const L = residuals.layout;
    expect(L.blockAt.length).toBe(4); // three blocks
    const table = L.blockAt[0] - 4 * 3;
    const sizes = [0, 1, 2].map((b) => L.blockAt[b + 1] - L.blockAt[b]);
    // Block 0 stretched to the most a u32 block size says (2^32 − 4 bytes): blocks 1 and 2, after
    // the head, then lie past 2^32.
    const big0 = 2 ** 32 - 4;
    const total = L.blockAt[0] + big0 + sizes[1] + sizes[2];
    const buffer = new SharedArrayBuffer(total);
    const bytes = (at: number, length: number) => new Uint8Array(buffer, at, length);
    bytes(0, L.blockAt[0]).set(small.subarray(0, L.blockAt[0]));
    new DataView(buffer, table, 4).setUint32(0, big0, true);
    bytes(L.blockAt[0] + big0, sizes[1] + sizes[2]).set(small.subarray(L.blockAt[1], L.blockAt[3]));
    const payload = new Payload(buffer, 0, total);
    expect(L.blockAt[0] + big0).toBeGreaterThan(2 ** 32);

    // Rows in blocks of one ec block: block 1's rows, read from past 2^32, decode as the encoder's.
    const blocks = ecSection.rowBlocks!(payload, { n, d, m, version: 5 }, corrupt, blockRows);
    expect(blocks.rows).toBe(blockRows);
    const want = decoded(residuals, input);
    for (const b of [1, 2]) {
      const r0 = b * blockRows;
      const part = blocks.block(b, assign.subarray(r0, r0 + blockRows));
      const got = decoded(part as typeof residuals, { n: blockRows, d, anchors, assign: assign.subarray(r0, r0 + blockRows) });
      expect(got).toEqual(want.subarray(r0 * d, (r0 + blockRows) * d));
    }
    // The zeros of block 0 are not a block: reading every block (read()) fails there, naming it —
    // not, as before, on the section's size.
    expect(() => blocks.block(0, assign.subarray(0, blockRows))).toThrow(/block 0: /);
    expect(() => ecSection.read(payload, { n, d, m, assignments: assign, version: 5 }, corrupt)).toThrow(/block 0: /);
  });
});
