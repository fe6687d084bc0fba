// Fast path for the common Feather/Arrow file: an uncompressed FixedSizeList<Float16|32|64>
// column, or a List of floats whose rows all have the same length, without nulls. Its values sit contiguously in each record batch's body, so they are read
// straight from the file into the Dataset (like an .npy), skipping apache-arrow's per-batch
// buffers and a second full copy. Anything unusual returns undefined and the general path runs.
import { DataType, Message, Precision, type Field, type FixedSizeList, type RecordBatchReader } from 'apache-arrow';
import { allocVectors } from '../dataset.js';
import { ELEMENT_BYTES, keptAs, readElements, type ElementType } from './elements.js';
import type { ByteSource } from './source.js';
import type { RawDataset } from './types.js';

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

/**
 * Each record batch of an Arrow file, from the footer: its message header (row count, field
 * nodes, buffer regions; a few hundred bytes read) and where its body starts. Throws on a block
 * that is not a record batch.
 */
export function* recordBatchHeaders(src: ByteSource, footer: NonNullable<RecordBatchReader['footer']>) {
  for (const block of footer.recordBatches()) {
    const meta = src.read(block.offset, block.metaDataLength);
    // Message framing: [0xFFFFFFFF continuation] int32 length, then the flatbuffer.
    const skip = new DataView(meta.buffer).getInt32(0, true) === -1 ? 8 : 4;
    const message = Message.decode(meta.subarray(skip));
    if (!message.isRecordBatch()) throw new Error('footer block is not a record batch');
    yield { header: message.header(), body: block.offset + block.metaDataLength };
  }
}

const FLOAT_ELEMENTS: Record<number, ElementType> = { [Precision.HALF]: 'f16', [Precision.SINGLE]: 'f32', [Precision.DOUBLE]: 'f64' };

export function readArrowFileDirect(src: ByteSource, reader: RecordBatchReader, column: number, progress: () => void = () => {}): RawDataset | undefined {
  const footer = reader.footer;
  const field = reader.schema.fields[column];
  const fixed = DataType.isFixedSizeList(field.type);
  if (!footer || !(fixed || DataType.isList(field.type))) return undefined;
  const elem = FLOAT_ELEMENTS[field.type.children[0].type.precision];
  if (!elem) return undefined;
  const eb = ELEMENT_BYTES[elem];
  // Position of the column's nodes and buffers among each batch's. A FixedSizeList owns
  // [validity] and its child [validity, values]; a List has [validity, offsets] before the child.
  let node = 0;
  let buffer = 0;
  for (const f of reader.schema.fields.slice(0, column)) {
    const l = layout(f.type);
    if (!l) return undefined;
    node += l.nodes;
    buffer += l.buffers;
  }
  const [listNode, valueNode] = [node, node + 1];
  const [offsetsBuffer, valueBuffer] = fixed ? [-1, buffer + 2] : [buffer + 1, buffer + 3];
  let d = fixed ? (field.type as FixedSizeList).listSize : -1; // a List's d comes from its first row

  // Plan every batch first, so nothing is read unless the whole file fits the fast path.
  const parts: { rows: number; position: number }[] = [];
  let n = 0;
  try {
    for (const { header, body } of recordBatchHeaders(src, footer)) {
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
        if (!offsetsRegion || offsetsRegion.length < (rows + 1) * 4) return undefined;
        const offsets = new Int32Array(src.read(body + offsetsRegion.offset, (rows + 1) * 4).buffer);
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
  const data = allocVectors(n, d, dtype);
  let at = 0;
  let firstBad = -1;
  for (const part of parts) {
    const bad = readElements(src, part.position, part.rows * d, elem, data, at * d);
    // readElements reports the element index within `data`, so this is already the global row.
    if (firstBad < 0 && bad >= 0) firstBad = Math.floor(bad / d);
    at += part.rows;
    progress();
  }
  return { n, d, dtype, data, format: `arrow ${field.type}`, firstBadRow: firstBad };
}
