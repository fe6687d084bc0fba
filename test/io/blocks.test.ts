// The block reader (io/readers/blocks.ts): rows [r0, r1) and gathered rows of .npy and .fvecs,
// read where they lie, equal to the whole-file reader's; layouts it does not read in place
// (Fortran order, big-endian, f64, a size that does not match) are left to the whole-file readers.
import * as fs from 'node:fs';
import * as path from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { openBlockReader } from '../../dist/io/readers/blocks.js';
import { rowsF32 } from '../../dist/vectors/dataset.js';
import { clustered, npyBytes, tempDir, writeNpy } from '../cli/helpers.js';

const dir = tempDir('blocks');
const n = 103, d = 5;
const x = clustered(n, d, 2, 4);

describe('block reader', () => {
  afterAll(() => fs.rmSync(dir, { recursive: true, force: true }));

  it('reads blocks and gathered rows of .npy and .fvecs as they are in the file', () => {
    const npy = writeNpy(path.join(dir, 'x.npy'), x, n, d);
    const fv = Buffer.alloc(n * (4 + 4 * d));
    for (let i = 0; i < n; i++) {
      fv.writeInt32LE(d, i * (4 + 4 * d));
      for (let k = 0; k < d; k++) fv.writeFloatLE(x[i * d + k], i * (4 + 4 * d) + 4 + 4 * k);
    }
    const fvecs = path.join(dir, 'x.fvecs');
    fs.writeFileSync(fvecs, fv);
    for (const file of [npy, fvecs]) {
      const r = openBlockReader(file)!;
      expect([r.n, r.d, r.dtype]).toEqual([n, d, 'f32']);
      const b = r.read(40, 77);
      expect(Array.from(rowsF32(b, 0, b.n))).toEqual(Array.from(x.subarray(40 * d, 77 * d)));
      const again = r.read(0, 3, b); // into the same memory
      expect(again.buffer).toBe(b.buffer);
      expect(Array.from(rowsF32(again, 0, 3))).toEqual(Array.from(x.subarray(0, 3 * d)));
      const list = [5, 6, 7, 50, 102, 0];
      const g = r.gather(list);
      expect(Array.from(rowsF32(g, 0, g.n))).toEqual(list.flatMap((i) => Array.from(x.subarray(i * d, (i + 1) * d))));
      r.close();
    }
  });

  it('names a .fvecs record of another dimension as the whole-file reader does', () => {
    const fv = Buffer.alloc(n * (4 + 4 * d));
    for (let i = 0; i < n; i++) fv.writeInt32LE(i === 90 ? d + 1 : d, i * (4 + 4 * d));
    const file = path.join(dir, 'bad.fvecs');
    fs.writeFileSync(file, fv);
    const r = openBlockReader(file)!;
    expect(() => r.read(64, n)).toThrow(`record 90 has dimension ${d + 1} but record 0 has ${d}`);
    r.close();
  });

  it('leaves other layouts to the whole-file readers', () => {
    const body = new Uint8Array(x.buffer);
    const cases: Array<[string, Uint8Array]> = [
      ['fortran.npy', npyBytes('<f4', [n, d], body, true)],
      ['big.npy', npyBytes('>f4', [n, d], body)],
      ['f64.npy', npyBytes('<f8', [n, d / 1], new Uint8Array(Float64Array.from(x).buffer))],
      ['short.npy', npyBytes('<f4', [n + 1, d], body)],
    ];
    for (const [name, bytes] of cases) {
      const file = path.join(dir, name);
      fs.writeFileSync(file, bytes);
      expect(openBlockReader(file), name).toBeUndefined();
    }
    expect(openBlockReader('-')).toBeUndefined();
    expect(openBlockReader(path.join(dir, 'x.npy'), 'csv')).toBeUndefined();
  });
});
