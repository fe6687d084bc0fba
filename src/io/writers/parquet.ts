// Parquet writer: an `id` column (INT64, the row number) and an `embedding` column, a LIST of
// FLOAT with d values per row, uncompressed PLAIN pages. That LIST is how Parquet stores Arrow's
// FixedSizeList<Float32>; like pyarrow, the file also carries the Arrow schema (key ARROW:schema),
// from which pyarrow and pandas restore the FixedSizeList type. hyparquet-writer (same author as our reader) serializes the page headers and the
// footer; the pages' bodies are written here, because its general row encoder costs about 1 µs a
// value and these columns need no encoding beyond copying the floats and a fixed level pattern.
import { Field, FixedSizeList, Float32, Int64, RecordBatchStreamWriter, Schema } from 'apache-arrow';
import type { ColumnChunk, FileMetaData, SchemaElement } from 'hyparquet';
import { ByteWriter } from 'hyparquet-writer';
import { writePageHeader } from 'hyparquet-writer/src/datapage.js';
import { writeMetadata } from 'hyparquet-writer/src/metadata.js';
import type { ByteSink } from '../output.js';
import type { RowSource } from '../rows.js';
import { VERSION } from '../../version.js';

/** Values per data page (4 MiB of f32), and rows per row group (about 64 MiB of values). */
const PAGE_VALUES = 1 << 20;
const GROUP_BYTES = 64 << 20;

const SCHEMA: SchemaElement[] = [
  { name: 'schema', num_children: 2 },
  { name: 'id', type: 'INT64', repetition_type: 'REQUIRED' },
  { name: 'embedding', repetition_type: 'REQUIRED', converted_type: 'LIST', logical_type: { type: 'LIST' }, num_children: 1 },
  { name: 'list', repetition_type: 'REPEATED', num_children: 1 },
  { name: 'element', type: 'FLOAT', repetition_type: 'REQUIRED' },
];

/**
 * The Arrow schema as pyarrow stores it in a Parquet footer: base64 of the IPC schema message
 * (continuation marker, length, flatbuffer), the first message apache-arrow writes for a stream.
 */
function arrowSchema(d: number): string {
  const schema = new Schema([
    new Field('id', new Int64(), false),
    new Field('embedding', new FixedSizeList(d, new Field('element', new Float32(), false)), false),
  ]);
  const writer = new RecordBatchStreamWriter();
  writer.reset(undefined, schema);
  writer.finish();
  const stream = writer.toUint8Array(true);
  const length = new DataView(stream.buffer, stream.byteOffset).getInt32(4, true);
  return Buffer.from(stream.subarray(0, 8 + length)).toString('base64');
}

/** ULEB128, as the RLE hybrid encoding writes run headers. */
function varint(out: number[], v: number): void {
  while (v >= 0x80) {
    out.push((v & 0x7f) | 0x80);
    v = Math.floor(v / 128);
  }
  out.push(v);
}

/** An RLE run of `count` copies of a 1-bit level: header (count << 1), then the value in one byte. */
function run(out: number[], count: number, value: 0 | 1): void {
  varint(out, count * 2);
  out.push(value);
}

/**
 * One DATA_PAGE_V2 holding `rows` whole rows. `levels` gives the list levels when the column is the
 * embedding (repetition 0 opens a row, 1 continues it; definition is 1 for every value).
 */
function writePage(w: ByteWriter, values: Uint8Array, numValues: number, rows: number, d: number | undefined): number {
  const rep: number[] = [];
  const def: number[] = [];
  if (d !== undefined) {
    for (let i = 0; i < rows; i++) {
      run(rep, 1, 0);
      if (d > 1) run(rep, d - 1, 1);
    }
    run(def, numValues, 1);
  }
  const size = rep.length + def.length + values.length;
  const start = w.offset;
  writePageHeader(w, {
    type: 'DATA_PAGE_V2',
    uncompressed_page_size: size,
    compressed_page_size: size,
    data_page_header_v2: {
      num_values: numValues,
      num_nulls: 0,
      num_rows: rows,
      encoding: 'PLAIN',
      definition_levels_byte_length: def.length,
      repetition_levels_byte_length: rep.length,
      is_compressed: false,
    },
  });
  w.appendBytes(new Uint8Array(rep));
  w.appendBytes(new Uint8Array(def));
  w.appendBytes(values);
  return w.offset - start;
}

/** A column chunk of the rows [r0, r0 + k), paged; returns its metadata. */
function writeChunk(w: ByteWriter, column: 'id' | 'embedding', data: RowSource, r0: number, k: number, d: number): ColumnChunk {
  const start = w.offset;
  const rowsPerPage = column === 'id' ? PAGE_VALUES : Math.max(1, Math.floor(PAGE_VALUES / d));
  let bytes = 0;
  for (let p = 0; p < k; p += rowsPerPage) {
    const rows = Math.min(rowsPerPage, k - p);
    if (column === 'id') {
      const ids = new BigInt64Array(rows);
      for (let i = 0; i < rows; i++) ids[i] = BigInt(r0 + p + i);
      bytes += writePage(w, new Uint8Array(ids.buffer), rows, rows, undefined);
    } else {
      const page = data.rows(r0 + p, rows);
      const values = new Uint8Array(page.buffer, page.byteOffset, rows * d * 4);
      bytes += writePage(w, values, rows * d, rows, d);
    }
  }
  const path = column === 'id' ? ['id'] : ['embedding', 'list', 'element'];
  return {
    file_offset: BigInt(start),
    meta_data: {
      type: column === 'id' ? 'INT64' : 'FLOAT',
      encodings: column === 'id' ? ['PLAIN'] : ['PLAIN', 'RLE'],
      path_in_schema: path,
      codec: 'UNCOMPRESSED',
      num_values: BigInt(column === 'id' ? k : k * d),
      total_uncompressed_size: BigInt(bytes),
      total_compressed_size: BigInt(bytes),
      data_page_offset: BigInt(start),
    },
  };
}

/** `groupRows`: rows per row group (default: about GROUP_BYTES of values). */
export async function writeParquet(sink: ByteSink, data: RowSource, o: { groupRows?: number } = {}): Promise<void> {
  const { n, d } = data;
  const w = new ByteWriter();
  // Send what the writer holds to the sink and start its buffer over (its offset keeps counting).
  const drain = async () => {
    await sink.write(w.getBytes().slice());
    w.index = 0;
  };
  w.appendUint32(0x31524150); // PAR1
  const groupRows = o.groupRows ?? Math.max(1, Math.floor(GROUP_BYTES / (d * 4)));
  const metadata: FileMetaData = {
    version: 2,
    schema: SCHEMA,
    num_rows: BigInt(n),
    row_groups: [],
    metadata_length: 0,
    created_by: `vlc ${VERSION}`,
    key_value_metadata: [{ key: 'ARROW:schema', value: arrowSchema(d) }],
  };
  for (let r0 = 0; r0 < n; r0 += groupRows) {
    const k = Math.min(groupRows, n - r0);
    const start = w.offset;
    const columns = [writeChunk(w, 'id', data, r0, k, d), writeChunk(w, 'embedding', data, r0, k, d)];
    const size = BigInt(w.offset - start);
    metadata.row_groups.push({ columns, total_byte_size: size, total_compressed_size: size, num_rows: BigInt(k) });
    await drain();
  }
  // metadata_length is not a field of the footer (writeMetadata appends the length itself).
  delete (metadata as Partial<FileMetaData>).metadata_length;
  writeMetadata(w, metadata);
  w.appendUint32(0x31524150);
  await drain();
}
