// The codes of a streamed compress kept until the file is written (api/stream-blocks.ts
// openCodesStore): blocks put in any order, each in one piece or many (a stream block's codes are
// the encoder's own pieces, never joined), come out in row order, the same bytes and checksum,
// from host memory and from the temp file beside the output (removed by discard()).
import * as fs from 'node:fs';
import * as path from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { openCodesStore, setCodesInMemoryForTests } from '../../dist/api/stream-blocks.js';
import { crc32c } from '../../dist/io/vlc/crc32c.js';
import { planOutput } from '../../dist/io/output.js';
import { tempDir } from '../cli/helpers.js';
import { rng } from '../rng.js';

const dir = tempDir('codes-store');
afterAll(() => {
  setCodesInMemoryForTests();
  fs.rmSync(dir, { recursive: true, force: true });
});

describe('codes store', () => {
  const n = 1000, width = 7, per = 300;
  const r = rng(11);
  const all = Uint8Array.from({ length: n * width }, () => Math.floor(r() * 256));
  /** Block b's codes cut into `cuts` pieces of uneven sizes (views of `all`). */
  const piecesOf = (r0: number, r1: number, cuts: number) => {
    const a = r0 * width, b = r1 * width;
    const at = [a, ...Array.from({ length: cuts - 1 }, (_, k) => a + Math.floor(((b - a) * (k + 1) * (k + 2)) / (cuts * (cuts + 1)))), b];
    return at.slice(1).map((e, k) => all.subarray(at[k], e));
  };

  for (const inMemory of [true, false]) {
    it(`${inMemory ? 'in memory' : 'in a temp file'}: blocks in any order, in pieces, come out in row order with their CRC`, async () => {
      setCodesInMemoryForTests(inMemory);
      const out = planOutput(path.join(dir, `out-${inMemory}.vlc`));
      const store = openCodesStore(out, n, n * width);
      expect(store.where).toBe(inMemory ? 'memory' : 'temp file');
      for (const b of [2, 0, 3, 1]) {
        const r0 = b * per, r1 = Math.min(n, r0 + per);
        const pieces = piecesOf(r0, r1, 1 + b);
        store.put(r0, r1 - r0, pieces, crc32c(all.subarray(r0 * width, r1 * width)));
      }
      const head = Uint8Array.of(1, 2, 3);
      const tail = store.tail(crc32c(head));
      const got: Uint8Array[] = [];
      await tail.write({ write: async (c) => void got.push(c.slice()) });
      expect(Buffer.concat(got).equals(Buffer.from(all))).toBe(true);
      expect(tail.bytes).toBe(n * width);
      const whole = new Uint8Array(head.length + all.length);
      whole.set(head);
      whole.set(all, head.length);
      expect(tail.crc).toBe(crc32c(whole));
      store.discard();
      expect(fs.readdirSync(dir).filter((f) => f.endsWith('.tmp'))).toEqual([]);
    });
  }
});
