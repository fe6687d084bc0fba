// Parquet through hyparquet, one row group at a time (every codec: snappy, gzip, brotli, zstd, lz4
// via hyparquet-compressors). Vector columns: a LIST of FLOAT / DOUBLE /
// FLOAT16 (FIXED_LEN_BYTE_ARRAY(2)), or a legacy repeated FLOAT / DOUBLE field.
import { parquetMetadataAsync, parquetRead, parquetSchema, type AsyncBuffer, type FileMetaData } from 'hyparquet';
import { compressors } from 'hyparquet-compressors';
import { plausibleRows, RowCollector } from './collect.js';
import { readParquetDirect } from './parquet-direct.js';
import { badInput, type ByteSource } from './source.js';
import { badRows } from './validate.js';
import type { RawDataset } from './types.js';

const ACCEPTED = 'a list of FLOAT, DOUBLE or FLOAT16';

type SchemaNode = ReturnType<typeof parquetSchema>;

/** The numeric leaf of a vector-like column, or undefined when the column is not one. */
function vectorLeaf(node: SchemaNode): SchemaNode['element'] | undefined {
  const isFloatLeaf = (e: SchemaNode['element']) =>
    e.type === 'FLOAT' || e.type === 'DOUBLE' || (e.type === 'FIXED_LEN_BYTE_ARRAY' && e.logical_type?.type === 'FLOAT16');
  const e = node.element;
  if (node.children.length === 0) return e.repetition_type === 'REPEATED' && isFloatLeaf(e) ? e : undefined;
  const isList = e.converted_type === 'LIST' || e.logical_type?.type === 'LIST';
  if (!isList || node.children.length !== 1) return undefined;
  // Three-level list: group (LIST) > repeated group > element; two-level: group (LIST) > repeated leaf.
  const rep = node.children[0];
  const leaf = rep.children.length === 1 ? rep.children[0] : rep.children.length === 0 ? rep : undefined;
  return leaf && leaf.children.length === 0 && isFloatLeaf(leaf.element) ? leaf.element : undefined;
}

function typeName(node: SchemaNode): string {
  const e = node.element;
  if (vectorLeaf(node)) return `list<${vectorLeaf(node)!.logical_type?.type ?? vectorLeaf(node)!.type}>`;
  if (node.children.length > 0) return e.converted_type ?? e.logical_type?.type ?? 'group';
  return e.logical_type?.type ?? e.converted_type ?? e.type ?? 'unknown';
}

/** hyparquet's view of the input: byte ranges read on demand through our ByteSource. */
function asyncBufferFrom(src: ByteSource): AsyncBuffer {
  return {
    byteLength: src.size,
    slice: async (start: number, end?: number) => {
      const out = new Uint8Array(Math.max(0, Math.min(end ?? src.size, src.size) - start));
      src.readInto(out, start);
      return out.buffer;
    },
  };
}

/** `progress` is called after each page (the decode guard's heartbeat). */
export async function readParquet(src: ByteSource, column: string | undefined, dropInvalid: boolean, progress: () => void = () => {}): Promise<RawDataset> {
  let file: AsyncBuffer;
  let metadata: FileMetaData;
  try {
    file = asyncBufferFrom(src);
    metadata = await parquetMetadataAsync(file);
  } catch (e) {
    throw badInput(src, `not a readable Parquet file (${(e as Error).message})`);
  }
  checkLayout(src, metadata);
  const columns = parquetSchema(metadata).children;
  const listing = columns.map((c) => `${c.element.name} (${typeName(c)})`).join(', ') || 'none';
  let node: SchemaNode | undefined;
  if (column !== undefined) {
    node = columns.find((c) => c.element.name === column);
    if (!node) throw badInput(src, `no column named '${column}' (columns: ${listing})`);
    if (!vectorLeaf(node)) throw badInput(src, `column '${column}' has type ${typeName(node)}; vectors must be ${ACCEPTED}`);
  } else {
    node = columns.find((c) => vectorLeaf(c) !== undefined);
    if (!node) throw badInput(src, `no vector column: columns are ${listing}; vectors must be ${ACCEPTED}`);
  }
  const name = node.element.name;
  const leaf = vectorLeaf(node)!;
  const half = leaf.logical_type?.type === 'FLOAT16';
  const leafName = half ? 'float16' : leaf.type === 'DOUBLE' ? 'double' : 'float';

  const format = `parquet list<${leafName}>`;
  const inputDtype = half ? 'f16' : leaf.type === 'DOUBLE' ? 'f64' : 'f32';
  const fast = await readParquetDirect(file, metadata, name, half ? 'f16' : 'f32', progress, src.size);
  if (fast) {
    const { rows, d } = fast;
    return { n: rows.rows, d, ...rows.finish(), format, inputDtype, firstBadRow: rows.firstBadRow };
  }

  let rows: RowCollector | undefined;
  let d = -1;
  const droppedRows: number[] = []; // input rows of null vectors skipped under --drop-invalid
  let rowStart = 0;
  for (const group of metadata.row_groups) {
    const rowEnd = rowStart + Number(group.num_rows);
    let groupRows: (number[] | null | undefined)[][] = [];
    let decoded = 0; // rows the pages really hold (hyparquet pads a short column with undefined)
    try {
      await parquetRead({
        file, metadata, columns: [name], rowStart, rowEnd, compressors, onPage: progress,
        onChunk: (c) => (decoded += c.columnData.length),
        onComplete: (r) => (groupRows = r),
      });
    } catch (e) {
      throw badInput(src, `corrupt Parquet data in rows ${rowStart}..${rowEnd - 1} (${(e as Error).message})`);
    }
    if (decoded !== rowEnd - rowStart || groupRows.length !== rowEnd - rowStart)
      throw badInput(src, `Parquet row group at rows ${rowStart}..${rowEnd - 1} holds ${decoded} rows, not the ${rowEnd - rowStart} its footer claims; the file is corrupt`);
    groupRows.forEach((row, i) => {
      const v = row[0];
      const r = rowStart + i;
      const isNull = v == null || (v as unknown[]).some((x) => x == null);
      if (isNull) {
        if (!dropInvalid) throw badRows(src, `row ${r} of column '${name}' is null or has null values`);
        droppedRows.push(r);
        return;
      }
      if (d < 0) {
        d = v.length;
        if (d === 0) throw badInput(src, `column '${name}' holds vectors of dimension 0`);
        // The footer knows the row count: rows go straight into the final array.
        rows = new RowCollector(d, half ? 'f16' : 'f32', plausibleRows(Number(metadata.num_rows) - r, d, src.size));
      }
      if (v.length !== d)
        throw badInput(src, `row ${r} of column '${name}' has ${v.length} values but the first row has ${d}: all vectors must have the same dimension`);
      rows!.append(v, 0, 1);
    });
    rowStart = rowEnd;
  }
  if (!rows) throw badInput(src, rowStart === 0 ? `column '${name}' has 0 rows; nothing to read` : `every row of column '${name}' is null`);
  return { n: rows.rows, d, ...rows.finish(), format, inputDtype, dropped: droppedRows.length, droppedRows, firstBadRow: rows.firstBadRow };
}

/**
 * The footer's counts and byte ranges checked against the file before anything is read or
 * allocated from them: row groups add up to the file's row count, and every column chunk lies
 * inside the data area (between the leading magic and the footer).
 */
function checkLayout(src: ByteSource, metadata: FileMetaData): void {
  const dataEnd = src.size - 8 - metadata.metadata_length;
  let rows = 0n;
  metadata.row_groups.forEach((group, g) => {
    if (group.num_rows < 0n) throw badInput(src, `Parquet row group ${g} claims ${group.num_rows} rows; the file is corrupt`);
    rows += group.num_rows;
    for (const chunk of group.columns) {
      const meta = chunk.meta_data;
      if (!meta || chunk.file_path) continue; // columns stored elsewhere are never read
      const start = meta.dictionary_page_offset || meta.data_page_offset;
      const end = start + meta.total_compressed_size;
      if (start < 4n || meta.total_compressed_size < 0n || end > BigInt(dataEnd))
        throw badInput(src, `Parquet column '${meta.path_in_schema.join('.')}' of row group ${g} claims bytes ${start}..${end}, outside the file's ${dataEnd}-byte data area; the file is corrupt`);
      if (meta.num_values < 0n) throw badInput(src, `Parquet column '${meta.path_in_schema.join('.')}' claims ${meta.num_values} values; the file is corrupt`);
    }
  });
  if (rows !== metadata.num_rows)
    throw badInput(src, `Parquet footer claims ${metadata.num_rows} rows but its row groups hold ${rows}; the file is corrupt`);
}

