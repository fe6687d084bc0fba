// .npy writer (format 1.0, or 2.0 when the header would not fit), C order, f32 or f16.
import type { ByteSink } from '../output.js';
import type { RowSource } from '../rows.js';
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

export async function writeNpy(sink: ByteSink, rows: RowSource, dtype: 'f32' | 'f16'): Promise<void> {
  const { n, d } = rows;
  await sink.write(npyHeader(dtype === 'f32' ? '<f4' : '<f2', [n, d]));
  await writeRowsPlain(sink, rows, dtype, ROWS_BYTES);
}

/**
 * The rows' values back to back (row-major f32, or f16), `chunkBytes` of f32 at a time: the body
 * of .npy and safetensors files.
 */
export async function writeRowsPlain(sink: ByteSink, rows: RowSource, dtype: 'f32' | 'f16', chunkBytes: number): Promise<void> {
  const { n, d } = rows;
  const per = Math.max(1, Math.floor(chunkBytes / (4 * d)));
  const half = dtype === 'f16' ? new Uint16Array(Math.min(per, n) * d) : undefined;
  for (let r0 = 0; r0 < n; r0 += per) {
    const k = Math.min(per, n - r0);
    const values = rows.rows(r0, k);
    if (half) {
      const h = half.subarray(0, k * d);
      f32ToF16Into(values, 0, h);
      await sink.write(new Uint8Array(h.buffer, 0, k * d * 2));
    } else {
      await sink.write(new Uint8Array(values.buffer, values.byteOffset, k * d * 4));
    }
  }
}
