// Fast path for the common Feather/Arrow file: an uncompressed FixedSizeList<Float16|32|64>
// column without nulls. Its values sit contiguously in each record batch's body, so they are read
// straight from the file into the Dataset (like an .npy), skipping apache-arrow's per-batch
// buffers and a second full copy. Anything unusual returns undefined and the general path runs.
import { DataType, Message, Precision, type Field, type RecordBatchReader } from 'apache-arrow';
import { allocVectors } from '../dataset.js';
import { keptAs, readElements, type ElementType } from './elements.js';
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

const FLOAT_ELEMENTS: Record<number, ElementType> = { [Precision.HALF]: 'f16', [Precision.SINGLE]: 'f32', [Precision.DOUBLE]: 'f64' };

export function readArrowFileDirect(src: ByteSource, reader: RecordBatchReader, column: number): RawDataset | undefined {
  const footer = reader.footer;
  const field = reader.schema.fields[column];
  if (!footer || !DataType.isFixedSizeList(field.type)) return undefined;
  const elem = FLOAT_ELEMENTS[field.type.children[0].type.precision];
  const d = field.type.listSize;
  if (!elem || d === 0) return undefined;
  // Position of the column's child values among each batch's nodes and buffers.
  let node = 0;
  let buffer = 0;
  for (const f of reader.schema.fields.slice(0, column)) {
    const l = layout(f.type);
    if (!l) return undefined;
    node += l.nodes;
    buffer += l.buffers;
  }
  const [listNode, valueNode, valueBuffer] = [node, node + 1, buffer + 2];

  // Plan every batch first, so nothing is read unless the whole file fits the fast path.
  const parts: { rows: number; position: number }[] = [];
  let n = 0;
  try {
    for (const block of footer.recordBatches()) {
      const meta = src.read(block.offset, block.metaDataLength);
      const skip = new DataView(meta.buffer).getInt32(0, true) === -1 ? 8 : 4;
      const message = Message.decode(meta.subarray(skip));
      if (!message.isRecordBatch()) return undefined;
      const header = message.header();
      const rows = Number(header.length);
      const list = header.nodes[listNode];
      const values = header.nodes[valueNode];
      const region = header.buffers[valueBuffer];
      if (header.compression || !list || !values || !region) return undefined;
      if (list.nullCount !== 0 || values.nullCount !== 0 || list.length !== rows || values.length !== rows * d) return undefined;
      if (region.length < rows * d * (elem === 'f64' ? 8 : elem === 'f32' ? 4 : 2)) return undefined;
      parts.push({ rows, position: block.offset + block.metaDataLength + region.offset });
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
    if (firstBad < 0 && bad >= 0) firstBad = Math.floor(bad / d);
    at += part.rows;
  }
  return { n, d, dtype, data, format: `arrow ${field.type}`, firstBadRow: firstBad };
}
