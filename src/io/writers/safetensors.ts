// safetensors writer: one 2-D tensor `embedding` (F32 or F16). The header is JSON padded with
// spaces so the data starts 8-byte aligned, as the reference implementation writes it.
import type { ByteSink } from '../atomic.js';
import { VERSION } from '../../version.js';
import { f32ToF16Into } from './half.js';

const PIECE_VALUES = 4 << 20;

export async function writeSafetensors(sink: ByteSink, data: Float32Array, n: number, d: number, dtype: 'f32' | 'f16'): Promise<void> {
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
  const total = n * d;
  const half = dtype === 'f16' ? new Uint16Array(Math.min(PIECE_VALUES, total)) : undefined;
  for (let at = 0; at < total; at += PIECE_VALUES) {
    const k = Math.min(PIECE_VALUES, total - at);
    if (half) {
      f32ToF16Into(data, at, half.subarray(0, k));
      await sink.write(new Uint8Array(half.buffer, 0, k * 2));
    } else {
      await sink.write(new Uint8Array(data.buffer, data.byteOffset + at * 4, k * 4));
    }
  }
}
