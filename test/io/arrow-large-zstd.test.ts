// Arrow LargeList<Float> columns (int64 offsets: what HF datasets and polars often write) and
// Feather/IPC files whose buffers are ZSTD frames (pyarrow's `compression="zstd"`). The ZSTD
// frames are made by the reference `zstd` tool, i.e. libzstd, the library Arrow C++ writes with.
import { execFileSync } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import {
  compressionRegistry,
  CompressionType,
  Field,
  FixedSizeList,
  Float16,
  Float32,
  Float64,
  Int32,
  LargeList,
  makeData,
  RecordBatch,
  RecordBatchFileWriter,
  RecordBatchStreamWriter,
  Schema,
  Struct,
  vectorFromArray,
} from 'apache-arrow';
import { readDataset } from '../../dist/io/read.js';
import { f16ToF32 } from '../../dist/io/dataset.js';
import { zstdDecode } from '../../dist/io/readers/arrow-codecs.js';
import { asNumbers, expectUsage, halfBits, matrix, scratchDir, writeFile } from './helpers.js';

const dir = scratchDir('arrow-large');

/** Compress with the zstd CLI; `withSize` puts the content size in the frame header, as ZSTD_compress does. */
export function zstdFrame(bytes: Uint8Array, withSize = true): Uint8Array {
  const args = ['-q', '-c', '-3', ...(withSize ? [`--stream-size=${bytes.length}`] : [])];
  return new Uint8Array(execFileSync('zstd', args, { input: bytes, maxBuffer: 1 << 30 }));
}

const hasZstd = (() => {
  try {
    execFileSync('zstd', ['--version']);
    return true;
  } catch {
    return false;
  }
})();

type Elem = Float16 | Float32 | Float64;

/** Values of matrix(n, d) rows [r0, r0 + k) in elem's array type. */
function valuesOf(elem: Elem, x: Float32Array): Float32Array | Float64Array | Uint16Array {
  if (elem instanceof Float64) return new Float64Array(x);
  if (elem instanceof Float16) return new Uint16Array(Array.from(x, halfBits));
  return x.slice();
}

/**
 * An Arrow file (or stream) with an id column and a LargeList<elem> (or FixedSizeList) column
 * `vec`, in batches of `batchRows`, its buffers optionally ZSTD-compressed.
 */
export function largeListFile(name: string, x: Float32Array, n: number, d: number, o: { elem?: Elem; zstd?: boolean; batchRows?: number; stream?: boolean; fixed?: boolean; rows?: (number[] | null)[] } = {}): string {
  const elem = o.elem ?? new Float32();
  const listType = o.fixed ? new FixedSizeList(d, new Field('item', elem, false)) : new LargeList(new Field('item', elem, false));
  const schema = new Schema([new Field('id', new Int32(), false), new Field('vec', listType, true)]);
  if (o.zstd) compressionRegistry.set(CompressionType.ZSTD, { encode: (b) => zstdFrame(b), decode: zstdDecode });
  const options = { compressionType: o.zstd ? CompressionType.ZSTD : null };
  const writer = o.stream ? new RecordBatchStreamWriter(options) : new RecordBatchFileWriter(options);
  const batchRows = o.batchRows ?? n;
  for (let r0 = 0; r0 < n; r0 += batchRows) {
    const k = Math.min(batchRows, n - r0);
    const rows = o.rows?.slice(r0, r0 + k) ?? Array.from({ length: k }, (_, i) => Array.from(x.subarray((r0 + i) * d, (r0 + i + 1) * d)));
    const flat = new Float32Array(rows.flatMap((r) => r ?? []));
    const child = makeData({ type: elem, length: flat.length, nullCount: 0, data: valuesOf(elem, flat) as never });
    const nullBitmap = new Uint8Array(Math.ceil(k / 8));
    rows.forEach((r, i) => r && (nullBitmap[i >> 3] |= 1 << (i & 7)));
    const nullCount = rows.filter((r) => r === null).length;
    let list;
    if (o.fixed) {
      list = makeData({ type: listType as FixedSizeList, length: k, nullCount, nullBitmap, child });
    } else {
      const offsets = new BigInt64Array(k + 1);
      rows.forEach((r, i) => (offsets[i + 1] = offsets[i] + BigInt(r?.length ?? 0)));
      list = makeData({ type: listType as LargeList, length: k, nullCount, nullBitmap, valueOffsets: offsets, child });
    }
    const ids = vectorFromArray(Array.from({ length: k }, (_, i) => r0 + i), new Int32()).data[0];
    writer.write(new RecordBatch(schema, makeData({ type: new Struct(schema.fields), length: k, nullCount: 0, children: [ids, list] })));
  }
  writer.finish();
  return writeFile(dir, name, writer.toUint8Array(true));
}

describe('Arrow LargeList<Float>', () => {
  it.each([
    ['Float32 file, one batch', 'l32.arrow', new Float32(), {}],
    ['Float32 stream, 3 batches', 'l32.arrows', new Float32(), { stream: true, batchRows: 3 }],
    ['Float64 file', 'l64.arrow', new Float64(), {}],
    ['Float16 file, 2 batches', 'l16.feather', new Float16(), { batchRows: 4 }],
  ] as const)('reads %s', async (_label, name, elem, o) => {
    const p = largeListFile(name, matrix(7, 13), 7, 13, { elem, ...o });
    const ds = await readDataset(p);
    expect([ds.n, ds.d, ds.dtype]).toEqual([7, 13, elem instanceof Float16 ? 'f16' : 'f32']);
    expect(asNumbers(ds, f16ToF32)).toEqual(Array.from(matrix(7, 13)));
    expect(ds.format).toMatch(/LargeList/);
  });

  it('names a ragged row and a null row', async () => {
    const rows: (number[] | null)[] = Array.from({ length: 7 }, (_, i) => Array.from(matrix(7, 13).subarray(i * 13, (i + 1) * 13)));
    rows[5] = rows[5]!.slice(0, 12);
    await expectUsage(readDataset(largeListFile('ragged.arrow', matrix(7, 13), 7, 13, { rows })), "row 5 of column 'vec' has 12 values but row 0 has 13");
    rows[5] = null;
    await expectUsage(readDataset(largeListFile('null.arrow', matrix(7, 13), 7, 13, { rows })), "row 5 of column 'vec' is null");
    const ds = await readDataset(largeListFile('null2.arrow', matrix(7, 13), 7, 13, { rows }), { dropInvalid: true });
    expect([ds.n, ds.dropped]).toEqual([6, 1]);
  });
});

describe.skipIf(!hasZstd)('Arrow with ZSTD-compressed buffers (needs the zstd tool to write them)', () => {
  it.each([
    ['Feather FixedSizeList<Float32>, 3 batches', 'z1.feather', { fixed: true, batchRows: 3 }],
    ['LargeList<Float32> stream', 'z2.arrows', { stream: true }],
    ['LargeList<Float16> file', 'z3.feather', { elem: new Float16() }],
  ] as const)('reads %s', async (_label, name, o) => {
    const p = largeListFile(name, matrix(7, 13), 7, 13, { zstd: true, ...o });
    const ds = await readDataset(p);
    expect(asNumbers(ds, f16ToF32)).toEqual(Array.from(matrix(7, 13)));
  });

  it('decodes multi-block frames of the size one 64K-row batch makes, with and without a content size', () => {
    // libzstd cuts frames into 128 KiB blocks; a pyarrow Feather batch of 65,536 rows x 32 f32 is 8 MiB.
    const bytes = new Uint8Array(new Float32Array(Array.from({ length: 1 << 21 }, (_, i) => Math.sin(i) * 1e3)).buffer);
    for (const withSize of [true, false]) {
      const frame = zstdFrame(bytes, withSize);
      expect(frame.length).toBeLessThan(bytes.length);
      expect(Buffer.compare(Buffer.from(zstdDecode(frame)), Buffer.from(bytes))).toBe(0);
    }
  });

  it('a damaged frame is one clear error', async () => {
    const p = largeListFile('zbad.feather', matrix(50, 13), 50, 13, { zstd: true, fixed: true });
    const bytes = new Uint8Array(readFileSync(p));
    // Find the first ZSTD magic after the schema and damage the frame right after its header.
    let at = -1;
    for (let i = 0; i + 4 < bytes.length && at < 0; i++) if (bytes[i] === 0x28 && bytes[i + 1] === 0xb5 && bytes[i + 2] === 0x2f && bytes[i + 3] === 0xfd) at = i;
    expect(at).toBeGreaterThan(0);
    bytes.fill(0xff, at + 6, at + 40);
    const bad = writeFile(dir, 'zbad2.feather', bytes);
    await expectUsage(readDataset(bad), /corrupt Arrow data|cannot decode/);
  });
});

describe('Arrow LargeList fast path', () => {
  it('an uncompressed LargeList<Float32> column is read straight from the file', async () => {
    const { RecordBatchReader } = await import('apache-arrow');
    const { readArrowDirect } = await import('../../dist/io/readers/arrow-direct.js');
    const { openFileSource } = await import('../../dist/io/readers/source.js');
    const p = largeListFile('direct.arrow', matrix(7, 13), 7, 13, { batchRows: 3 });
    const src = openFileSource(p);
    try {
      const reader = RecordBatchReader.from(readFileSync(p));
      reader.open();
      const fast = readArrowDirect(src, reader, 1);
      expect(fast, 'fast path taken').toBeDefined();
      expect(Array.from(fast!.data)).toEqual(Array.from(matrix(7, 13)));
    } finally {
      src.close();
    }
  });
});
