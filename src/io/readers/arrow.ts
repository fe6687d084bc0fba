// Arrow IPC (file and stream formats; Feather v2 is the file format) through apache-arrow,
// one record batch at a time. Vector columns: FixedSizeList, List or LargeList of
// Float16|Float32|Float64. LZ4-frame and ZSTD-compressed buffers are decoded by arrow-codecs.ts.
import type { FileHandle } from 'node:fs/promises';
import {
  DataType,
  Precision,
  RecordBatchReader,
  type Data,
  type Field,
  type Schema,
} from 'apache-arrow';
import { registerArrowCodecs } from './arrow-codecs.js';
import { checkRecordBatches, readArrowDirect, recordBatchHeaders } from './arrow-direct.js';
import { RowCollector } from './collect.js';
import { badInput, type ByteSource } from './source.js';
import { badRows } from './validate.js';
import type { RawDataset } from './types.js';

const ACCEPTED = 'FixedSizeList<Float16|Float32|Float64>, List<Float16|Float32|Float64> or LargeList<Float16|Float32|Float64>';

/** A column vlc can read vectors from: a (fixed-size or large) list of floats. */
function isVectorType(t: DataType): boolean {
  const child = t.children?.[0]?.type; // a corrupt schema can have a list without its child
  return (DataType.isFixedSizeList(t) || DataType.isList(t) || DataType.isLargeList(t)) && child !== undefined && DataType.isFloat(child);
}

function describeColumns(schema: Schema): string {
  const typeName = (f: Field) => {
    try {
      return String(f.type);
    } catch {
      return 'unreadable type'; // apache-arrow's toString throws on some corrupt schemas
    }
  };
  return schema.fields.map((f: Field) => `${f.name} (${typeName(f)})`).join(', ') || 'none';
}

function pickColumn(src: ByteSource, schema: Schema, wanted: string | undefined): number {
  if (wanted !== undefined) {
    const idx = schema.fields.findIndex((f) => f.name === wanted);
    if (idx < 0) throw badInput(src, `no column named '${wanted}' (columns: ${describeColumns(schema)})`);
    if (!isVectorType(schema.fields[idx].type))
      throw badInput(src, `column '${wanted}' has type ${schema.fields[idx].type}; vectors must be ${ACCEPTED}`);
    return idx;
  }
  const idx = schema.fields.findIndex((f) => isVectorType(f.type));
  if (idx < 0) throw badInput(src, `no vector column: columns are ${describeColumns(schema)}; vectors must be ${ACCEPTED}`);
  return idx;
}

/**
 * apache-arrow reads files through a Node FileHandle; this stand-in serves its reads from our
 * ByteSource, so files, stdin and decoder workers all take the same path.
 */
function fileHandleFor(src: ByteSource) {
  return {
    fd: -1,
    stat: async () => ({ size: src.size }),
    read: async (buffer: Uint8Array, offset: number, length: number, position: number) => {
      const n = Math.max(0, Math.min(length, src.size - position));
      src.readInto(buffer.subarray(offset, offset + n), position);
      return { bytesRead: n, buffer };
    },
    close: async () => {},
  };
}

const ARROW_MAGIC = 'ARROW1';

/**
 * An Arrow IPC *file* begins and ends with ARROW1, the footer's length just before the final
 * magic. A file cut short loses its end: say so, rather than let the decoder seek to a nonsense
 * footer position and report that.
 */
function checkFileFooter(src: ByteSource): void {
  const magicLen = ARROW_MAGIC.length;
  if (src.size < magicLen || Buffer.from(src.read(0, magicLen)).toString('latin1') !== ARROW_MAGIC) return; // a stream
  const headLen = magicLen + 2; // magic, padding to 8 bytes
  const tailLen = 4 + magicLen; // footer length (int32), magic
  const tail = src.size >= headLen + tailLen ? Buffer.from(src.read(src.size - tailLen, tailLen)) : undefined;
  if (!tail || tail.subarray(4).toString('latin1') !== ARROW_MAGIC)
    throw badInput(src, `truncated Arrow IPC file: it starts with the ${ARROW_MAGIC} magic but does not end with it (${src.size} bytes; cut short?)`);
  const footer = tail.readInt32LE(0);
  if (footer <= 0 || footer > src.size - headLen - tailLen)
    throw badInput(src, `corrupt Arrow IPC file: its footer length ${footer} does not fit in the file's ${src.size} bytes`);
}

/** `progress` is called after each record batch (the decode guard's heartbeat). */
export async function readArrow(src: ByteSource, column: string | undefined, dropInvalid: boolean, progress: () => void = () => {}): Promise<RawDataset> {
  registerArrowCodecs();
  checkFileFooter(src);
  let reader: RecordBatchReader;
  try {
    reader = await RecordBatchReader.from(fileHandleFor(src) as unknown as FileHandle);
    await reader.open();
  } catch (e) {
    throw badInput(src, `not a readable Arrow IPC file or stream (${(e as Error).message})`);
  }
  const schema = reader.schema;
  if (!schema) throw badInput(src, 'Arrow input has no schema (empty stream)');
  const idx = pickColumn(src, schema, column);
  checkRecordBatches(src, reader, idx);
  const direct = await readArrowDirect(src, reader, idx, progress);
  if (direct) return direct;

  // The general path: apache-arrow decodes each record batch.
  const field = schema.fields[idx];
  const half = field.type.children[0].type.precision === Precision.HALF;
  let rows: RowCollector | undefined;
  let d = DataType.isFixedSizeList(field.type) ? field.type.listSize : -1;
  const totalRows = countRows(src, reader);
  let seen = 0;
  const droppedRows: number[] = []; // input rows of null vectors skipped under --drop-invalid
  try {
    for await (const batch of reader) {
      progress();
      const vec = batch.getChildAt(idx);
      if (!vec) continue;
      for (const data of vec.data) {
        if (d < 0) d = firstListLength(data);
        if (d === 0) throw badInput(src, `column '${field.name}' holds vectors of dimension 0`);
        rows ??= new RowCollector(d, half ? 'f16' : 'f32', totalRows === undefined ? undefined : totalRows - seen);
        appendData(src, field.name, data, d, seen, rows, dropInvalid, droppedRows);
        seen += data.length;
      }
    }
  } catch (e) {
    if ((e as Error).name === 'UsageError') throw e;
    const msg = (e as Error).message;
    if (/codec not found/.test(msg))
      throw badInput(src, 'Arrow buffers use a compression vlc cannot decode (LZ4 frame and ZSTD are supported); rewrite the file uncompressed, with LZ4 or ZSTD');
    throw badInput(src, `corrupt Arrow data (${msg})`);
  }
  if (!rows || rows.rows === 0)
    throw badInput(src, seen === 0 ? `column '${field.name}' has 0 rows; nothing to read` : `every row of column '${field.name}' is null`);
  const format = reader.isFile() ? 'arrow' : 'arrow stream';
  const precision = field.type.children[0].type.precision;
  const inputDtype = precision === Precision.HALF ? 'f16' : precision === Precision.DOUBLE ? 'f64' : 'f32';
  return { n: rows.rows, d, ...rows.finish(), format: `${format} ${field.type}`, inputDtype, dropped: droppedRows.length, droppedRows, firstBadRow: rows.firstBadRow };
}

/**
 * Rows in the input, from the batches' message headers, so the output can be allocated once,
 * exactly. Undefined when anything looks unusual; rows are then gathered in chunks instead.
 */
function countRows(src: ByteSource, reader: RecordBatchReader): number | undefined {
  try {
    let total = 0;
    for (const { header } of recordBatchHeaders(src, reader)) total += Number(header.length);
    return total;
  } catch {
    return undefined;
  }
}

/** A List's offsets are int32, a LargeList's int64 (BigInt64Array): read either as numbers. */
type Offsets = { at(i: number): number };
function offsetsOf(data: Data): Offsets {
  const raw = data.valueOffsets as Int32Array | BigInt64Array;
  return raw instanceof BigInt64Array ? { at: (i) => Number(raw[i]) } : { at: (i) => raw[i] };
}

/** Dimension of a List column: the length of its first non-null row (0 when none). */
function firstListLength(data: Data): number {
  const offs = offsetsOf(data);
  for (let i = 0; i < data.length; i++) if (data.getValid(i)) return offs.at(i + 1) - offs.at(i);
  return -1;
}

/** Copy one Data chunk's rows into `rows`; the input rows of null ones dropped go to `dropped`. */
function appendData(src: ByteSource, name: string, data: Data, d: number, firstRow: number, rows: RowCollector, dropInvalid: boolean, dropped: number[]): void {
  const values = data.children[0];
  const vals = values.values as Float32Array | Float64Array | Uint16Array;
  const base = values.offset;
  const fixed = DataType.isFixedSizeList(data.type);
  const offs = fixed ? undefined : offsetsOf(data);
  const valueNulls = values.nullCount > 0;
  // The batch framing was checked (checkRecordBatches); this checks the offsets' own values.
  const lastValue = offs ? offs.at(data.length) : data.length * d;
  if (offs && (offs.at(0) < 0 || !(lastValue <= vals.length - base)))
    throw badInput(src, `column '${name}' has list offsets pointing past its ${vals.length - base} values; the file is corrupt`);
  if (!offs && data.length * d > vals.length - base)
    throw badInput(src, `column '${name}' claims ${data.length} vectors of ${d} values but holds ${vals.length - base} values; the file is corrupt`);
  let runStart = 0; // rows [runStart, i) are contiguous and valid: appended in one go
  const flush = (end: number) => {
    if (end > runStart) rows.append(vals, base + (offs ? offs.at(runStart) : runStart * d), end - runStart);
  };
  for (let i = 0; i < data.length; i++) {
    let ok = data.nullCount === 0 || data.getValid(i);
    if (ok && offs && offs.at(i + 1) - offs.at(i) !== d) {
      throw badInput(src, `row ${firstRow + i} of column '${name}' has ${offs.at(i + 1) - offs.at(i)} values but row 0 has ${d}: all vectors must have the same dimension`);
    }
    if (ok && valueNulls) {
      const at = offs ? offs.at(i) : i * d;
      for (let k = 0; k < d && ok; k++) ok = values.getValid(at + k);
    }
    if (!ok) {
      if (!dropInvalid) throw badRows(src, `row ${firstRow + i} of column '${name}' is null or has null values`);
      flush(i);
      runStart = i + 1;
      dropped.push(firstRow + i);
    }
  }
  flush(data.length);
}
