// decompress's Parquet and safetensors writers, read back by vlc's own readers and by hyparquet.
import * as fs from 'node:fs';
import * as path from 'node:path';
import { describe, expect, it } from 'vitest';
import { parquetMetadataAsync, parquetReadObjects, parquetSchema } from 'hyparquet';
import { RecordBatchReader } from 'apache-arrow';
import { readDataset } from '../../dist/io/read.js';
import { writeVectors } from '../../dist/io/write.js';
import { writeOutput } from '../../dist/io/output.js';
import { rowsOf } from '../../dist/io/rows.js';
import { writeParquet } from '../../dist/io/writers/parquet.js';
import { f16ToF32, viewAll } from '../../dist/vectors/dataset.js';
import { asNumbers, matrix, scratchDir } from './helpers.js';

const dir = scratchDir('write-formats');
const fileBuffer = (p: string) => {
  const bytes = fs.readFileSync(p);
  return bytes.buffer.slice(bytes.byteOffset, bytes.byteOffset + bytes.length);
};

describe('Parquet and safetensors output', () => {
  it.each([
    ['7 x 13 (one page)', 7, 13],
    ['3000 x 384 (several pages, one row group)', 3000, 384],
    ['2500 x 384 in row groups of 1000', 2500, 384, 1000],
  ])('Parquet round-trips exactly: %s', async (_label, n, d, groupRows?: number) => {
    const x = new Float32Array(n * d).map((_, i) => Math.fround(Math.sin(i) * 100));
    const p = path.join(dir, `v-${n}x${d}.parquet`);
    if (groupRows) await writeOutput(p, (sink) => writeParquet(sink, rowsOf(x, n, d), { groupRows }));
    else await writeVectors(p, rowsOf(x, n, d), { format: 'parquet' });
    const ds = await readDataset(p);
    expect([ds.n, ds.d, ds.dtype]).toEqual([n, d, 'f32']);
    if (groupRows) expect((await parquetMetadataAsync(fileBuffer(p))).row_groups.length).toBe(Math.ceil(n / groupRows));
    expect(Buffer.compare(Buffer.from(viewAll(ds).buffer, viewAll(ds).byteOffset, viewAll(ds).byteLength), Buffer.from(x.buffer))).toBe(0);
  });

  it('Parquet holds id (INT64) and embedding (LIST of FLOAT), as a third-party reader sees it', async () => {
    const p = path.join(dir, 'schema.parquet');
    await writeVectors(p, rowsOf(matrix(7, 13), 7, 13), { format: 'parquet' });
    const file = fileBuffer(p);
    const meta = await parquetMetadataAsync(file);
    expect(parquetSchema(meta).children.map((c) => c.element.name)).toEqual(['id', 'embedding']);
    // The Arrow schema pyarrow restores the column types from: embedding is FixedSizeList<Float32>[13].
    const stored = meta.key_value_metadata?.find((kv) => kv.key === 'ARROW:schema')?.value;
    const message = Buffer.from(stored!, 'base64');
    const reader = RecordBatchReader.from(new Uint8Array([...message, 0xff, 0xff, 0xff, 0xff, 0, 0, 0, 0]));
    reader.open();
    expect(reader.schema.fields.map((f) => `${f.name}: ${f.type}`)).toEqual(['id: Int64', 'embedding: FixedSizeList[13]<Float32>']);
    const rows = await parquetReadObjects({ file });
    expect(rows.map((r) => Number(r.id))).toEqual([0, 1, 2, 3, 4, 5, 6]);
    expect(Array.from(rows[4].embedding as number[])).toEqual(Array.from(matrix(7, 13).subarray(4 * 13, 5 * 13)));
  });

  it.each(['f32', 'f16'] as const)('safetensors %s round-trips, its data 8-byte aligned', async (dtype) => {
    const p = path.join(dir, `v-${dtype}.safetensors`);
    await writeVectors(p, rowsOf(matrix(7, 13), 7, 13), { format: 'safetensors', dtype });
    const ds = await readDataset(p);
    expect([ds.n, ds.d, ds.dtype]).toEqual([7, 13, dtype]);
    expect(asNumbers(ds, f16ToF32)).toEqual(Array.from(matrix(7, 13)));
    const headerLength = Number(fs.readFileSync(p).readBigUInt64LE(0));
    expect((8 + headerLength) % 8).toBe(0);
    expect(JSON.parse(fs.readFileSync(p).subarray(8, 8 + headerLength).toString()).embedding.shape).toEqual([7, 13]);
  });
});
