// .npy writer (format 1.0, or 2.0 when the header would not fit), C order, f32 or f16.
import type { ByteSink } from '../atomic.js';
import { f32ToF16Into } from './half.js';

const ROWS_BYTES = 16 << 20;

/** Magic + version + header dict padded with spaces so the data starts on a 64-byte boundary. */
export function npyHeader(descr: string, shape: number[]): Uint8Array {
  const dict = `{'descr': '${descr}', 'fortran_order': False, 'shape': (${shape.join(', ')}${shape.length === 1 ? ',' : ''}), }`;
  let version = 1;
  let pre = 10;
  let total = Math.ceil((pre + dict.length + 1) / 64) * 64;
  if (total - pre > 0xffff) {
    version = 2;
    pre = 12;
    total = Math.ceil((pre + dict.length + 1) / 64) * 64;
  }
  const text = dict.padEnd(total - pre - 1, ' ') + '\n';
  const out = new Uint8Array(total);
  out.set([0x93, 0x4e, 0x55, 0x4d, 0x50, 0x59, version, 0]);
  const dv = new DataView(out.buffer);
  if (version === 1) dv.setUint16(8, text.length, true);
  else dv.setUint32(8, text.length, true);
  for (let i = 0; i < text.length; i++) out[pre + i] = text.charCodeAt(i);
  return out;
}

export async function writeNpy(sink: ByteSink, data: Float32Array, n: number, d: number, dtype: 'f32' | 'f16'): Promise<void> {
  await sink.write(npyHeader(dtype === 'f32' ? '<f4' : '<f2', [n, d]));
  const total = n * d;
  const per = Math.max(1, Math.floor(ROWS_BYTES / 4));
  const half = dtype === 'f16' ? new Uint16Array(Math.min(per, total)) : undefined;
  for (let at = 0; at < total; at += per) {
    const k = Math.min(per, total - at);
    if (half) {
      const h = half.subarray(0, k);
      f32ToF16Into(data, at, h);
      await sink.write(new Uint8Array(h.buffer, 0, k * 2));
    } else {
      await sink.write(new Uint8Array(data.buffer, data.byteOffset + at * 4, k * 4));
    }
  }
}
