// Inputs larger than a typed array can hold (> 4 GiB, > 2^32 values) without multi-gigabyte
// fixtures: every reader, writer and command reads the vectors through views of at most
// maxViewBytes (src/vectors/dataset.ts). Here that limit is a few rows, so each path must take many
// views — and split rows between pieces, chunks and collector blocks at awkward places — and give
// exactly what it gives with the default limit.
import * as fs from 'node:fs';
import * as path from 'node:path';
import { Worker } from 'node:worker_threads';
import { afterEach, describe, expect, it } from 'vitest';
import { allocDataset, datasetFromArray, f16ToF32, f32ToF16, forEachPiece, listedRowsF32, rows, selectRows, setMaxViewBytesForTests, viewAll, type Dataset } from '../../dist/vectors/dataset.js';
import { readDataset } from '../../dist/io/read.js';
import { writeVectors, type VectorFormat } from '../../dist/io/write.js';
import { rowsOf } from '../../dist/io/rows.js';
import { compress } from '../../dist/api/compress.js';
import { decompress } from '../../dist/api/decompress.js';
import { evaluateFile as evaluate } from '../../dist/api/evaluate.js';
import { readVlc } from '../../dist/io/vlc/file.js';
import { toPortable } from '../../dist/backend/cpu/shared.js';
import { asNumbers, matrix, npyBytes, scratchDir, writeFile } from './helpers.js';
import { zipBytes } from './zip-writer.js';

const dir = scratchDir('view-limit');
const n = 37, d = 13;
/** Three rows of f32 and a bit: views of 3 rows (f32) or 6 (f16), never a row boundary of the file's chunks. */
const SMALL = 3 * d * 4 + 8;

afterEach(() => setMaxViewBytesForTests());

/** Read `file` with the default limit and with SMALL; both must agree value for value. */
async function sameUnderSmallLimit(file: string, o: Parameters<typeof readDataset>[1] = {}): Promise<Dataset> {
  const want = await readDataset(file, o);
  setMaxViewBytesForTests(SMALL);
  const got = await readDataset(file, o);
  setMaxViewBytesForTests();
  expect([got.n, got.d, got.dtype, got.dropped]).toEqual([want.n, want.d, want.dtype, want.dropped]);
  expect(asNumbers(got, f16ToF32)).toEqual(asNumbers(want, f16ToF32));
  return got;
}

describe('readers under a view limit of a few rows', () => {
  const x = matrix(n, d);
  it.each(['npy', 'arrow', 'parquet', 'safetensors', 'fvecs'] as VectorFormat[])('%s written by vlc', async (format) => {
    const p = path.join(dir, `x.${format}`);
    await writeVectors(p, rowsOf(x, n, d), { format });
    const ds = await sameUnderSmallLimit(p);
    expect(asNumbers(ds, f16ToF32)).toEqual(Array.from(x));
  });

  it.each([
    ['f16 npy', { descr: '<f2', shape: [n, d] }],
    ['f64 npy', { descr: '<f8', shape: [n, d] }],
    ['u8 npy', { descr: '|u1', shape: [n, d] }],
    ['Fortran-order npy', { descr: '<f4', shape: [n, d], fortran: true }],
  ])('%s', async (label, spec) => {
    await sameUnderSmallLimit(writeFile(dir, `${label.replace(/\W+/g, '-')}.npy`, npyBytes(spec)));
  });

  it('npz (stored and deflated), raw, CSV and JSONL', async () => {
    const npy = npyBytes({ descr: '<f4', shape: [n, d] });
    await sameUnderSmallLimit(writeFile(dir, 'x.npz', zipBytes([{ name: 'a.npy', data: npy, deflate: true }])));
    await sameUnderSmallLimit(writeFile(dir, 'x0.npz', zipBytes([{ name: 'a.npy', data: npy }])));
    await sameUnderSmallLimit(writeFile(dir, 'x.raw', new Uint8Array(x.buffer)), { dim: d });
    const lines = Array.from({ length: n }, (_, i) => Array.from(x.subarray(i * d, (i + 1) * d)));
    await sameUnderSmallLimit(writeFile(dir, 'x.csv', lines.map((l) => l.join(',')).join('\n') + '\n'));
    await sameUnderSmallLimit(writeFile(dir, 'x.jsonl', lines.map((l) => JSON.stringify({ embedding: l })).join('\n') + '\n'));
  });

  it('--drop-invalid keeps the good rows in order across pieces', async () => {
    const bad = matrix(n, d);
    for (const r of [0, 4, 5, 17, 36]) bad[r * d + (r % d)] = NaN;
    const p = writeFile(dir, 'nan.npy', npyBytes({ descr: '<f4', shape: [n, d], body: new Uint8Array(bad.buffer) }));
    const ds = await sameUnderSmallLimit(p, { dropInvalid: true });
    expect([ds.n, ds.dropped]).toEqual([n - 5, 5]);
  });
});

describe('datasets in pieces', () => {
  it('a view never exceeds the limit: whole-array access fails loudly, pieces cover every row once', () => {
    const ds = datasetFromArray(matrix(n, d), n, d);
    setMaxViewBytesForTests(SMALL);
    expect(() => viewAll(ds)).toThrow(/view limit/);
    const seen: number[] = [];
    forEachPiece(ds, (v, r0, r1) => {
      expect(v.byteLength).toBeLessThanOrEqual(SMALL);
      for (let r = r0; r < r1; r++) seen.push(r);
    });
    expect(seen).toEqual(Array.from({ length: n }, (_, i) => i));
    const picked = selectRows(ds, [36, 0, 7]);
    expect(Array.from(rows(picked, 1, 2))).toEqual(Array.from(matrix(n, d).subarray(0, d)));
  });

  it('listedRowsF32 reads scattered rows across pieces, f32 and f16, into a given array or a fresh one', () => {
    const x = matrix(n, d);
    const list = [36, 0, 7, 7, 35, 2, 19];
    const want = list.flatMap((i) => Array.from(x.subarray(i * d, (i + 1) * d)));
    const half = Uint16Array.from(x, f32ToF16);
    const wantHalf = list.flatMap((i) => Array.from(half.subarray(i * d, (i + 1) * d), f16ToF32));
    setMaxViewBytesForTests(SMALL);
    expect(Array.from(listedRowsF32(datasetFromArray(x, n, d), list))).toEqual(want);
    const into = new Float32Array((list.length + 1) * d).fill(-1);
    const got = listedRowsF32(datasetFromArray(half, n, d), Int32Array.from(list), into.subarray(0, list.length * d));
    expect(got.buffer).toBe(into.buffer);
    expect(Array.from(got)).toEqual(wantHalf);
    expect(into[list.length * d]).toBe(-1); // nothing past the rows asked for
    expect(() => listedRowsF32(datasetFromArray(x, n, d), [n])).toThrow(/out of range/);
    expect(() => listedRowsF32(datasetFromArray(x, n, d), [1, 2], new Float32Array(d))).toThrow(/room for 1 rows/);
  });

  it('a worker sees every byte of a shared buffer past 4 GiB (typed arrays posted whole arrive truncated)', async (ctx) => {
    let big: Dataset;
    try {
      // Lazily zeroed: only the pages written below take memory.
      big = { ...allocDataset(4, 2, 'f32', 'test'), buffer: new SharedArrayBuffer(2 ** 32 + 4096), byteOffset: 2 ** 32 };
    } catch {
      ctx.skip(); // a machine that cannot reserve 4 GiB of address space
      return;
    }
    const view = new Float32Array(big.buffer, big.byteOffset, 8);
    view.set([1, 2, 3, 4, 5, 6, 7, 8]);
    const st = toPortable({ x: new Float32Array(big.buffer, 0, 2 ** 30 + 8) } as never) as unknown as { x: { buffer: SharedArrayBuffer; byteOffset: number; length: number } };
    const code = `const { parentPort } = require('node:worker_threads');
      parentPort.once('message', (m) => {
        const whole = new Float32Array(m.x.buffer, m.x.byteOffset, m.x.length);
        const posted = m.view;
        parentPort.postMessage([whole.length, Array.from(whole.subarray(whole.length - 8)), posted.length]);
      });`;
    const w = new Worker(code, { eval: true });
    try {
      const got = await new Promise<[number, number[], number]>((resolve, reject) => {
        w.once('message', resolve);
        w.once('error', reject);
        w.postMessage({ x: st.x, view: new Float32Array(big.buffer, 0, 2 ** 30 + 8) });
      });
      expect(got[0]).toBe(2 ** 30 + 8);
      expect(got[1]).toEqual([1, 2, 3, 4, 5, 6, 7, 8]);
      expect(got[2]).not.toBe(2 ** 30 + 8); // why toPortable exists: V8 keeps 32 bits of the posted length
    } finally {
      await w.terminate();
    }
  });
});

describe('compress, decompress and eval under a view limit of a few rows', () => {
  it('give the same bytes and figures as with the default limit', async () => {
    const N = 611, D = 9;
    const x = Float32Array.from({ length: N * D }, (_, i) => Math.fround(Math.sin(i * 0.37) * 3 + (i % 7)));
    const input = path.join(dir, 'big.npy');
    await writeVectors(input, rowsOf(x, N, D), { format: 'npy' });
    const run = async (tag: string) => {
      const out = path.join(dir, `big-${tag}.vlc`);
      await compress(input, { output: out, anchors: 24, device: 'cpu', iters: 12, residual: 'int8' });
      const outputs: Record<string, Buffer> = { vlc: fs.readFileSync(out) };
      for (const f of ['npy', 'arrow', 'parquet', 'safetensors', 'fvecs']) {
        const back = path.join(dir, `big-${tag}.${f}`);
        await decompress(out, { output: back });
        outputs[f] = fs.readFileSync(back);
      }
      const ev = await evaluate(await readDataset(input), await readVlc(out), { queries: 50, seed: 3 });
      return { outputs, ev };
    };
    const want = await run('default');
    setMaxViewBytesForTests(25 * D * 4 + 4); // 25 rows a view: 25 pieces
    const got = await run('small');
    for (const k of Object.keys(want.outputs)) expect(got.outputs[k].equals(want.outputs[k]), k).toBe(true);
    expect(got.ev).toEqual(want.ev);
  }, 120_000);

  // The codec choice, the residual encoders (int4, pq; int8 above) and the quality figures read the
  // vectors a piece at a time, f32 or f16: never as one array, which could not exceed 2^32 − 1 values.
  it.each([
    ['the default codec choice, f32', 'f32', {}],
    ['int4, f16', 'f16', { residual: 'int4' as const }],
    ['pq, f32', 'f32', { residual: 'pq' as const }],
    ['the default codec choice, f16', 'f16', {}],
  ])('%s: the same file and eval figures', async (label, dtype, opts) => {
    const N = 523, D = 12;
    const spec = { descr: dtype === 'f16' ? '<f2' : '<f4', shape: [N, D] };
    const input = writeFile(dir, `pieces-${label.replace(/\W+/g, '-')}.npy`, npyBytes(spec));
    const run = async (tag: string) => {
      const out = path.join(dir, `pieces-${tag}.vlc`);
      fs.rmSync(out, { force: true });
      await compress(input, { output: out, anchors: 20, device: 'cpu', iters: 10, ...opts });
      const ev = await evaluate(await readDataset(input), await readVlc(out), { queries: 40, seed: 5 });
      return { vlc: fs.readFileSync(out), ev };
    };
    const want = await run('default');
    setMaxViewBytesForTests(7 * D * 4 + 4); // 7 f32 rows a view (14 f16 rows)
    const got = await run('small');
    expect(got.vlc.equals(want.vlc)).toBe(true);
    expect(got.ev).toEqual(want.ev);
  }, 120_000);
});
