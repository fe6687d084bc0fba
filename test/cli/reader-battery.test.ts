// Every reader against the same four kinds of hostile file (issue 16's battery, issue 12's
// "malformed headers per format"): cut short, a header (or structure) that lies about its size,
// a NaN among the values, and a value type vlc does not read. Each file goes through the CLI as a
// user would give it (`vlc compress <file> -o out.vlc`); every case must exit 2 with one stderr line
// that names the file and says what is wrong, print no stack trace, and leave no output (nor temp
// file), an existing output untouched.
import { spawn } from 'node:child_process';
import * as fs from 'node:fs';
import * as path from 'node:path';
import { Field, Int32, List, makeData, RecordBatch, RecordBatchFileWriter, RecordBatchStreamWriter, Schema, Struct, Utf8, vectorFromArray } from 'apache-arrow';
import h5wasm from 'h5wasm/node';
import { parquetWriteBuffer } from 'hyparquet-writer';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { largeListFile } from '../io/arrow-writers.js';
import { zipBytes } from '../io/zip-writer.js';
import { BIN, npyBytes, tempDir } from './helpers.js';

const N = 40;
const D = 8;
const x = Float32Array.from({ length: N * D }, (_, i) => ((i * 7) % 23) * 0.25 - 2);
const withNaN = x.slice();
withNaN[13 * D + 5] = NaN; // row 13
const bytesOf = (a: ArrayBufferView) => new Uint8Array(a.buffer, a.byteOffset, a.byteLength);
const cut = (b: Uint8Array, keep: number) => b.subarray(0, Math.floor(b.length * keep));

interface Case {
  /** Format, then what is wrong. */
  name: string;
  /** The input file's name (written by make). */
  file: string;
  make: (file: string) => void | Promise<void>;
  /** Extra compress options (raw needs --dim, a forced --format). */
  args?: string[];
  /** What the one stderr line must say, besides naming the file. */
  says: RegExp;
}

// --- the formats' writers, each as small as the format allows ---------------------------------

const npy = (descr: string, shape: number[], body: Uint8Array) => npyBytes(descr, shape, body);

function safetensors(dtype: string, shape: number[], body: Uint8Array, offsets?: [number, number]): Uint8Array {
  const json = Buffer.from(JSON.stringify({ emb: { dtype, shape, data_offsets: offsets ?? [0, body.length] } }));
  const len = Buffer.alloc(8);
  len.writeBigUInt64LE(BigInt(json.length));
  return Buffer.concat([len, json, body]);
}

function vecs(values: Float32Array | Uint8Array, n: number, d: number, dimOf = (_i: number) => d): Uint8Array {
  const eb = values.BYTES_PER_ELEMENT;
  const out = Buffer.alloc(n * (4 + d * eb));
  for (let i = 0; i < n; i++) {
    out.writeInt32LE(dimOf(i), i * (4 + d * eb));
    out.set(bytesOf(values.subarray(i * d, (i + 1) * d)), i * (4 + d * eb) + 4);
  }
  return out;
}

const rowsText = (v: Float32Array, sep: string, bad?: (i: number, row: string[]) => string[]) =>
  Array.from({ length: N }, (_, i) => {
    const row = Array.from(v.subarray(i * D, (i + 1) * D), String);
    return (bad ? bad(i, row) : row).join(sep);
  }).join('\n') + '\n';

const jsonl = (v: Float32Array, bad?: (i: number, row: unknown[]) => unknown[]) =>
  Array.from({ length: N }, (_, i) => {
    const row: unknown[] = Array.from(v.subarray(i * D, (i + 1) * D));
    return `{"id": ${i}, "embedding": ${JSON.stringify(bad ? bad(i, row) : row).replace(/null/g, 'NaN')}}`;
  }).join('\n') + '\n';

/** An Arrow file with one List<Int32> column, or one Utf8 column: no float vectors anywhere. */
function arrowWithout(file: string, kind: 'ints' | 'text'): void {
  const field = kind === 'ints' ? new Field('vec', new List(new Field('item', new Int32(), false)), false) : new Field('vec', new Utf8(), false);
  const schema = new Schema([field]);
  const column =
    kind === 'ints'
      ? makeData({ type: field.type as List<Int32>, length: N, nullCount: 0, valueOffsets: Int32Array.from({ length: N + 1 }, (_, i) => i * D), child: vectorFromArray(Int32Array.from({ length: N * D }, (_, i) => i)).data[0] })
      : vectorFromArray(Array.from({ length: N }, (_, i) => `row ${i}`), new Utf8()).data[0];
  const w = new RecordBatchFileWriter();
  w.write(new RecordBatch(schema, makeData({ type: new Struct(schema.fields), length: N, nullCount: 0, children: [column] })));
  w.finish();
  fs.writeFileSync(file, w.toUint8Array(true));
}

/** Arrow stream or file of x (LargeList<Float32>), through the writer the reader tests use. */
function arrowOf(file: string, v: Float32Array, stream = false): Uint8Array {
  const made = largeListFile(path.dirname(file), `.${path.basename(file)}.tmp`, v, N, D, { batchRows: 16, stream });
  const b = fs.readFileSync(made);
  fs.rmSync(made);
  return b;
}

function parquet(rows: unknown[], leaf: Record<string, unknown>): Uint8Array {
  const buf = parquetWriteBuffer({
    columnData: [{ name: 'embedding', data: rows }],
    schema: [
      { name: 'root', num_children: 1 },
      { name: 'embedding', repetition_type: 'OPTIONAL', converted_type: 'LIST', num_children: 1 },
      { name: 'list', repetition_type: 'REPEATED', num_children: 1 },
      { name: 'element', repetition_type: 'REQUIRED', ...leaf },
    ] as never,
  });
  return new Uint8Array(buf);
}
const matrixRows = (v: Float32Array) => Array.from({ length: N }, (_, i) => Array.from(v.subarray(i * D, (i + 1) * D)));

async function hdf5(file: string, data: Float32Array | Int32Array, dtype: '<f4' | '<i4', shape = [N, D]): Promise<void> {
  await h5wasm.ready;
  const f = new h5wasm.File(file, 'w');
  f.create_dataset({ name: 'train', data, shape, dtype });
  f.close();
}

const put = (bytes: Uint8Array | string) => (file: string) => fs.writeFileSync(file, bytes);

// --- the cases ----------------------------------------------------------------------------------

const goodNpy = npy('<f4', [N, D], bytesOf(x));
const goodSt = safetensors('F32', [N, D], bytesOf(x));
const goodFvecs = vecs(x, N, D);
const goodArrow = (f: string) => arrowOf(f, x);

const cases: Case[] = [
  // .npy
  { name: 'npy cut inside its data', file: 'cut.npy', make: put(cut(goodNpy, 0.6)), says: /truncated \.npy: shape 40 × 8 f32 needs 1280 data bytes, the file has 716/ },
  { name: 'npy cut inside its header', file: 'cut-head.npy', make: put(goodNpy.subarray(0, 30)), says: /truncated \.npy header: it says 118 bytes, the input has 20/ },
  { name: 'npy header claiming twice the rows', file: 'lying.npy', make: put(npy('<f4', [2 * N, D], bytesOf(x))), says: /shape 80 × 8 f32 needs 2560 data bytes, the file has 1280/ },
  { name: 'npy header claiming a 2^40-row shape', file: 'huge.npy', make: put(npy('<f4', [2 ** 40, D], bytesOf(x))), says: /shape 1099511627776 × 8 f32 needs 35184372088832 data bytes, the file has 1280/ },
  { name: 'npy with a NaN', file: 'nan.npy', make: put(npy('<f4', [N, D], bytesOf(withNaN))), says: /row 13 has a non-finite value \(NaN in dimension 5\); fix the data or pass --drop-invalid/ },
  { name: 'npy of int32', file: 'int.npy', make: put(npy('<i4', [N, D], bytesOf(Int32Array.from(x, Math.round)))), says: /dtype '<i4'/ },
  { name: 'npy of strings', file: 'str.npy', make: put(npy('<U4', [N, D / 2], bytesOf(x))), says: /dtype '<U4'/ },
  // .npz
  { name: 'npz cut in half', file: 'cut.npz', make: put(cut(zipBytes([{ name: 'x.npy', data: goodNpy }]), 0.5)), says: /not a valid zip\/\.npz archive: no end-of-central-directory record \(truncated\?\)/ },
  { name: 'npz whose member lies about its shape', file: 'lying.npz', make: put(zipBytes([{ name: 'x.npy', data: npy('<f4', [2 * N, D], bytesOf(x)) }])), says: /shape 80 × 8 f32 needs 2560 data bytes/ },
  { name: 'npz with a NaN', file: 'nan.npz', make: put(zipBytes([{ name: 'x.npy', data: npy('<f4', [N, D], bytesOf(withNaN)), deflate: true }])), says: /row 13 has a non-finite value \(NaN in dimension 5\)/ },
  { name: 'npz holding only int arrays', file: 'int.npz', make: put(zipBytes([{ name: 'x.npy', data: npy('<i8', [N, D / 2], bytesOf(x)) }])), says: /unsupported dtype '<i8' \(int64\)/ },
  // safetensors
  { name: 'safetensors cut inside its data', file: 'cut.safetensors', make: put(cut(goodSt, 0.7)), says: /tensor 'emb' ends at data byte 1280, past the 874 bytes of data in the file/ },
  { name: 'safetensors offsets past the end', file: 'lying.safetensors', make: put(safetensors('F32', [N, D], bytesOf(x), [0, 4 * N * D + 4096])), says: /shape \[40, 8\] F32 needs 1280 bytes but its data_offsets span 5376/ },
  { name: 'safetensors negative offset', file: 'neg.safetensors', make: put(safetensors('F32', [N, D], bytesOf(x), [-64, 4 * N * D - 64])), says: /data_offsets \[-64, 1216\]: they must satisfy 0 <= begin <= end/ },
  { name: 'safetensors with a NaN', file: 'nan.safetensors', make: put(safetensors('F32', [N, D], bytesOf(withNaN))), says: /row 13 has a non-finite value \(NaN in dimension 5\)/ },
  { name: 'safetensors of I32', file: 'int.safetensors', make: put(safetensors('I32', [N, D], bytesOf(x))), says: /unsupported dtype I32/ },
  // fvecs / bvecs
  { name: 'fvecs cut inside a record', file: 'cut.fvecs', make: put(goodFvecs.subarray(0, goodFvecs.length - 10)), says: /truncated \.fvecs: 40 records of dimension 8 need 1440 bytes, the file has 1430/ },
  { name: 'fvecs whose dimension claims more than the file', file: 'lying.fvecs', make: put(vecs(x, N, D, () => 4096)), says: /truncated \.fvecs: one 4096-dim record needs 16388 bytes, the file has 1440/ },
  { name: 'fvecs with a NaN', file: 'nan.fvecs', make: put(vecs(withNaN, N, D)), says: /row 13 has a non-finite value \(NaN in dimension 5\)/ },
  { name: 'fvecs with a record of another dimension', file: 'ragged.fvecs', make: put(vecs(x, N, D, (i) => (i === 20 ? D - 1 : D))), says: /record 20 has dimension 7/ },
  { name: 'bvecs cut inside a record', file: 'cut.bvecs', make: put(vecs(new Uint8Array(N * D), N, D).subarray(0, 4 + D + 3)), says: /truncated \.bvecs: 2 records of dimension 8 need 24 bytes, the file has 15/ },
  // raw
  { name: 'raw not a whole number of rows', file: 'cut.f32', make: put(bytesOf(x).subarray(0, 4 * N * D - 12)), args: ['--format', 'raw', '--dim', String(D)], says: /not a whole number of 8-dim vectors/ },
  { name: 'raw with a NaN', file: 'nan.f32', make: put(bytesOf(withNaN)), args: ['--format', 'raw', '--dim', String(D)], says: /row 13 has a non-finite value \(NaN in dimension 5\)/ },
  { name: 'raw without --dim', file: 'nodim.f32', make: put(bytesOf(x)), args: ['--format', 'raw'], says: /needs its dimension: pass --dim/ },
  // CSV / TSV
  { name: 'csv whose last line is cut short', file: 'cut.csv', make: put(rowsText(x, ',').slice(0, -9) + '\n'), says: /CSV line 40 has 6 values but line 1 \(the first row\) has 8/ },
  { name: 'csv with a ragged line', file: 'ragged.csv', make: put(rowsText(x, ',', (i, r) => (i === 17 ? r.slice(1) : r))), says: /line 18 has 7/ },
  { name: 'csv with nan written out', file: 'nan.csv', make: put(rowsText(x, ',', (i, r) => (i === 13 ? ['nan', ...r.slice(1)] : r))), says: /row 13 has a non-finite value \(NaN in dimension 0\)/ },
  { name: 'csv with a word among the numbers', file: 'word.csv', make: put(rowsText(x, ',', (i, r) => (i === 9 ? ['abc', ...r.slice(1)] : r))), says: /line 10.*'abc'/ },
  { name: 'tsv with a ragged line', file: 'ragged.tsv', make: put(rowsText(x, '\t', (i, r) => (i === 5 ? [...r, '1'] : r))), says: /line 6 has 9/ },
  // JSON Lines
  { name: 'jsonl whose last line is cut inside its JSON', file: 'cut.jsonl', make: put(jsonl(x).slice(0, -15)), says: /line 40 is not valid JSON/ },
  { name: 'jsonl with a ragged vector', file: 'ragged.jsonl', make: put(jsonl(x, (i, r) => (i === 3 ? r.slice(2) : r))), says: /line 4: field 'embedding' has 6 values but the first vector has 8/ },
  { name: 'jsonl with a NaN token', file: 'nan.jsonl', make: put(jsonl(x, (i, r) => (i === 13 ? [null, ...r.slice(1)] : r))), says: /line 14 is not valid JSON/ },
  { name: 'jsonl with strings for numbers', file: 'str.jsonl', make: put(jsonl(x, (i, r) => (i === 2 ? r.map(String) : r))), says: /line 3: field 'embedding' value 0 is not a number \("3"\)/ },
  // Arrow
  { name: 'arrow file cut in half', file: 'cut.arrow', make: (f) => fs.writeFileSync(f, cut(goodArrow(f), 0.5)), says: /truncated Arrow IPC file: it starts with the ARROW1 magic but does not end with it/ },
  { name: 'arrow stream cut inside a batch', file: 'cut-stream.arrows', make: (f) => fs.writeFileSync(f, cut(arrowOf(f, x, true), 0.6)), says: /corrupt Arrow framing \(message body runs past the end\)/ },
  { name: 'arrow with a NaN', file: 'nan.arrow', make: (f) => fs.writeFileSync(f, arrowOf(f, withNaN)), says: /row 13 has a non-finite value \(NaN in dimension 5\)/ },
  { name: 'arrow with int lists', file: 'int.arrow', make: (f) => arrowWithout(f, 'ints'), says: /no vector column: columns are vec \(List<Int32>\)/ },
  { name: 'arrow with text', file: 'text.arrow', make: (f) => arrowWithout(f, 'text'), says: /no vector column: columns are vec \(Utf8\)/ },
  // Parquet
  { name: 'parquet cut in half', file: 'cut.parquet', make: put(cut(parquet(matrixRows(x), { type: 'FLOAT' }), 0.5)), says: /not a readable Parquet file/ },
  { name: 'parquet with a NaN', file: 'nan.parquet', make: put(parquet(matrixRows(withNaN), { type: 'FLOAT' })), says: /row 13 has a non-finite value \(NaN in dimension 5\)/ },
  { name: 'parquet with int lists', file: 'int.parquet', make: put(parquet(matrixRows(x).map((r) => r.map(Math.round)), { type: 'INT32' })), says: /no vector column: columns are embedding \(LIST\); vectors must be a list of FLOAT/ },
  { name: 'parquet with a ragged row', file: 'ragged.parquet', make: put(parquet(matrixRows(x).map((r, i) => (i === 11 ? r.slice(3) : r)), { type: 'FLOAT' })), says: /row 11 of column 'embedding' has 5 values but the first row has 8/ },
  { name: 'parquet with a null vector', file: 'null.parquet', make: put(parquet(matrixRows(x).map((r, i) => (i === 7 ? null : r)), { type: 'FLOAT' })), says: /row 7 of column 'embedding' is null or has null values/ },
  // HDF5
  { name: 'hdf5 cut in half', file: 'cut.h5', make: async (f) => (await hdf5(f, x, '<f4'), fs.writeFileSync(f, cut(fs.readFileSync(f), 0.5))), says: /not a readable HDF5 file \(truncated file/ },
  { name: 'hdf5 with a NaN', file: 'nan.h5', make: (f) => hdf5(f, withNaN, '<f4'), says: /row 13 has a non-finite value \(NaN in dimension 5\)/ },
  { name: 'hdf5 of int32', file: 'int.h5', make: (f) => hdf5(f, Int32Array.from(x, Math.round), '<i4'), says: /has no 2-D float dataset; pick one with --dataset NAME \(datasets: \/train \(<i 40 × 8\)\)/ },
  { name: 'hdf5 of a 1-D array', file: 'flat.h5', make: (f) => hdf5(f, x, '<f4', [N * D]), says: /has no 2-D float dataset; pick one with --dataset NAME \(datasets: \/train \(f32 320\)\)/ },
];

let dir: string;
const results = new Map<string, { code: number | null; stderr: string; stdout: string; files: string[]; untouched: boolean }>();

/**
 * `vlc compress <file> -o case-<i>/out.vlc`, then again with --force over case-<i>/exists.vlc,
 * which must stay as it was. Each case writes in its own directory (where temp files would be).
 */
async function runCase(c: Case, i: number): Promise<void> {
  const outDir = path.join(dir, `case-${i}`);
  fs.mkdirSync(outDir);
  const existing = path.join(outDir, 'exists.vlc');
  fs.writeFileSync(existing, 'keep me');
  const r = await spawnCompress(c, path.join(outDir, 'out.vlc'));
  const again = await spawnCompress(c, existing, ['--force']);
  const untouched = fs.readFileSync(existing, 'utf8') === 'keep me' && again.code === r.code;
  results.set(c.name, { ...r, files: fs.readdirSync(outDir).filter((f) => f !== 'exists.vlc'), untouched });
}

function spawnCompress(c: Case, out: string, extra: string[] = []): Promise<{ code: number | null; stderr: string; stdout: string }> {
  const child = spawn(process.execPath, [BIN, 'compress', c.file, '-o', out, '--device', 'cpu', '--iters', '2', '--anchors', '4', ...(c.args ?? []), ...extra], { cwd: dir });
  let stderr = '';
  let stdout = '';
  child.stderr.on('data', (b) => (stderr += String(b)));
  child.stdout.on('data', (b) => (stdout += String(b)));
  return new Promise((resolve) => child.on('close', (code) => resolve({ code, stderr, stdout })));
}

const inputs = new Set<string>();

beforeAll(async () => {
  dir = tempDir('battery');
  for (const c of cases) {
    await c.make(path.join(dir, c.file));
    inputs.add(c.file);
  }
  // Three at a time: each case is a node start-up, the machine's cores are few.
  let next = 0;
  const worker = async () => {
    while (next < cases.length) {
      const i = next++;
      await runCase(cases[i], i);
    }
  };
  await Promise.all([worker(), worker(), worker()]);
}, 600_000);
afterAll(() => fs.rmSync(dir, { recursive: true, force: true }));

describe('every reader refuses truncated, lying, NaN-holding and wrongly typed files: exit 2, one line, nothing written', () => {
  it('covers every input format, four kinds of damage', () => {
    const formats = new Set(cases.map((c) => c.name.split(' ')[0]));
    expect([...formats].sort()).toEqual(['arrow', 'bvecs', 'csv', 'fvecs', 'hdf5', 'jsonl', 'npy', 'npz', 'parquet', 'raw', 'safetensors', 'tsv']);
    expect(cases.length).toBeGreaterThanOrEqual(45);
  });
  it.each(cases.map((c) => [c.name, c] as const))('%s', (_name, c) => {
    const r = results.get(c.name)!;
    if (process.env.BATTERY_SHOW) console.log(`${c.name} => ${r.code} ${r.stderr}`);
    const lines = r.stderr.split('\n').filter((l) => l !== '');
    expect(lines, r.stderr).toHaveLength(1);
    expect(lines[0]).toMatch(new RegExp(`^vlc: ${c.file.replace(/\./g, '\\.')}: `));
    expect(lines[0]).toMatch(c.says);
    expect(r.stderr).not.toMatch(/\n\s+at |TypeError|RangeError|ReferenceError|node:internal|Cannot read prop/);
    expect(r.code, r.stderr).toBe(2);
    expect(r.stdout).toBe('');
    expect(r.files, 'left behind').toEqual([]);
    expect(r.untouched, 'an existing output was replaced (with --force) although the input was bad').toBe(true);
  });
  it('the inputs are as they were written, and nothing else appeared beside them', () => {
    expect(fs.readdirSync(dir).filter((f) => !inputs.has(f) && !/^case-\d+$/.test(f))).toEqual([]);
  });
});
