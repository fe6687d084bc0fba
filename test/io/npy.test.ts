import { describe, expect, it } from 'vitest';
import { readDataset } from '../../dist/io/read.js';
import { f16ToF32, viewAll } from '../../dist/vectors/dataset.js';
import { asNumbers, encodeValues, expectUsage, matrix, npyBytes, scratchDir, writeFile } from './helpers.js';

const dir = scratchDir('npy');
const expected = (n: number, d: number) => Array.from(matrix(n, d));

describe('npy reader', () => {
  it.each([
    ['<f4', 'f32', 'npy f32'],
    ['<f2', 'f16', 'npy f16'],
    ['<f8', 'f32', 'npy f64'],
  ])('reads %s C order, odd size 7 x 13', async (descr, dtype, format) => {
    const p = writeFile(dir, `c${descr.slice(1)}.npy`, npyBytes({ descr, shape: [7, 13] }));
    const ds = await readDataset(p);
    expect([ds.n, ds.d, ds.dtype, ds.format, ds.dropped]).toEqual([7, 13, dtype, format, 0]);
    expect(ds.buffer).toBeInstanceOf(SharedArrayBuffer);
    expect(asNumbers(ds, f16ToF32)).toEqual(expected(7, 13));
  });

  it('reads uint8 as f32', async () => {
    const p = writeFile(dir, 'u8.npy', npyBytes({ descr: '|u1', shape: [7, 13] }));
    const ds = await readDataset(p);
    expect(ds.dtype).toBe('f32');
    expect(Array.from(viewAll(ds))).toEqual(expected(7, 13).map((v) => (v + 2) * 4));
  });

  it.each(['<f4', '<f2', '<f8'])('transposes Fortran order %s', async (descr) => {
    const p = writeFile(dir, `fortran${descr.slice(1)}.npy`, npyBytes({ descr, shape: [7, 13], fortran: true }));
    const ds = await readDataset(p);
    expect(ds.format).toContain('fortran');
    expect(asNumbers(ds, f16ToF32)).toEqual(expected(7, 13));
  });

  it('transposes a Fortran array larger than one read block', async () => {
    // 70 columns: one full 64-column block plus a partial one.
    const [n, d] = [3001, 70];
    const p = writeFile(dir, 'fortran-big.npy', npyBytes({ descr: '<f4', shape: [n, d], fortran: true }));
    const ds = await readDataset(p);
    const want = matrix(n, d);
    expect(Buffer.compare(Buffer.from(viewAll(ds).buffer, viewAll(ds).byteOffset, viewAll(ds).byteLength), Buffer.from(want.buffer))).toBe(0);
  });

  it('names the first NaN row of a Fortran array (found column by column)', async () => {
    const [n, d] = [3001, 70];
    const colMajor = new Float32Array(n * d);
    for (let j = 0; j < d; j++) for (let i = 0; i < n; i++) colMajor[j * n + i] = i + j;
    colMajor[69 * n + 2000] = NaN; // row 2000, last column
    colMajor[3 * n + 2500] = Infinity; // a later row, earlier column
    const p = writeFile(dir, 'fortran-nan.npy', npyBytes({ descr: '<f4', shape: [n, d], fortran: true, body: new Uint8Array(colMajor.buffer) }));
    await expectUsage(readDataset(p), 'row 2000 has a non-finite value (NaN in dimension 69)');
    const ds = await readDataset(p, { dropInvalid: true });
    expect([ds.n, ds.dropped]).toEqual([n - 2, 2]);
  });

  it.each([2, 3] as const)('reads header version %i', async (version) => {
    const p = writeFile(dir, `v${version}.npy`, npyBytes({ descr: '<f4', shape: [7, 13], version }));
    const ds = await readDataset(p);
    expect(Array.from(viewAll(ds))).toEqual(expected(7, 13));
  });

  it('sniffs an .npy by its magic whatever the extension', async () => {
    const p = writeFile(dir, 'vectors.data', npyBytes({ descr: '<f4', shape: [3, 5] }));
    const ds = await readDataset(p);
    expect([ds.n, ds.d, ds.format]).toEqual([3, 5, 'npy f32']);
  });
});

describe('npy reader: bad input', () => {
  it('1-D array', async () => {
    const p = writeFile(dir, 'one-d.npy', npyBytes({ descr: '<f4', shape: [91] }));
    await expectUsage(readDataset(p), p, '1-D array of 91 values', 'reshape');
  });
  it('3-D array', async () => {
    const p = writeFile(dir, 'three-d.npy', npyBytes({ descr: '<f4', shape: [2, 3, 4] }));
    await expectUsage(readDataset(p), '3-D array (2 × 3 × 4)', 'reshape to (-1, d)');
  });
  it('n = 0 rows', async () => {
    const p = writeFile(dir, 'n0.npy', npyBytes({ descr: '<f4', shape: [0, 13] }));
    await expectUsage(readDataset(p), 'has 0 rows');
  });
  it('d = 0', async () => {
    const p = writeFile(dir, 'd0.npy', npyBytes({ descr: '<f4', shape: [5, 0] }));
    await expectUsage(readDataset(p), 'dimension 0');
  });
  it('truncated data says expected vs actual bytes', async () => {
    const full = npyBytes({ descr: '<f4', shape: [7, 13] });
    const p = writeFile(dir, 'truncated.npy', full.subarray(0, full.length - 10));
    await expectUsage(readDataset(p), 'truncated', 'needs 364 data bytes, the file has 354');
  });
  it('truncated header', async () => {
    const p = writeFile(dir, 'trunc-header.npy', npyBytes({ descr: '<f4', shape: [7, 13] }).subarray(0, 40));
    await expectUsage(readDataset(p), 'truncated .npy header');
  });
  it('header lying about the shape (more data than it says)', async () => {
    const p = writeFile(dir, 'lying.npy', npyBytes({ descr: '<f4', shape: [5, 13], body: encodeValues('<f4', [7, 13]) }));
    await expectUsage(readDataset(p), 'header says shape 5 × 13', '260 data bytes', 'has 364');
  });
  it('unsupported dtype is named with the supported ones', async () => {
    const p = writeFile(dir, 'int32.npy', npyBytes({ descr: '<i4', shape: [7, 13] }));
    await expectUsage(readDataset(p), "unsupported dtype '<i4' (int32)", 'float32', 'float16', 'astype');
  });
  it('forced npy on something else', async () => {
    const p = writeFile(dir, 'not.npy', 'hello, this is text and not numpy at all');
    await expectUsage(readDataset(p), 'not a valid npy file', 'supported:');
    await expectUsage(readDataset(p, { format: 'npy' }), 'not an .npy file');
  });
});
