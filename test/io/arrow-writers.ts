// Arrow test files the readers' tests (and the six-format round trip) write with apache-arrow:
// LargeList or FixedSizeList columns, in batches, optionally with ZSTD-compressed buffers made by
// the reference `zstd` tool (libzstd, the library Arrow C++ writes with).
import { execFileSync } from 'node:child_process';
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
import { zstdDecode } from '../../dist/io/readers/arrow-codecs.js';
import { halfBits, writeFile } from './helpers.js';

/** Compress with the zstd CLI; `withSize` puts the content size in the frame header, as ZSTD_compress does. */
export function zstdFrame(bytes: Uint8Array, withSize = true): Uint8Array {
  const args = ['-q', '-c', '-3', ...(withSize ? [`--stream-size=${bytes.length}`] : [])];
  return new Uint8Array(execFileSync('zstd', args, { input: bytes, maxBuffer: 1 << 30 }));
}

export const hasZstd = (() => {
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
export function largeListFile(dir: string, name: string, x: Float32Array, n: number, d: number, o: { elem?: Elem; zstd?: boolean; batchRows?: number; stream?: boolean; fixed?: boolean; rows?: (number[] | null)[] } = {}): string {
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
