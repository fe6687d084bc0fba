// A large file's 16-bit ids made on threads (io/vlc/narrow-ids.ts, used by writeVlc): the same
// bytes and checksum as the main thread's loop, the first bad id named, and a written file that
// reads back (its checksums checked) with the ids it was given.
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { describe, expect, it } from 'vitest';
import { crc32c } from '../../dist/io/vlc/crc32c.js';
import { NARROW_ON_THREADS_MIN, narrowIdsOnThreads } from '../../dist/io/vlc/narrow-ids.js';
import { readVlc, writeVlc } from '../../dist/io/vlc/file.js';
import { encodeVlcBytes, type VlcContent } from '../../dist/io/vlc/format.js';

function sharedIds(n: number, m: number, seed: number): Uint32Array {
  const a = new Uint32Array(new SharedArrayBuffer(n * 4));
  let s = seed >>> 0;
  for (let i = 0; i < n; i++) {
    s = (Math.imul(s, 1664525) + 1013904223) >>> 0;
    a[i] = s % m;
  }
  return a;
}

describe('ids narrowed on threads (narrow-ids.ts)', () => {
  const n = NARROW_ON_THREADS_MIN + 4099;
  it('gives the loop\'s 16-bit ids and their CRC32C; names the first id out of range; leaves small or unshared ids to the caller', async () => {
    for (const m of [65536, 257, 40001]) {
      const a = sharedIds(n, m, m);
      const got = (await narrowIdsOnThreads(a, m))!;
      const want = Uint16Array.from(a);
      expect(Buffer.from(got.ids.buffer, 0, n * 2).equals(Buffer.from(want.buffer))).toBe(true);
      expect(got.crc).toBe(crc32c(new Uint8Array(want.buffer)));
    }
    const a = sharedIds(n, 1000, 3);
    a[n - 11] = 1000;
    a[n - 5] = 5000;
    await expect(narrowIdsOnThreads(a, 1000)).rejects.toThrow(`assignment ${n - 11} is 1000, outside 0..999`);
    expect(await narrowIdsOnThreads(sharedIds(1000, 10, 1), 10)).toBeUndefined();
    expect(await narrowIdsOnThreads(Uint32Array.from(sharedIds(n, 300, 2)), 300)).toBeUndefined();
  }, 120_000);

  it('writeVlc with such ids writes the bytes encodeVlcBytes makes, and they read back', async () => {
    const m = 30_000, d = 3;
    const anchors = new Float32Array(m * d).map((_, i) => ((i * 7919) % 2048) / 64 - 16);
    const content: VlcContent = {
      manifest: {
        n, d, m, metric: 'l2', anchorDtype: 'f32', residual: 'none',
        input: { dtype: 'f32', dropped: 0 },
        training: { energy: 0.5, iterations: 3, converged: true, init: 'kmeans++' },
        config: { maxIters: 3 }, seed: 9, tool: { name: 'vlc', version: '0.1.0' }, device: 'cpu',
      } as VlcContent['manifest'],
      anchors,
      assignments: sharedIds(n, m, 77),
    };
    const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'vlc-narrow-'));
    const file = path.join(dir, 'ids.vlc');
    await writeVlc(file, content);
    expect(fs.readFileSync(file).equals(Buffer.from(encodeVlcBytes(content)))).toBe(true);
    const back = await readVlc(file);
    expect(back.assignments.length).toBe(n);
    expect(Array.from(back.assignments.subarray(n - 5))).toEqual(Array.from(content.assignments.subarray(n - 5)));
    fs.rmSync(dir, { recursive: true });
  }, 120_000);
});
