// safetensors writer: one 2-D tensor `embedding` (F32, F16, BF16, F64, U8 or I8). The header is JSON padded with
// spaces so the data starts 8-byte aligned, as the reference implementation writes it.
import type { ByteSink } from '../output.js';
import type { RowSource } from '../rows.js';
import { VERSION } from '../../version.js';
import { writeRowsPlain } from './npy.js';
import type { Narrowing, OutputDtype } from './narrow.js';
import { INPUT_DTYPE_BYTES } from '../../vectors/dataset.js';

const TENSOR_DTYPE: Record<OutputDtype, string> = { f32: 'F32', f16: 'F16', bf16: 'BF16', f64: 'F64', u8: 'U8', i8: 'I8' };

const PIECE_VALUES = 4 << 20;

export async function writeSafetensors(sink: ByteSink, rows: RowSource, dtype: OutputDtype, tally: Narrowing = { clamped: 0 }): Promise<void> {
  const { n, d } = rows;
  const eb = INPUT_DTYPE_BYTES[dtype];
  const header = {
    __metadata__: { format: 'pt', writer: `vlc ${VERSION}` },
    embedding: { dtype: TENSOR_DTYPE[dtype], shape: [n, d], data_offsets: [0, n * d * eb] },
  };
  let json = JSON.stringify(header);
  json = json.padEnd(Math.ceil((8 + json.length) / 8) * 8 - 8, ' ');
  const head = new Uint8Array(8 + json.length);
  new DataView(head.buffer).setBigUint64(0, BigInt(json.length), true);
  head.set(new TextEncoder().encode(json), 8);
  await sink.write(head);
  await writeRowsPlain(sink, rows, dtype, PIECE_VALUES * 4, tally);
}
