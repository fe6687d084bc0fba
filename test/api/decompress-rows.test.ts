// Decompress of a large file reads its codes a block of rows at a time from the file
// (io/vlc/file.ts openVlcRows, io/vlc/on-disk.ts): the same output bytes as reading the file whole,
// for every codec (each through its section's rowBlocks), and a damaged code byte is refused by
// its checksum before anything is written.
import * as fs from 'node:fs';
import * as path from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { compress, decompress } from '../../dist/index.js';
import { setRowsFromFileMinBytesForTests } from '../../dist/io/vlc/file.js';
import { clustered, tempDir, writeNpy } from '../cli/helpers.js';

const dir = tempDir('rows');
const n = 3001, d = 9;
const input = writeNpy(path.join(dir, 'x.npy'), clustered(n, d, 4, 7), n, d);

async function decompressBoth(file: string, tag: string, format = 'npy'): Promise<[Buffer, Buffer]> {
  const outs: Buffer[] = [];
  for (const fromFile of [true, false]) {
    setRowsFromFileMinBytesForTests(fromFile ? 0 : Number.POSITIVE_INFINITY);
    const output = path.join(dir, `${tag}-${fromFile}.${format}`);
    await decompress(file, { output, format });
    outs.push(fs.readFileSync(output));
  }
  return [outs[0], outs[1]];
}

describe('decompress from the file, a block of rows at a time', () => {
  afterAll(() => {
    setRowsFromFileMinBytesForTests();
    fs.rmSync(dir, { recursive: true, force: true });
  });

  for (const residual of ['int8', 'int4', 'none', 'pq', 'bits', 'ec']) {
    it(`writes the bytes of the whole-file read (${residual})`, async () => {
      const file = path.join(dir, `${residual}.vlc`);
      await compress(input, { output: file, device: 'cpu', anchors: 6, iters: 10, residual, ...(residual === 'pq' ? { pq: 3 } : {}) } as Parameters<typeof compress>[1]);
      const [a, b] = await decompressBoth(file, residual);
      expect(a.equals(b)).toBe(true);
      const [c, e] = await decompressBoth(file, `${residual}-f`, 'fvecs');
      expect(c.equals(e)).toBe(true);
    }, 60_000);
  }

  it('refuses a damaged code byte by its checksum, writing nothing', async () => {
    const file = path.join(dir, 'int8.vlc');
    const bytes = fs.readFileSync(file);
    bytes[bytes.length - 20] ^= 0x01; // inside the codes (the last section)
    const bad = path.join(dir, 'bad.vlc');
    fs.writeFileSync(bad, bytes);
    setRowsFromFileMinBytesForTests(0);
    const output = path.join(dir, 'bad.npy');
    await expect(decompress(bad, { output })).rejects.toThrow(/section 'residuals' checksum mismatch: file is corrupted/);
    expect(fs.existsSync(output)).toBe(false);
  });
});
