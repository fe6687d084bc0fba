import * as fs from 'node:fs';
import * as path from 'node:path';
import { describe, expect, it } from 'vitest';
import {
  Field,
  FixedSizeList,
  Float32,
  Float64,
  Int32,
  List,
  makeData,
  RecordBatch,
  RecordBatchFileWriter,
  RecordBatchReader,
  RecordBatchStreamWriter,
  Schema,
  Struct,
  Utf8,
  vectorFromArray,
} from 'apache-arrow';
import { readDataset } from '../../dist/io/read.js';
import { f16ToF32, viewAll } from '../../dist/vectors/dataset.js';
import { lz4FrameDecode, lz4FrameEncode } from '../../dist/io/lz4.js';
import { writeArrow } from '../../dist/io/writers/arrow.js';
import { writeOutput } from '../../dist/io/output.js';
import { rowsOf as rowSource } from '../../dist/io/rows.js';
import { readArrowDirect } from '../../dist/io/readers/arrow-direct.js';
import { openFileSource } from '../../dist/io/readers/source.js';
import { readParquetDirect } from '../../dist/io/readers/parquet-direct.js';
import { parquetMetadataAsync } from 'hyparquet';
import { asNumbers, expectUsage, matrix, scratchDir, writeFile } from './helpers.js';

const dir = scratchDir('arrow');
const fixtures = path.join(path.dirname(new URL(import.meta.url).pathname), 'fixtures');
const want = Array.from(matrix(7, 13));

async function writeOurArrow(name: string, o: Parameters<typeof writeArrow>[2], n = 7, d = 13): Promise<string> {
  const p = path.join(dir, name);
  await writeOutput(p, (sink) => writeArrow(sink, rowSource(matrix(n, d), n, d), o));
  return p;
}

/** An Arrow file with a List<elem> column (+ an id column), rows given as arrays (null = null row). */
function listFile(name: string, rows: (number[] | null)[], elem: Float32 | Float64, stream = false): string {
  const offsets = new Int32Array(rows.length + 1);
  rows.forEach((r, i) => (offsets[i + 1] = offsets[i] + (r?.length ?? 0)));
  const flat = rows.flatMap((r) => r ?? []);
  const values = elem instanceof Float64 ? new Float64Array(flat) : new Float32Array(flat);
  const child = makeData({ type: elem, length: flat.length, nullCount: 0, data: values });
  const nullBitmap = new Uint8Array(Math.ceil(rows.length / 8));
  rows.forEach((r, i) => r && (nullBitmap[i >> 3] |= 1 << (i & 7)));
  const nulls = rows.filter((r) => r === null).length;
  const listType = new List(new Field('item', elem, false));
  const list = makeData({ type: listType, length: rows.length, nullCount: nulls, nullBitmap, valueOffsets: offsets, child });
  const ids = vectorFromArray(rows.map((_, i) => i), new Int32()).data[0];
  const schema = new Schema([new Field('id', new Int32(), false), new Field('vec', listType, true)]);
  const batch = new RecordBatch(schema, makeData({ type: new Struct(schema.fields), length: rows.length, nullCount: 0, children: [ids, list] }));
  const writer = stream ? new RecordBatchStreamWriter() : new RecordBatchFileWriter();
  writer.write(batch);
  writer.finish();
  return writeFile(dir, name, writer.toUint8Array(true));
}

/** What the Arrow fast path makes of column `col` (undefined: it leaves the file to apache-arrow). */
async function direct(p: string, col: number) {
  const src = openFileSource(p);
  const handle = await fs.promises.open(p);
  try {
    const reader = await RecordBatchReader.from(handle);
    await reader.open();
    return await readArrowDirect(src, reader, col); // awaited here: finally closes the source
  } finally {
    await handle.close();
    src.close();
  }
}

const rowsOf = (x: Float32Array, d: number) => Array.from({ length: x.length / d }, (_, i) => Array.from(x.subarray(i * d, (i + 1) * d)));

describe('Arrow IPC', () => {
  it.each([
    ['file f32', 'a.arrow', { dtype: 'f32' }, 'f32'],
    ['file f16', 'b.feather', { dtype: 'f16' }, 'f16'],
    ['stream f32', 'c.arrows', { dtype: 'f32', ipc: 'stream' }, 'f32'],
    ['stream f16, 3 batches', 'd.arrow', { dtype: 'f16', ipc: 'stream', batchRows: 3 }, 'f16'],
    ['Feather with LZ4 frames', 'e.feather', { dtype: 'f32', lz4: true, batchRows: 4 }, 'f32'],
    ['Feather f16 with LZ4 frames', 'f.feather', { dtype: 'f16', lz4: true }, 'f16'],
  ] as const)('reads FixedSizeList: %s', async (_label, name, o, dtype) => {
    const p = await writeOurArrow(name, o);
    const ds = await readDataset(p);
    expect([ds.n, ds.d, ds.dtype]).toEqual([7, 13, dtype]);
    expect(asNumbers(ds, f16ToF32)).toEqual(want);
  });

  it('the LZ4 Feather file really is compressed', async () => {
    const plain = await writeOurArrow('plain-big.arrow', { dtype: 'f32' }, 500, 64);
    const packed = await writeOurArrow('lz4-big.feather', { dtype: 'f32', lz4: true }, 500, 64);
    expect(fs.statSync(packed).size).toBeLessThan(fs.statSync(plain).size / 2); // matrix() repeats every 17 values
    const ds = await readDataset(packed);
    expect(Array.from(viewAll(ds))).toEqual(Array.from(matrix(500, 64)));
  });

  it.each([
    ['List<Float32> file', 'l32.arrow', new Float32(), false],
    ['List<Float64> stream', 'l64.arrows', new Float64(), true],
  ] as const)('reads %s beside another column', async (_label, name, elem, stream) => {
    const p = listFile(name, rowsOf(matrix(7, 13), 13), elem, stream);
    expect(Array.from(viewAll((await direct(p, 1))!)), 'fast path').toEqual(want);
    const ds = await readDataset(p);
    expect([ds.n, ds.d, ds.dtype]).toEqual([7, 13, 'f32']);
    expect(Array.from(viewAll(ds))).toEqual(want);
  });

  it('reads a FixedSizeList<Float64> after string, list and int columns, straight from the file', async () => {
    // Two batches, so the direct path has to place each batch's rows.
    const vecType = new FixedSizeList(13, new Field('item', new Float64(), false));
    const schema = new Schema([
      new Field('id', new Int32(), false),
      new Field('text', new Utf8(), false),
      new Field('tags', new List(new Field('item', new Int32(), false)), true),
      new Field('embedding', vecType, false),
    ]);
    const writer = new RecordBatchFileWriter();
    for (const [r0, k] of [[0, 4], [4, 3]]) {
      const values = new Float64Array(matrix(7, 13).subarray(r0 * 13, (r0 + k) * 13));
      const vec = makeData({ type: vecType, length: k, nullCount: 0, child: makeData({ type: new Float64(), length: k * 13, nullCount: 0, data: values }) });
      const cols = [
        vectorFromArray(Array.from({ length: k }, (_, i) => r0 + i), new Int32()).data[0],
        vectorFromArray(Array.from({ length: k }, (_, i) => `row ${r0 + i}`), new Utf8()).data[0],
        vectorFromArray(Array.from({ length: k }, (_, i) => (i % 2 ? null : [i, i + 1])), schema.fields[2].type).data[0],
        vec,
      ];
      writer.write(new RecordBatch(schema, makeData({ type: new Struct(schema.fields), length: k, nullCount: 0, children: cols })));
    }
    writer.finish();
    const p = writeFile(dir, 'mixed.arrow', writer.toUint8Array(true));

    const fast = await direct(p, 3);
    expect(fast, 'the fast path should take this file').toBeDefined();
    expect(Array.from(viewAll(fast!))).toEqual(want);

    const ds = await readDataset(p);
    expect([ds.n, ds.d, ds.dtype]).toEqual([7, 13, 'f32']);
    expect(Array.from(viewAll(ds))).toEqual(want);
  });

  it('streams take the fast path too; LZ4-compressed inputs go through apache-arrow', async () => {
    const stream = await writeOurArrow('direct-stream.arrows', { dtype: 'f16', ipc: 'stream', batchRows: 3 });
    expect(asNumbers((await direct(stream, 0))!, f16ToF32)).toEqual(want);
    const p = await writeOurArrow('lz4-check.feather', { dtype: 'f32', lz4: true });
    expect(await direct(p, 0)).toBeUndefined();
  });

  it.each([false, true])('NaN rows are named and dropped (lz4: %s)', async (lz4) => {
    const x = matrix(7, 13);
    x[4 * 13 + 2] = NaN;
    const p = path.join(dir, `nan-${lz4}.feather`);
    await writeOutput(p, (sink) => writeArrow(sink, rowSource(x, 7, 13), { dtype: 'f32', lz4, batchRows: 3 }));
    await expectUsage(readDataset(p), 'row 4 has a non-finite value (NaN in dimension 2)', '--drop-invalid');
    const ds = await readDataset(p, { dropInvalid: true });
    expect([ds.n, ds.dropped]).toEqual([6, 1]);
  });

  it('ragged List rows are named', async () => {
    const rows = rowsOf(matrix(7, 13), 13);
    rows[5] = rows[5].slice(0, 11);
    const p = listFile('ragged.arrow', rows, new Float32());
    expect(await direct(p, 1)).toBeUndefined();
    await expectUsage(readDataset(p), "row 5 of column 'vec' has 11 values but row 0 has 13");
  });

  it('null rows fail, or are dropped and counted with dropInvalid', async () => {
    const rows: (number[] | null)[] = rowsOf(matrix(7, 13), 13);
    rows[2] = null;
    const p = listFile('nulls.arrow', rows, new Float32());
    expect(await direct(p, 1)).toBeUndefined();
    await expectUsage(readDataset(p), "row 2 of column 'vec' is null", '--drop-invalid');
    const ds = await readDataset(p, { dropInvalid: true });
    expect([ds.n, ds.dropped]).toEqual([6, 1]);
    expect(Array.from(viewAll(ds).subarray(2 * 13, 3 * 13))).toEqual(want.slice(3 * 13, 4 * 13));
  });

  it('no vector column lists the columns', async () => {
    const table = new Schema([new Field('name', new Utf8()), new Field('score', new Float64())]);
    const names = vectorFromArray(['a', 'b'], new Utf8()).data[0];
    const scores = vectorFromArray([1, 2], new Float64()).data[0];
    const batch = new RecordBatch(table, makeData({ type: new Struct(table.fields), length: 2, nullCount: 0, children: [names, scores] }));
    const w = new RecordBatchFileWriter();
    w.write(batch);
    w.finish();
    const p = writeFile(dir, 'novec.arrow', w.toUint8Array(true));
    await expectUsage(readDataset(p), 'no vector column', 'name (Utf8), score (Float64)', 'FixedSizeList<Float16|Float32|Float64>');
    await expectUsage(readDataset(p, { column: 'score' }), "column 'score' has type Float64");
    await expectUsage(readDataset(p, { column: 'nope' }), "no column named 'nope'");
  });

  it('zero rows', async () => {
    const p = await writeOurArrow('empty.arrow', { dtype: 'f32' }, 0, 13);
    await expectUsage(readDataset(p), 'has 0 rows');
  });

  it('a corrupt Arrow file', async () => {
    const good = fs.readFileSync(await writeOurArrow('tocut.arrow', { dtype: 'f32' }));
    const p = writeFile(dir, 'cut.arrow', good.subarray(0, 200));
    await expectUsage(readDataset(p), /Arrow/);
  });
});

describe('LZ4 frames', () => {
  it('decodes a frame made by the reference lz4 tool (linked blocks, block checksums)', () => {
    const out = lz4FrameDecode(fs.readFileSync(path.join(fixtures, 'reference.lz4')));
    const expected = new Uint8Array(300 * 1024).map((_, i) => (i % 1000 < 500 ? (i * 7) & 255 : i % 3));
    expect(out.length).toBe(expected.length);
    expect(Buffer.compare(Buffer.from(out), Buffer.from(expected))).toBe(0);
  });
  it('round-trips random and repetitive data across several blocks', () => {
    const data = new Uint8Array(9 << 20);
    for (let i = 0; i < data.length; i++) data[i] = i % 4096 < 2048 ? (i * 131) & 255 : (Math.random() * 256) | 0;
    const enc = lz4FrameEncode(data);
    expect(enc.length).toBeLessThan(data.length);
    expect(Buffer.compare(Buffer.from(lz4FrameDecode(enc)), Buffer.from(data))).toBe(0);
  });
});

describe('Parquet (fixtures from fixtures/make-fixtures.mjs)', () => {
  const fx = (f: string) => path.join(fixtures, f);
  it('list<float> over 3 row groups beside an id column', async () => {
    const ds = await readDataset(fx('f32_list.parquet'));
    expect([ds.n, ds.d, ds.dtype, ds.format]).toEqual([7, 13, 'f32', 'parquet list<float>']);
    expect(Array.from(viewAll(ds))).toEqual(want);
  });
  it('list<double> after a string column', async () => {
    const ds = await readDataset(fx('f64_list.parquet'));
    expect([ds.n, ds.d, ds.dtype]).toEqual([7, 13, 'f32']);
    expect(Array.from(viewAll(ds))).toEqual(want);
  });
  it('list<float16> stays f16', async () => {
    const ds = await readDataset(fx('f16_list.parquet'));
    expect(ds.dtype).toBe('f16');
    expect(asNumbers(ds, f16ToF32)).toEqual(want);
  });
  it('no vector column lists the columns', async () => {
    await expectUsage(readDataset(fx('no_vectors.parquet')), 'no vector column', 'name (UTF8), score (DOUBLE)');
    await expectUsage(readDataset(fx('f64_list.parquet'), { column: 'text' }), "column 'text' has type UTF8");
  });
  it('ragged rows are named', async () => {
    await expectUsage(readDataset(fx('ragged.parquet')), "row 2 of column 'embedding' has 12 values but the first row has 13");
  });
  it('null rows fail, or are dropped with dropInvalid', async () => {
    await expectUsage(readDataset(fx('null_row.parquet')), 'row 3', 'is null', '--drop-invalid');
    const ds = await readDataset(fx('null_row.parquet'), { dropInvalid: true });
    expect([ds.n, ds.dropped]).toEqual([6, 1]);
  });
  /** What the Parquet fast path makes of a fixture's 'embedding'/'vec' column (undefined: declined). */
  async function fastParquet(f: string, column: string, dtype: 'f32' | 'f16' = 'f32') {
    const src = openFileSource(fx(f));
    try {
      const file = { byteLength: src.size, slice: async (a: number, b?: number) => src.read(a, (b ?? src.size) - a).buffer as ArrayBuffer };
      const r = await readParquetDirect(file, await parquetMetadataAsync(file), column, dtype, () => {});
      return r && { n: r.rows.rows, d: r.d, values: asNumbers({ n: r.rows.rows, d: r.d, ...r.rows.finish() }, f16ToF32) };
    } finally {
      src.close();
    }
  }
  it('the fast path takes plain, dictionary, f64 and f16 list columns, and agrees with the values', async () => {
    expect(await fastParquet('f32_list.parquet', 'embedding')).toEqual({ n: 7, d: 13, values: want });
    expect(await fastParquet('f64_list.parquet', 'vec')).toEqual({ n: 7, d: 13, values: want });
    expect(await fastParquet('f16_list.parquet', 'embedding', 'f16')).toEqual({ n: 7, d: 13, values: want });
  });
  it.each(['gzip', 'zstd'])('%s-compressed pages (hyparquet-compressors)', async (codec) => {
    expect(await fastParquet(`${codec}.parquet`, 'embedding')).toEqual({ n: 7, d: 13, values: want });
    const ds = await readDataset(fx(`${codec}.parquet`));
    expect(Array.from(viewAll(ds))).toEqual(want);
  });
  it('the fast path declines ragged and null rows (the general path words those)', async () => {
    expect(await fastParquet('ragged.parquet', 'embedding')).toBeUndefined();
    expect(await fastParquet('null_row.parquet', 'embedding')).toBeUndefined();
  });
  it('rows split across pages and row groups', async () => {
    const sines = Array.from({ length: 50 * 13 }, (_, k) => Math.fround(Math.sin(k)));
    expect(await fastParquet('paged.parquet', 'embedding')).toEqual({ n: 50, d: 13, values: sines });
    const ds = await readDataset(fx('paged.parquet'));
    expect([ds.n, ds.d]).toEqual([50, 13]);
    expect(Array.from(viewAll(ds))).toEqual(sines);
  });
  it('a truncated Parquet file', async () => {
    const bytes = fs.readFileSync(fx('f32_list.parquet'));
    const p = writeFile(dir, 'cut.parquet', bytes.subarray(0, bytes.length - 30));
    await expectUsage(readDataset(p), /Parquet/);
  });
});
