// Arrow IPC file writer: one column "embedding" of FixedSizeList<Float32|Float16>[d], written in
// record batches. f32 batches are views of the caller's array, so the only extra memory is the
// f16 (or LZ4) copy of the values when asked for.
import {
  CompressionType,
  Field,
  FixedSizeList,
  Float16,
  Float32,
  makeData,
  RecordBatch,
  RecordBatchFileWriter,
  RecordBatchStreamWriter,
  Schema,
  Struct,
} from 'apache-arrow';
import type { ByteSink } from '../atomic.js';
import { registerArrowCodecs } from '../readers/arrow-codecs.js';
import { f32ToF16Into } from './half.js';

export interface ArrowWriteOptions {
  dtype: 'f32' | 'f16';
  /** 'file' (Feather v2 / .arrow, the default) or 'stream'. */
  ipc?: 'file' | 'stream';
  /** LZ4-frame compress the buffers (what pyarrow's Feather writer does by default). */
  lz4?: boolean;
  /** Rows per record batch (default: about 64 MiB of values). */
  batchRows?: number;
}

export async function writeArrow(sink: ByteSink, data: Float32Array, n: number, d: number, o: ArrowWriteOptions): Promise<void> {
  const elemType = o.dtype === 'f16' ? new Float16() : new Float32();
  const listType = new FixedSizeList(d, new Field('item', elemType, false));
  const schema = new Schema([new Field('embedding', listType, false)]);
  if (o.lz4) registerArrowCodecs();
  const options = { compressionType: o.lz4 ? CompressionType.LZ4_FRAME : null };
  const writer = o.ipc === 'stream' ? new RecordBatchStreamWriter(options) : new RecordBatchFileWriter(options);
  const batchRows = o.batchRows ?? Math.max(1, Math.floor((64 << 20) / (d * 4)));
  // At least one batch, even for n = 0: apache-arrow writes the schema only with the first batch.
  for (let r0 = 0; r0 < n || r0 === 0; r0 += batchRows) {
    const k = Math.min(batchRows, n - r0);
    const view = data.subarray(r0 * d, (r0 + k) * d);
    let values: Float32Array | Uint16Array = view;
    if (o.dtype === 'f16') f32ToF16Into(data, r0 * d, (values = new Uint16Array(k * d)));
    const child = makeData({ type: elemType, length: k * d, nullCount: 0, data: values as never });
    const list = makeData({ type: listType, length: k, nullCount: 0, child });
    const struct = makeData({ type: new Struct(schema.fields), length: k, nullCount: 0, children: [list] });
    // Queued, not copied: the writer keeps views of `values` until we drain it below.
    writer.write(new RecordBatch(schema, struct));
  }
  writer.finish();
  for await (const chunk of writer) await sink.write(chunk);
}
