import { rowsOf } from '../../dist/io/rows.js';
import { planOutput } from '../../dist/io/output.js';
import * as fs from 'node:fs';
import * as path from 'node:path';
import { describe, expect, it } from 'vitest';
import { readDataset } from '../../dist/io/read.js';
import { formatFromPath, writeVectors } from '../../dist/io/write.js';
import { f16ToF32, f32ToF16, viewAll } from '../../dist/vectors/dataset.js';
import { asNumbers, expectUsage, scratchDir } from './helpers.js';

const dir = scratchDir('write');

/** Values that are not exact in f16, to check rounding agrees with dataset.ts's f32ToF16. */
function noisy(n: number, d: number): Float32Array {
  const x = new Float32Array(n * d);
  for (let i = 0; i < x.length; i++) x[i] = Math.sin(i * 0.37) * 3.3 + (i % 5 === 0 ? 1e-6 : 0);
  return x;
}

describe('writeVectors round trips', () => {
  it.each([
    ['npy', 'f32', 'a.npy'],
    ['npy', 'f16', 'b.npy'],
    ['arrow', 'f32', 'c.arrow'],
    ['arrow', 'f16', 'd.feather'],
    ['fvecs', 'f32', 'e.fvecs'],
  ] as const)('%s %s, n=7 d=13', async (format, dtype, name) => {
    const x = noisy(7, 13);
    const p = path.join(dir, name);
    await writeVectors(p, rowsOf(x, 7, 13), { format, dtype });
    const ds = await readDataset(p);
    expect([ds.n, ds.d, ds.dtype]).toEqual([7, 13, dtype]);
    if (dtype === 'f32') expect(Array.from(viewAll(ds))).toEqual(Array.from(x));
    else expect(Array.from(viewAll(ds))).toEqual(Array.from(x, f32ToF16)); // same rounding as dataset.ts
  });

  it('npy header is 64-byte aligned and numpy-style', async () => {
    const p = path.join(dir, 'hdr.npy');
    await writeVectors(p, rowsOf(noisy(3, 5), 3, 5), { format: 'npy' });
    const bytes = fs.readFileSync(p);
    const headerLen = bytes.readUInt16LE(8);
    expect((10 + headerLen) % 64).toBe(0);
    expect(bytes.subarray(10, 10 + headerLen).toString('latin1')).toMatch(/^\{'descr': '<f4', 'fortran_order': False, 'shape': \(3, 5\), \} *\n$/);
    expect(bytes.length).toBe(10 + headerLen + 3 * 5 * 4);
  });

  it('writes more than one Arrow batch and chunk for a larger matrix', async () => {
    const [n, d] = [50_000, 384]; // 76.8 MB f32: more than one 64 MiB batch
    const x = new Float32Array(n * d);
    for (let i = 0; i < x.length; i += 97) x[i] = i;
    const p = path.join(dir, 'big.arrow');
    await writeVectors(p, rowsOf(x, n, d), { format: 'arrow' });
    const ds = await readDataset(p);
    expect([ds.n, ds.d]).toEqual([n, d]);
    expect(Buffer.compare(Buffer.from(viewAll(ds).buffer, viewAll(ds).byteOffset, viewAll(ds).byteLength), Buffer.from(x.buffer))).toBe(0);
    fs.rmSync(p);
  });

  it('a subarray view is written from its own offset', async () => {
    const all = noisy(10, 4);
    const view = all.subarray(8, 8 + 12); // rows 2..4
    const p = path.join(dir, 'view.npy');
    await writeVectors(p, rowsOf(view, 3, 4), { format: 'npy', dtype: 'f16' });
    const ds = await readDataset(p);
    expect(asNumbers(ds, f16ToF32)).toEqual(Array.from(view, (v) => f16ToF32(f32ToF16(v))));
  });
});

describe('writeVectors errors and atomicity', () => {
  it('f32 beyond the f16 range saturates at 65504 (never Inf), and is counted', async () => {
    const p = path.join(dir, 'overflow.npy');
    const tally = { clamped: 0 };
    await writeVectors(p, rowsOf(new Float32Array([1, 70000, 2, -1e6]), 2, 2), { format: 'npy', dtype: 'f16', tally });
    expect(tally.clamped).toBe(2);
    expect(asNumbers(await readDataset(p), f16ToF32)).toEqual([1, 65504, 2, -65504]);
  });
  it('fvecs cannot hold f16', async () => {
    await expectUsage(writeVectors(path.join(dir, 'x.fvecs'), rowsOf(noisy(2, 2), 2, 2), { format: 'fvecs', dtype: 'f16' }), 'float32 only');
  });
  it('a missing output directory is a usage error and leaves nothing', async () => {
    const target = path.join(dir, 'no-such-dir', 'out.npy');
    await expectUsage(writeVectors(target, rowsOf(noisy(2, 2), 2, 2), { format: 'npy' }), 'does not exist');
    expect(fs.existsSync(path.dirname(target))).toBe(false);
  });
  it('an existing file is refused without force, and replaced whole with it', async () => {
    const p = path.join(dir, 'replace.npy');
    fs.writeFileSync(p, 'old contents');
    await expectUsage(writeVectors(p, rowsOf(noisy(2, 3), 2, 3), { format: 'npy' }), 'already exists', '--force');
    expect(fs.readFileSync(p, 'utf8')).toBe('old contents');
    await writeVectors(planOutput(p, { force: true }), rowsOf(noisy(2, 3), 2, 3), { format: 'npy' });
    expect((await readDataset(p)).n).toBe(2);
    expect(fs.readdirSync(dir).filter((f) => f.endsWith('.tmp'))).toEqual([]);
  });
});

describe('formatFromPath', () => {
  it.each([
    ['x.npy', 'npy'],
    ['x.ARROW', 'arrow'],
    ['x.feather', 'arrow'],
    ['x.ipc', 'arrow'],
    ['dir.d/x.fvecs', 'fvecs'],
    ['x.vlc', undefined],
    ['x', undefined],
  ])('%s -> %s', (p, f) => expect(formatFromPath(p)).toBe(f));
});
