// HDF5 through h5wasm: files written by h5wasm here (f32 / f64, contiguous, chunked + gzip, groups,
// the ann-benchmarks layout) and two committed h5py fixtures h5wasm cannot write (float16 with
// gzip + shuffle, big-endian float64 in a group).
import * as path from 'node:path';
import { describe, expect, it } from 'vitest';
import h5wasm from 'h5wasm/node';
import { readDataset } from '../../dist/io/read.js';
import { f16ToF32, viewAll } from '../../dist/vectors/dataset.js';
import { asNumbers, expectUsage, matrix, scratchDir } from './helpers.js';

const dir = scratchDir('hdf5');
const fixtures = path.join(path.dirname(new URL(import.meta.url).pathname), 'fixtures');
const want = Array.from(matrix(7, 13));

type Spec = { name: string; data: Float32Array | Float64Array | Int32Array; shape: number[]; dtype: string; chunks?: number[]; gzip?: boolean };

async function h5File(file: string, datasets: Spec[]): Promise<string> {
  await h5wasm.ready;
  const p = path.join(dir, file);
  const f = new h5wasm.File(p, 'w');
  for (const s of datasets) {
    const [group, name] = s.name.includes('/') ? s.name.split('/') : [undefined, s.name];
    const at = group ? ((f.get(group) as InstanceType<typeof h5wasm.Group>) ?? f.create_group(group)) : f;
    at.create_dataset({ name, data: s.data, shape: s.shape, dtype: s.dtype, chunks: s.chunks, ...(s.gzip ? { compression: 'gzip' as const, compression_opts: 4 } : {}) });
  }
  f.close();
  return p;
}

const vectors = (name = 'vectors', extra: Partial<Spec> = {}): Spec => ({ name, data: matrix(7, 13), shape: [7, 13], dtype: '<f4', ...extra });

describe('HDF5', () => {
  it.each([
    ['contiguous f32', [vectors()]],
    ['f64 in a group', [vectors('grp/emb', { data: new Float64Array(matrix(7, 13)), dtype: '<f8' })]],
    ['chunked, gzip-compressed f32', [vectors('v', { chunks: [3, 13], gzip: true })]],
  ] as const)('reads the only 2-D float dataset: %s', async (label, specs) => {
    const ds = await readDataset(await h5File(`${label.replace(/\W+/g, '-')}.h5`, [...specs]));
    expect([ds.n, ds.d, ds.dtype]).toEqual([7, 13, 'f32']);
    expect(Array.from(viewAll(ds))).toEqual(want);
  });

  it("reads 'train' from the ann-benchmarks layout (and says so), or the dataset --dataset names", async () => {
    const p = await h5File('ann.hdf5', [
      vectors('train'),
      { name: 'test', data: matrix(3, 13), shape: [3, 13], dtype: '<f4' },
      { name: 'neighbors', data: new Int32Array(30), shape: [3, 10], dtype: '<i4' },
      { name: 'distances', data: new Float32Array(30), shape: [3, 10], dtype: '<f4' },
    ]);
    const ds = await readDataset(p);
    expect(Array.from(viewAll(ds))).toEqual(want);
    expect(ds.format).toMatch(/'\/train' f32/);
    const test = await readDataset(p, { dataset: 'test' });
    expect(test.n).toBe(3);
    await expectUsage(readDataset(p, { dataset: 'neighbors' }), "dataset '/neighbors' holds", 'vlc reads float16, float32 and float64');
    await expectUsage(readDataset(p, { dataset: 'nope' }), "no dataset named 'nope'", '/train (f32 7 × 13)', '/neighbors (');
  });

  it('several 2-D float datasets without the ann-benchmarks layout: asks for --dataset', async () => {
    const p = await h5File('two.h5', [vectors('a'), vectors('b')]);
    await expectUsage(readDataset(p), 'has several 2-D float datasets', '--dataset NAME', '/a (f32 7 × 13), /b (f32 7 × 13)');
  });

  it('reads h5py fixtures: float16 with gzip + shuffle, big-endian float64 in a group', async () => {
    const half = await readDataset(path.join(fixtures, 'f16.h5'));
    expect([half.n, half.d, half.dtype]).toEqual([7, 13, 'f16']);
    expect(asNumbers(half, f16ToF32)).toEqual(want);
    const be = await readDataset(path.join(fixtures, 'big-endian.h5'));
    expect(be.format).toMatch(/big-endian/);
    expect(Array.from(viewAll(be))).toEqual(want);
  });

  it('refuses 1-D data, non-float data and non-HDF5 bytes with one line', async () => {
    const p = await h5File('flat.h5', [{ name: 'v', data: matrix(7, 13), shape: [91], dtype: '<f4' }]);
    await expectUsage(readDataset(p, { dataset: 'v' }), "dataset '/v' has shape (91)", '2-D');
    await expectUsage(readDataset(p), 'has no 2-D float dataset');
    const fake = path.join(dir, 'fake.h5');
    (await import('node:fs')).writeFileSync(fake, new Uint8Array(100));
    await expectUsage(readDataset(fake), /not a valid hdf5 file|not a readable HDF5 file/);
  });
});
