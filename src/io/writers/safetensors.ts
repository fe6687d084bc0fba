// safetensors writer: one 2-D tensor `embedding` (F32 or F16). The header is JSON padded with
// spaces so the data starts 8-byte aligned, as the reference implementation writes it.
import type { ByteSink } from '../output.js';
import type { RowSource } from '../rows.js';
import { VERSION } from '../../version.js';
import { writeRowsPlain } from './npy.js';

const PIECE_VALUES = 4 << 20;

export async function writeSafetensors(sink: ByteSink, rows: RowSource, dtype: 'f32' | 'f16'): Promise<void> {
  const { n, d } = rows;
  const eb = dtype === 'f32' ? 4 : 2;
  const header = {
    __metadata__: { format: 'pt', writer: `vlc ${VERSION}` },
    embedding: { dtype: dtype === 'f32' ? 'F32' : 'F16', shape: [n, d], data_offsets: [0, n * d * eb] },
  };
  let json = JSON.stringify(header);
  json = json.padEnd(Math.ceil((8 + json.length) / 8) * 8 - 8, ' ');
  const head = new Uint8Array(8 + json.length);
  new DataView(head.buffer).setBigUint64(0, BigInt(json.length), true);
  head.set(new TextEncoder().encode(json), 8);
  await sink.write(head);
  await writeRowsPlain(sink, rows, dtype, PIECE_VALUES * 4);
}
