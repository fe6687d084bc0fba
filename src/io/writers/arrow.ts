// Arrow IPC file writer: one column "embedding" of FixedSizeList<Float16|32|64|Uint8|Int8>[d], written in
// record batches taken from a RowSource one at a time and drained to the sink as they are
// encoded, so a large output never sits in memory whole.
import {
  CompressionType,
  Field,
  FixedSizeList,
  Float16,
  Float32,
  Float64,
  Int8,
  Uint8,
  makeData,
  RecordBatch,
  RecordBatchFileWriter,
  RecordBatchStreamWriter,
  Schema,
  Struct,
} from 'apache-arrow';
import type { ByteSink } from '../output.js';
import type { RowSource } from '../rows.js';
import { registerArrowCodecs } from '../readers/arrow-codecs.js';
import { narrow, type Narrowing, type OutputDtype } from './narrow.js';

/** The element types an Arrow column holds here (Arrow has no bfloat16). */
export const ARROW_DTYPES: readonly OutputDtype[] = ['f32', 'f16', 'f64', 'u8', 'i8'];

export interface ArrowWriteOptions {
  dtype: OutputDtype;
  /** Counts values clamped or saturated on the way to `dtype`. */
  tally?: Narrowing;
  /** 'file' (Feather v2 / .arrow, the default) or 'stream'. */
  ipc?: 'file' | 'stream';
  /** LZ4-frame compress the buffers (what pyarrow's Feather writer does by default). */
  lz4?: boolean;
  /** Rows per record batch (default: about 64 MiB of values). */
  batchRows?: number;
}

export async function writeArrow(sink: ByteSink, rows: RowSource, o: ArrowWriteOptions): Promise<void> {
  const { n, d } = rows;
  const elemType = { f16: () => new Float16(), f32: () => new Float32(), f64: () => new Float64(), u8: () => new Uint8(), i8: () => new Int8() }[o.dtype as 'f32']?.();
  if (!elemType) throw new Error(`writeArrow: Arrow has no ${o.dtype}`);
  const tally = o.tally ?? { clamped: 0 };
  const listType = new FixedSizeList(d, new Field('item', elemType, false));
  const schema = new Schema([new Field('embedding', listType, false)]);
  if (o.lz4) registerArrowCodecs();
  const options = { compressionType: o.lz4 ? CompressionType.LZ4_FRAME : null };
  const writer = o.ipc === 'stream' ? new RecordBatchStreamWriter(options) : new RecordBatchFileWriter(options);
  const batchRows = o.batchRows ?? Math.max(1, Math.floor((64 << 20) / (d * 4)));
  // The writer queues its output; drain it to the sink as it comes, so only one batch is held.
  let inFlight = 0;
  let failure: unknown;
  const draining = (async () => {
    for await (const chunk of writer) {
      inFlight++;
      try {
        await sink.write(chunk);
      } finally {
        inFlight--;
      }
    }
  })().catch((e) => (failure = e));
  const settle = async () => {
    do await new Promise((r) => setImmediate(r));
    while (inFlight > 0);
    if (failure) throw failure;
  };
  // At least one batch, even for n = 0: apache-arrow writes the schema only with the first batch.
  for (let r0 = 0; r0 < n || r0 === 0; r0 += batchRows) {
    const k = Math.max(0, Math.min(batchRows, n - r0));
    const view = k > 0 ? rows.rows(r0, k) : new Float32Array(0);
    // A copy: the writer keeps the batch's buffers until they are drained, and `view` is reused.
    const values = o.dtype === 'f32' ? view.slice(0, k * d) : narrow(view.subarray(0, k * d), o.dtype, tally);
    const child = makeData({ type: elemType, length: k * d, nullCount: 0, data: values as never });
    const list = makeData({ type: listType, length: k, nullCount: 0, child });
    const struct = makeData({ type: new Struct(schema.fields), length: k, nullCount: 0, children: [list] });
    writer.write(new RecordBatch(schema, struct));
    await settle();
  }
  writer.finish();
  await draining;
  if (failure) throw failure;
}
