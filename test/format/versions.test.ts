// Every .vlc format version still reads: fixtures/formats/ holds a file of each, written by the vlc
// of that version (fixtures/formats/README.md names the commit and command). Each is read and
// checked as `vlc decompress` and `vlc eval` read it, and decodes to exactly the vectors the
// writing vlc's own decompress gave (their SHA-256 below), at the error it gave.
import { createHash } from 'node:crypto';
import * as fs from 'node:fs';
import * as path from 'node:path';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';
import { FORMAT_VERSION } from '../../dist/io/vlc/format.js';
import { readVlc } from '../../dist/io/vlc/file.js';
import { reconstruct } from '../../dist/io/vlc/reconstruct.js';

const ROOT = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../..');
const DIR = path.join(ROOT, 'fixtures/formats');
const [N, D] = [128, 32];

/** What each file decoded to with the vlc that wrote it: SHA-256 of the f32 rows, mean squared L2 error per vector. */
const WRITTEN: Record<string, { version: number; residual: string; sha256: string; mse: number }> = {
  'v1-none.vlc': { version: 1, residual: 'none', sha256: 'fd466690f48b143934de15b7fc6d0b8f57eaa814cd9352724798697316be8318', mse: 0.276952 },
  'v1-int8.vlc': { version: 1, residual: 'int8', sha256: '430f1f984728a62e806275e71d9d23635df2b4fb2288ec3fbdcaab32992023a1', mse: 0.000013118 },
  'v2-pq.vlc': { version: 2, residual: 'pq', sha256: '8c64465ba22a2826321018fc34651317696b80d24a935a27b5af8a1d8e51056e', mse: 0.0653834 },
  'v3-bits.vlc': { version: 3, residual: 'bits', sha256: 'fd897a8c2a5b08bcef4a644696bbe310edeba8f3061ebd28628f2f72a7999733', mse: 0.00354101 },
  'v4-pq-dims.vlc': { version: 4, residual: 'pq', sha256: 'abc2d81ced27135b3db9a0f82da61ba51462c62622829d5ee04466a472d2f78c', mse: 0.106562 },
  'v5-ec.vlc': { version: 5, residual: 'ec', sha256: '670e4f6f760b7da069ff2154b294a958961ce74f6dd3b4b008dc08b0fcad2478', mse: 0.0131166 },
  'v6-cosine.vlc': { version: 6, residual: 'int8', sha256: '2d359181727f1293c915e62a11fff00dd8191ebb99a771f05e2c3b763cacd2a9', mse: 0.0000138584 },
};

/** The input of every fixture: rows 0..127, dimensions 0..31 of fixtures/demo-2000x64.npy. */
function input(): Float32Array {
  const buf = fs.readFileSync(path.join(ROOT, 'fixtures/demo-2000x64.npy'));
  const all = new Float32Array(buf.buffer.slice(buf.byteOffset + buf.readUInt16LE(8) + 10));
  const x = new Float32Array(N * D);
  for (let i = 0; i < N; i++) x.set(all.subarray(i * 64, i * 64 + D), i * D);
  return x;
}

describe('a .vlc file of every format version reads', () => {
  const files = fs.readdirSync(DIR).filter((f) => f.endsWith('.vlc')).sort();

  it(`fixtures/formats/ holds a file of each version 1..${FORMAT_VERSION}, each described here`, () => {
    expect(files).toEqual(Object.keys(WRITTEN).sort());
    const versions = new Set(files.map((f) => fs.readFileSync(path.join(DIR, f)).readUInt32LE(8)));
    expect([...versions].sort()).toEqual(Array.from({ length: FORMAT_VERSION }, (_, v) => v + 1));
  });

  const x = input();
  it.each(Object.entries(WRITTEN))('%s decodes to the vectors its writer decoded', async (name, want) => {
    const f = await readVlc(path.join(DIR, name));
    expect(f.version).toBe(want.version);
    expect(f.manifest).toMatchObject({ n: N, d: D, m: 8, residual: want.residual });
    expect(f.warnings).toEqual([]);
    const y = reconstruct(f);
    expect(createHash('sha256').update(new Uint8Array(y.buffer, y.byteOffset, y.byteLength)).digest('hex')).toBe(want.sha256);
    let s = 0;
    for (let i = 0; i < x.length; i++) s += (x[i] - y[i]) ** 2;
    expect(Math.abs(s / N - want.mse) / want.mse).toBeLessThan(1e-5);
  });
});
