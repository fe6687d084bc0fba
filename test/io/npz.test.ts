// .npz: zip archives of .npy members, stored (np.savez) or deflated (np.savez_compressed), zip64.
import { describe, expect, it } from 'vitest';
import { readDataset } from '../../dist/io/read.js';
import { f16ToF32, viewAll } from '../../dist/vectors/dataset.js';
import { asNumbers, expectUsage, matrix, npyBytes, scratchDir, writeFile } from './helpers.js';
import { zipBytes } from './zip-writer.js';

const dir = scratchDir('npz');
const want = Array.from(matrix(7, 13));
const train = npyBytes({ descr: '<f4', shape: [7, 13] });

describe('.npz', () => {
  it.each([
    ['stored', false, false],
    ['deflated', true, false],
    ['stored, zip64', false, true],
    ['deflated, zip64', true, true],
  ])('reads a single %s array', async (label, deflate, zip64) => {
    const p = writeFile(dir, `one-${label.replace(/\W+/g, '-')}.npz`, zipBytes([{ name: 'arr_0.npy', data: train, deflate }], { zip64 }));
    const ds = await readDataset(p);
    expect([ds.n, ds.d, ds.dtype]).toEqual([7, 13, 'f32']);
    expect(Array.from(viewAll(ds))).toEqual(want);
    expect(ds.format).toMatch(deflate ? /deflated/ : /stored/);
  });

  it.each([
    ['f16', '<f2', 'f16'],
    ['f64', '<f8', 'f32'],
    ['Fortran-order f32 (inflated in memory first)', '<f4', 'f32'],
  ])('reads deflated %s members', async (label, descr, dtype) => {
    const fortran = label.startsWith('Fortran');
    const data = npyBytes({ descr, shape: [7, 13], fortran });
    const p = writeFile(dir, `${descr.slice(1)}-${fortran}.npz`, zipBytes([{ name: 'x.npy', data, deflate: true }]));
    const ds = await readDataset(p);
    expect(ds.dtype).toBe(dtype);
    expect(asNumbers(ds, f16ToF32)).toEqual(want);
  });

  it('picks the only 2-D float array, or the one --array names, and lists them otherwise', async () => {
    const labels = npyBytes({ descr: '<i8', shape: [7], body: new Uint8Array(56) });
    const p = writeFile(dir, 'mixed.npz', zipBytes([{ name: 'labels.npy', data: labels }, { name: 'emb.npy', data: train, deflate: true }]));
    expect(Array.from(viewAll(await readDataset(p)))).toEqual(want);
    expect(Array.from(viewAll(await readDataset(p, { array: 'emb' })))).toEqual(want);
    await expectUsage(readDataset(p, { array: 'nope' }), "no array named 'nope'", 'labels (not readable)', 'emb (f32 7 × 13)');
    await expectUsage(readDataset(p, { array: 'labels' }), /int64/);
    const two = writeFile(dir, 'two.npz', zipBytes([{ name: 'a.npy', data: train }, { name: 'b.npy', data: train }]));
    await expectUsage(readDataset(two), 'has several 2-D float arrays', '--array NAME', 'a (f32 7 × 13), b (f32 7 × 13)');
    expect(Array.from(viewAll(await readDataset(two, { array: 'b' })))).toEqual(want);
  });

  it('damaged archives fail with one line naming the problem', async () => {
    const good = zipBytes([{ name: 'x.npy', data: train, deflate: true }]);
    await expectUsage(readDataset(writeFile(dir, 'cut.npz', good.subarray(0, good.length - 30))), /end-of-central-directory|central directory/);
    const flipped = good.slice();
    flipped[80] ^= 0xff; // inside the deflate stream
    await expectUsage(readDataset(writeFile(dir, 'flip.npz', flipped)), /cannot be inflated|CRC-32|corrupted|\.npy/);
    const stored = zipBytes([{ name: 'x.npy', data: train }]);
    const bad = stored.slice();
    bad[30 + 5 + 128 + 9] ^= 0x01; // a data byte: the CRC catches it
    await expectUsage(readDataset(writeFile(dir, 'crc.npz', bad)), "member 'x.npy' fails its CRC-32 check");
    // A directory that promises far more than the deflated bytes can hold is refused before any allocation.
    const lying = zipBytes([{ name: 'x.npy', data: train, deflate: true }], { zip64: true });
    const dv = new DataView(lying.buffer);
    for (let at = lying.length - 4; at >= 0; at--)
      if (dv.getUint32(at, true) === 0x02014b50) {
        dv.setBigUint64(at + 46 + 5 + 4, 1n << 40n, true); // the central entry's zip64 uncompressed size
        break;
      }
    await expectUsage(readDataset(writeFile(dir, 'lying.npz', lying)), 'more than deflate can produce');
    await expectUsage(readDataset(writeFile(dir, 'empty.npz', zipBytes([{ name: 'readme.txt', data: new Uint8Array(3) }]))), 'holds no .npy arrays');
  });
});
