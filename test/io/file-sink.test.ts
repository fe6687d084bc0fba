// A regular file's sink (src/io/file-sink.ts): chunks at their positions, a large one in pieces
// written at once; small and large chunks and a header written over afterwards land where they
// belong; a failing piece is reported once no write is in flight.
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { planOutput, writeOutput } from '../../dist/io/output.js';
import { fileSink } from '../../dist/io/file-sink.js';

const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'vlc-sink-'));
afterAll(() => fs.rmSync(dir, { recursive: true, force: true }));

/** `n` bytes of a seeded sequence (no two pieces of a large chunk alike, so a misplaced piece shows). */
function bytesOf(n: number, seed: number): Uint8Array {
  const b = new Uint8Array(n);
  let x = seed >>> 0;
  for (let i = 0; i < n; i += 4) {
    x = (Math.imul(x, 1664525) + 1013904223) >>> 0;
    b[i] = x;
    b[i + 1] = x >>> 8;
    b[i + 2] = x >>> 16;
    b[i + 3] = x >>> 24;
  }
  return b;
}

describe('file sink', () => {
  it('writes small and large chunks in order, and a header over the start afterwards', async () => {
    const chunks = [bytesOf(3, 1), bytesOf(70 * 2 ** 20 + 5, 2), bytesOf(5, 3), bytesOf(65 * 2 ** 20 + 1, 4)];
    const head = Uint8Array.of(9, 8, 7, 6);
    const target = path.join(dir, 'chunks.bin');
    const written = await writeOutput(planOutput(target), async (sink) => {
      for (const c of chunks) await sink.write(c);
      sink.writeAt!(1, head);
    });
    const want = Buffer.concat(chunks);
    want.set(head, 1);
    expect(written).toBe(want.length);
    expect(fs.readFileSync(target).equals(want)).toBe(true);
  });

  it('refuses a large chunk whose writes fail, after every write in flight has ended', async () => {
    const file = path.join(dir, 'read-only.bin');
    fs.writeFileSync(file, '');
    const fd = fs.openSync(file, 'r');
    try {
      await expect(fileSink(fd, fs.writeSync).write(bytesOf(80 * 2 ** 20, 5))).rejects.toMatchObject({ code: 'EBADF' });
    } finally {
      fs.closeSync(fd);
    }
    expect(fs.statSync(file).size).toBe(0);
  });
});
