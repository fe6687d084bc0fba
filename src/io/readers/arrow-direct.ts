// Fast path for the common Arrow file or stream: an uncompressed FixedSizeList<Float16|32|64>
// column, or a List / LargeList of floats whose rows all have the same length, without nulls. Its values sit
// contiguously in each record batch's body, so they are read straight from the input into the
// Dataset (like an .npy), skipping apache-arrow's per-batch buffers and a second full copy.
// Anything unusual returns undefined and the general path (apache-arrow) runs.
import { DataType, Message, MessageHeader, Precision, type Field, type FixedSizeList, type RecordBatchReader } from 'apache-arrow';
import { allocStore } from '../../vectors/dataset.js';
import { ELEMENT_BYTES, keptAs, readElements, type ElementType } from './elements.js';
import { badInput, type ByteSource } from './source.js';
import type { RawDataset } from './types.js';

const FLOAT_ELEMENTS: Record<number, ElementType> = { [Precision.HALF]: 'f16', [Precision.SINGLE]: 'f32', [Precision.DOUBLE]: 'f64' };

/** Field nodes and buffers one field occupies in a record batch (IPC columnar layout), or undefined if unsure. */
function layout(type: DataType): { nodes: number; buffers: number } | undefined {
  if (DataType.isDictionary(type) || DataType.isNull(type)) return DataType.isNull(type) ? { nodes: 1, buffers: 0 } : { nodes: 1, buffers: 2 };
  if (DataType.isBinaryView(type) || DataType.isUtf8View(type) || DataType.isUnion(type)) return undefined;
  if (DataType.isBinary(type) || DataType.isUtf8(type) || DataType.isLargeBinary(type) || DataType.isLargeUtf8(type)) return { nodes: 1, buffers: 3 };
  const own = DataType.isList(type) || DataType.isLargeList(type) || DataType.isMap(type) ? 2 : DataType.isStruct(type) || DataType.isFixedSizeList(type) ? 1 : undefined;
  if (own !== undefined) {
    let nodes = 1;
    let buffers = own;
    for (const child of type.children as Field[]) {
      const c = layout(child.type);
      if (!c) return undefined;
      nodes += c.nodes;
      buffers += c.buffers;
    }
    return { nodes, buffers };
  }
  if (type.children?.length) return undefined;
  return { nodes: 1, buffers: 2 }; // fixed-width primitives: validity + values
}

/** One record batch: its message header (row count, field nodes, buffer regions), body start and length. */
type BatchHeader = { header: ReturnType<Message<MessageHeader.RecordBatch>['header']>; body: number; bodyLength: number };

/** Decode the message whose framing starts at `pos`: [0xFFFFFFFF] int32 length, flatbuffer. */
function messageAt(src: ByteSource, pos: number): { message: Message; body: number } | undefined {
  if (pos + 4 > src.size) return undefined;
  let len = new DataView(src.read(pos, 4).buffer).getInt32(0, true);
  let start = pos + 4;
  if (len === -1) {
    // Continuation marker (format >= 0.15); the older framing has the length first.
    if (pos + 8 > src.size) return undefined;
    len = new DataView(src.read(pos + 4, 4).buffer).getInt32(0, true);
    start = pos + 8;
  }
  if (len <= 0) return undefined; // end-of-stream marker
  if (start + len > src.size) throw new Error(`a message header of ${len} bytes at byte ${start} runs past the end of the input`);
  return { message: Message.decode(src.read(start, len)), body: start + len };
}

/**
 * Every record batch of an Arrow input, without reading the bodies (a few hundred bytes each):
 * a file lists them in its footer; a stream is walked message by message, skipping the schema
 * and dictionary messages. Throws on anything malformed.
 */
export function* recordBatchHeaders(src: ByteSource, reader: RecordBatchReader): Generator<BatchHeader> {
  if (reader.isFile()) {
    for (const block of reader.footer!.recordBatches()) {
      const m = messageAt(src, block.offset);
      if (!m || !m.message.isRecordBatch()) throw new Error('footer block is not a record batch');
      yield { header: m.message.header(), body: m.body, bodyLength: Number(m.message.bodyLength) };
    }
    return;
  }
  for (let pos = 0, m = messageAt(src, 0); m; m = messageAt(src, pos)) {
    if (m.message.isRecordBatch()) yield { header: m.message.header(), body: m.body, bodyLength: Number(m.message.bodyLength) };
    const next = m.body + Number(m.message.bodyLength);
    if (!(next >= m.body && next <= src.size)) throw new Error('message body runs past the end'); // corrupt lengths must not loop
    pos = next;
  }
}

/**
 * Where a list column's field nodes and buffers sit among each batch's (undefined when a column
 * before it has a layout this file does not know). A FixedSizeList owns [validity] and its child
 * [validity, values]; a (Large)List has [validity, offsets] before the child.
 */
function columnPosition(reader: RecordBatchReader, column: number) {
  let node = 0;
  let buffer = 0;
  for (const f of reader.schema.fields.slice(0, column)) {
    const l = layout(f.type);
    if (!l) return undefined;
    node += l.nodes;
    buffer += l.buffers;
  }
  const fixed = DataType.isFixedSizeList(reader.schema.fields[column].type);
  return { listNode: node, valueNode: node + 1, offsetsBuffer: fixed ? -1 : buffer + 1, valueBuffer: fixed ? buffer + 2 : buffer + 3 };
}

/** LZ4 cannot expand data more than 255-fold; a buffer claiming more is lying. */
const LZ4_MAX_RATIO = 255;

/**
 * Check every record batch's framing against the bytes present before anything is allocated from
 * it: the body lies inside the input, every buffer inside its body, counts are sane, and the vector
 * column's values buffer can hold the rows the batch claims. A file that fails is corrupt or forged: one error line names the batch.
 */
export function checkRecordBatches(src: ByteSource, reader: RecordBatchReader, column: number): void {
  const field = reader.schema.fields[column];
  const fixed = DataType.isFixedSizeList(field.type);
  const elem = FLOAT_ELEMENTS[field.type.children?.[0]?.type?.precision];
  const at = columnPosition(reader, column);
  let i = 0;
  const fail = (what: string) => badInput(src, `Arrow record batch ${i} ${what}; the file is corrupt`);
  let batches: Iterable<BatchHeader>;
  try {
    batches = [...recordBatchHeaders(src, reader)];
  } catch (e) {
    throw badInput(src, `corrupt Arrow framing (${(e as Error).message})`);
  }
  for (const { header, body, bodyLength } of batches) {
    if (!(bodyLength >= 0) || body + bodyLength > src.size)
      throw fail(`has a ${bodyLength}-byte body at byte ${body}, past the end of the ${src.size}-byte input`);
    const rows = Number(header.length);
    if (!Number.isSafeInteger(rows) || rows < 0) throw fail(`claims ${header.length} rows`);
    for (const b of header.buffers) {
      const [off, len] = [Number(b.offset), Number(b.length)];
      if (off < 0 || len < 0 || off + len > bodyLength) throw fail(`has a buffer at bytes ${off}..${off + len}, outside its ${bodyLength}-byte body`);
    }
    for (const nd of header.nodes) {
      const [len, nulls] = [Number(nd.length), Number(nd.nullCount)];
      if (!(len >= 0) || !(nulls >= 0) || nulls > len) throw fail(`has a field node of ${nd.length} values with ${nd.nullCount} nulls`);
    }
    // The most bytes a buffer can hold once decoded. A compressed buffer starts with an int64
    // length, -1 when stored as is; that length is not trusted (apache-arrow's own writer puts the
    // compressed size there), but LZ4 cannot expand data more than LZ4_MAX_RATIO-fold.
    const maxDecodedBytes = (k: number): number => {
      const len = Number(header.buffers[k].length);
      if (!header.compression || len < 8) return len;
      const prefix = new DataView(src.read(body + Number(header.buffers[k].offset), 8).buffer).getBigInt64(0, true);
      return prefix === -1n ? len - 8 : (len - 8) * LZ4_MAX_RATIO + 64;
    };
    if (at && elem) {
      const list = header.nodes[at.listNode];
      const values = header.nodes[at.valueNode];
      if (!list || !values || !header.buffers[at.valueBuffer]) throw fail('lacks the nodes or buffers of its vector column');
      if (Number(list.length) !== rows) throw fail(`claims ${rows} rows but its vector column has ${list.length}`);
      const eb = ELEMENT_BYTES[elem];
      const need = fixed ? rows * (field.type as FixedSizeList).listSize : Number(values.length);
      if (fixed && Number(values.length) < need) throw fail(`claims ${rows} vectors of ${(field.type as FixedSizeList).listSize} values but holds ${values.length} values`);
      const have = maxDecodedBytes(at.valueBuffer);
      if (have < need * eb)
        throw fail(`claims ${need} ${elem} values (${need * eb} bytes) but its values buffer can hold at most ${have} bytes`);
      const offsetBytes = DataType.isLargeList(field.type) ? 8 : 4;
      if (!fixed && rows > 0 && maxDecodedBytes(at.offsetsBuffer) < (rows + 1) * offsetBytes)
        throw fail(`claims ${rows} rows but its list offsets buffer can hold at most ${maxDecodedBytes(at.offsetsBuffer)} bytes (needs ${(rows + 1) * offsetBytes})`);
    }
    i++;
  }
}

export async function readArrowDirect(src: ByteSource, reader: RecordBatchReader, column: number, progress: () => void = () => {}): Promise<RawDataset | undefined> {
  const field = reader.schema.fields[column];
  const fixed = DataType.isFixedSizeList(field.type);
  const large = DataType.isLargeList(field.type);
  if (!(fixed || large || DataType.isList(field.type))) return undefined;
  const offsetBytes = large ? 8 : 4;
  const elem = FLOAT_ELEMENTS[field.type.children[0].type.precision];
  if (!elem) return undefined;
  const eb = ELEMENT_BYTES[elem];
  const position = columnPosition(reader, column);
  if (!position) return undefined;
  const { listNode, valueNode, offsetsBuffer, valueBuffer } = position;
  let d = fixed ? (field.type as FixedSizeList).listSize : -1; // a List's d comes from its first row

  // Plan every batch first, so nothing is read unless the whole file fits the fast path.
  const parts: { rows: number; position: number }[] = [];
  let n = 0;
  try {
    for (const { header, body } of recordBatchHeaders(src, reader)) {
      const rows = Number(header.length);
      const list = header.nodes[listNode];
      const values = header.nodes[valueNode];
      const region = header.buffers[valueBuffer];
      if (header.compression || !list || !values || !region) return undefined;
      if (list.nullCount !== 0 || values.nullCount !== 0 || list.length !== rows) return undefined;
      if (rows === 0) continue;
      let first = 0; // index of the batch's first value in the values buffer
      if (!fixed) {
        const offsetsRegion = header.buffers[offsetsBuffer];
        if (!offsetsRegion || offsetsRegion.length < (rows + 1) * offsetBytes) return undefined;
        const raw = src.read(body + offsetsRegion.offset, (rows + 1) * offsetBytes).buffer;
        const offsets = large ? Array.from(new BigInt64Array(raw), Number) : new Int32Array(raw);
        if (d < 0) d = offsets[1] - offsets[0];
        // Every row must hold exactly d values; otherwise the general path names the odd row.
        for (let i = 0; i < rows; i++) if (offsets[i + 1] - offsets[i] !== d) return undefined;
        first = offsets[0];
      }
      if (d <= 0 || values.length < first + rows * d || region.length < (first + rows * d) * eb) return undefined;
      parts.push({ rows, position: body + region.offset + first * eb });
      n += rows;
    }
  } catch {
    return undefined;
  }
  if (n === 0) return undefined; // let the general path word the error
  const dtype = keptAs(elem);
  const store = allocStore(n, d, dtype);
  let at = 0;
  let firstBad = -1;
  for (const part of parts) {
    const bad = await readElements(src, part.position, part.rows * d, elem, store, at * d);
    // readElements reports the element index within `data`, so this is already the global row.
    if (firstBad < 0 && bad >= 0) firstBad = Math.floor(bad / d);
    at += part.rows;
    progress();
  }
  return { n, d, ...store, format: `${reader.isFile() ? 'arrow' : 'arrow stream'} ${field.type}`, inputDtype: elem, firstBadRow: firstBad };
}
