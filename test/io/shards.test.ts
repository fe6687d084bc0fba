// Sharded inputs: several files, a directory or a glob read as one dataset, rows in name order.
import * as fs from 'node:fs';
import * as path from 'node:path';
import { describe, expect, it } from 'vitest';
import { f16ToF32 } from '../../dist/vectors/dataset.js';
import { writeVectors, type VectorFormat } from '../../dist/io/write.js';
import { rowsOf } from '../../dist/io/rows.js';
import { expandInputs, readInputs } from '../../dist/io/shards.js';
import { probeRows, type ReadOptions } from '../../dist/io/read.js';
import { setParallelReadForTests } from '../../dist/io/readers/parallel-read.js';
import { asNumbers, expectUsage, npyBytes, scratchDir, writeFile } from './helpers.js';
import { vlc } from '../cli/helpers.js';
import { zipBytes } from './zip-writer.js';
import h5wasm from 'h5wasm/node';

const dir = scratchDir('shards');
const d = 6;
/** Rows r0..r1 of a deterministic matrix (row i, dim j). */
const block = (r0: number, r1: number) => Float32Array.from({ length: (r1 - r0) * d }, (_, e) => Math.fround((r0 + Math.floor(e / d)) * 0.5 + (e % d) * 0.125));

/** A fresh directory with shards of rows [0,5) [5,12) [12,13) [13,30) in the given formats. */
async function shardDir(name: string, formats: VectorFormat[]): Promise<string> {
  const at = path.join(dir, name);
  fs.rmSync(at, { recursive: true, force: true });
  fs.mkdirSync(at);
  const bounds = [0, 5, 12, 13, 30];
  for (let s = 0; s < 4; s++) {
    const f = formats[s % formats.length];
    await writeVectors(path.join(at, `part-${String(s).padStart(3, '0')}.${f}`), rowsOf(block(bounds[s], bounds[s + 1]), bounds[s + 1] - bounds[s], d), { format: f });
  }
  return at;
}

describe('naming the files', () => {
  it('a directory: its regular, non-hidden files in name order; a glob: its matches in name order', async () => {
    const at = await shardDir('names', ['npy']);
    fs.writeFileSync(path.join(at, '.hidden.npy'), 'x');
    fs.mkdirSync(path.join(at, 'sub'));
    const want = ['part-000.npy', 'part-001.npy', 'part-002.npy', 'part-003.npy'].map((f) => path.join(at, f));
    expect(expandInputs([at])).toEqual(want);
    expect(expandInputs([path.join(at, 'part-*.npy')])).toEqual(want);
    expect(expandInputs([path.join(at, 'part-00[13].npy')])).toEqual([want[1], want[3]]);
    expect(expandInputs([path.join(at, 'part-00?.npy')])).toEqual(want);
    expect(expandInputs([want[2], want[0]])).toEqual([want[0], want[2]]);
    expect(expandInputs([want[2]])).toEqual([want[2]]);
  });

  it('refuses what names nothing, ** and stdin among files', () => {
    const empty = path.join(dir, 'empty');
    fs.mkdirSync(empty, { recursive: true });
    expect(() => expandInputs([empty])).toThrow(/holds no files/);
    expect(() => expandInputs([path.join(dir, 'nothing-*.npy')])).toThrow(/no file matches/);
    expect(() => expandInputs([path.join(dir, '**', '*.npy')])).toThrow(/\*\* is not supported/);
    expect(() => expandInputs(['-', 'a.npy'])).toThrow(/only input/);
  });
});

describe('reading them as one dataset', () => {
  it.each([
    ['npy', ['npy']],
    ['mixed npy / parquet / fvecs / safetensors (row counts from headers and footers)', ['npy', 'parquet', 'fvecs', 'safetensors']],
    ['arrow (row counts known only from the contents)', ['arrow']],
  ] as [string, VectorFormat[]][])('%s: rows concatenated in name order', async (label, formats) => {
    const at = await shardDir(label.split(' ')[0].replace(/\W/g, ''), formats);
    const ds = await readInputs(path.join(at, '*'));
    expect([ds.n, ds.d, ds.dtype]).toEqual([30, d, 'f32']);
    expect(ds.format).toMatch(/^4 files, /);
    expect(asNumbers(ds, f16ToF32)).toEqual(Array.from(block(0, 30)));
  });

  // The formats writeVectors cannot write, each file made by hand: shards of rows [0,5) [5,12) [12,30).
  const rowsText = (r0: number, r1: number, line: (row: number[]) => string) =>
    Array.from({ length: r1 - r0 }, (_, i) => line(Array.from(block(r0 + i, r0 + i + 1)))).join('\n') + '\n';
  const npy = (r0: number, r1: number) => npyBytes({ descr: '<f4', shape: [r1 - r0, d], body: new Uint8Array(block(r0, r1).buffer) });
  const makers: Record<string, { ext: string; args?: ReadOptions; make: (file: string, r0: number, r1: number) => Promise<void> | void }> = {
    csv: { ext: 'csv', make: (f, r0, r1) => fs.writeFileSync(f, rowsText(r0, r1, (r) => r.join(','))) },
    jsonl: { ext: 'jsonl', make: (f, r0, r1) => fs.writeFileSync(f, rowsText(r0, r1, (r) => JSON.stringify({ embedding: r }))) },
    raw: { ext: 'f32', args: { dim: d }, make: (f, r0, r1) => fs.writeFileSync(f, block(r0, r1)) },
    npz: { ext: 'npz', make: (f, r0, r1) => fs.writeFileSync(f, zipBytes([{ name: 'x.npy', data: npy(r0, r1), deflate: true }])) },
    hdf5: {
      ext: 'h5',
      make: async (f, r0, r1) => {
        await h5wasm.ready;
        const h = new h5wasm.File(f, 'w');
        h.create_dataset({ name: 'v', data: block(r0, r1), shape: [r1 - r0, d], dtype: '<f4' });
        h.close();
      },
    },
  };
  it.each(Object.keys(makers))('%s shards: rows concatenated in name order', async (format) => {
    const { ext, args, make } = makers[format];
    const at = path.join(dir, `hand-${format}`);
    fs.rmSync(at, { recursive: true, force: true });
    fs.mkdirSync(at);
    const bounds = [0, 5, 12, 30];
    for (let s = 0; s < 3; s++) await make(path.join(at, `s${s}.${ext}`), bounds[s], bounds[s + 1]);
    const ds = await readInputs(path.join(at, `s*.${ext}`), args);
    expect([ds.n, ds.d, ds.dtype]).toEqual([30, d, 'f32']);
    expect(asNumbers(ds, f16ToF32)).toEqual(Array.from(block(0, 30)));
  });

  it('bvecs shards: u8 rows concatenated', async () => {
    const at = path.join(dir, 'bvecs');
    fs.rmSync(at, { recursive: true, force: true });
    fs.mkdirSync(at);
    const bvecs = (r0: number, r1: number) => {
      const b = Buffer.alloc((r1 - r0) * (4 + d));
      for (let i = 0; i < r1 - r0; i++) {
        b.writeInt32LE(d, i * (4 + d));
        for (let j = 0; j < d; j++) b[i * (4 + d) + 4 + j] = (r0 + i) * 3 + j;
      }
      return b;
    };
    fs.writeFileSync(path.join(at, 'a.bvecs'), bvecs(0, 4));
    fs.writeFileSync(path.join(at, 'b.bvecs'), bvecs(4, 9));
    const ds = await readInputs(at);
    expect([ds.n, ds.d]).toEqual([9, d]);
    expect(asNumbers(ds, f16ToF32)).toEqual(Array.from({ length: 9 * d }, (_, e) => Math.floor(e / d) * 3 + (e % d)));
  });

  it('probes row counts from headers without reading the data', async () => {
    const at = await shardDir('probe', ['npy', 'parquet', 'fvecs', 'safetensors']);
    const files = expandInputs([at]);
    expect(await Promise.all(files.map((f) => probeRows(f)))).toEqual([5, 7, 1, 17]);
    expect(await probeRows(writeFile(dir, 'x.jsonl', '{"embedding": [1, 2]}\n'))).toBeUndefined();
  });

  it('--drop-invalid counts over every file', async () => {
    const at = path.join(dir, 'nan');
    fs.mkdirSync(at, { recursive: true });
    for (const s of [0, 1]) {
      const x = block(s * 4, s * 4 + 4);
      x[s * d + 1] = NaN;
      fs.writeFileSync(path.join(at, `p${s}.npy`), npyBytes({ descr: '<f4', shape: [4, d], body: new Uint8Array(x.buffer) }));
    }
    const ds = await readInputs(at, { dropInvalid: true });
    expect([ds.n, ds.dropped]).toEqual([6, 2]);
  });

  // .npy shards are read straight into their rows of the one dataset (on threads when large: forced
  // here with tiny thread shares), checked as they arrive; a bad value is the file-by-file error.
  it('npy shards read in place on threads: the rows, and a bad value named as reading its file alone names it', async () => {
    const at = path.join(dir, 'in-place');
    fs.rmSync(at, { recursive: true, force: true });
    fs.mkdirSync(at);
    const bounds = [0, 1001, 1002, 3337];
    const wide = (r0: number, r1: number) => Float32Array.from({ length: (r1 - r0) * 37 }, (_, e) => Math.fround(Math.sin(r0 * 37 + e) * 3));
    for (let s = 0; s < 3; s++) fs.writeFileSync(path.join(at, `p${s}.npy`), npyBytes({ descr: '<f4', shape: [bounds[s + 1] - bounds[s], 37], body: new Uint8Array(wide(bounds[s], bounds[s + 1]).buffer) }));
    setParallelReadForTests(0, 4096);
    try {
      const ds = await readInputs(at);
      expect([ds.n, ds.d, ds.format]).toEqual([3337, 37, '3 files, npy f32']);
      expect(asNumbers(ds, f16ToF32)).toEqual(Array.from(wide(0, 3337)));
      const bad = wide(1002, 3337);
      bad[700 * 37 + 5] = Infinity;
      const file = path.join(at, 'p2.npy');
      fs.writeFileSync(file, npyBytes({ descr: '<f4', shape: [3337 - 1002, 37], body: new Uint8Array(bad.buffer) }));
      const alone = await readInputs(file).then(() => 'read', (e: Error) => e.message);
      expect(alone).toMatch(/row 700/);
      await expect(readInputs(at)).rejects.toThrow(alone);
      const dropped = await readInputs(at, { dropInvalid: true });
      expect([dropped.n, dropped.dropped, dropped.droppedRows]).toEqual([3336, 1, [1702]]);
    } finally {
      setParallelReadForTests();
    }
  });

  it('every file must have the same dimension and element type (a clear error naming both files)', async () => {
    const at = path.join(dir, 'mismatch');
    fs.rmSync(at, { recursive: true, force: true });
    fs.mkdirSync(at);
    writeFile(at, 'a.npy', npyBytes({ descr: '<f4', shape: [3, 4] }));
    writeFile(at, 'b.npy', npyBytes({ descr: '<f4', shape: [3, 5] }));
    await expectUsage(readInputs(at), /b\.npy: 5-dimensional vectors, but .*a\.npy holds 4; every file of a sharded input must have the same dimension/);
    fs.rmSync(path.join(at, 'b.npy'));
    writeFile(at, 'c.npy', npyBytes({ descr: '<f2', shape: [3, 4] }));
    await expectUsage(readInputs(at), /c\.npy: f16 vectors, but .*a\.npy holds f32; every file of a sharded input must have the same element type/);
  });
});

describe('vlc compress over shards', () => {
  it("a quoted glob, a directory and the files listed give the bytes of the same rows in one file", async () => {
    const at = await shardDir('cli', ['npy', 'parquet']);
    const one = path.join(dir, 'cli-one.npy');
    await writeVectors(one, rowsOf(block(0, 30), 30, d), { format: 'npy' });
    const out = (tag: string) => path.join(dir, `cli-${tag}.vlc`);
    const common = ['--anchors', '4', '--device', 'cpu', '--iters', '10'];
    for (const [tag, args] of [
      ['one', [one]],
      ['glob', [path.join(at, 'part-*')]],
      ['dir', [at]],
      ['list', expandInputs([at]).reverse()],
    ] as [string, string[]][]) {
      const r = vlc(['compress', ...args, '-o', out(tag), ...common]);
      expect(r.code, r.stderr).toBe(0);
    }
    const want = fs.readFileSync(out('one'));
    for (const tag of ['glob', 'dir', 'list']) expect(fs.readFileSync(out(tag)).equals(want), tag).toBe(true);
    const bad = vlc(['compress', path.join(at, 'nope-*'), '-o', out('bad'), ...common]);
    expect([bad.code, bad.stderr.trim().split('\n').length]).toEqual([2, 1]);
    expect(bad.stderr).toMatch(/no file matches this pattern/);
    expect(fs.existsSync(out('bad'))).toBe(false);
  }, 120_000);
});
