// .npy writer (format 1.0, or 2.0 when the header would not fit), C order, in any element type
// numpy has (not bf16): the decoded f32 values narrowed by narrow.ts.
import type { ByteSink } from '../output.js';
import type { RowSource } from '../rows.js';
import { bytesOf, narrow, type NarrowArray, type Narrowing, type OutputDtype } from './narrow.js';

/** numpy's name of each element type .npy can hold. */
export const NPY_DESCR: Partial<Record<OutputDtype, string>> = { f32: '<f4', f16: '<f2', f64: '<f8', u8: '|u1', i8: '|i1' };

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

export async function writeNpy(sink: ByteSink, rows: RowSource, dtype: OutputDtype, tally: Narrowing = { clamped: 0 }): Promise<void> {
  const { n, d } = rows;
  const descr = NPY_DESCR[dtype];
  if (!descr) throw new Error(`writeNpy: .npy has no ${dtype}`);
  await sink.write(npyHeader(descr, [n, d]));
  await writeRowsPlain(sink, rows, dtype, ROWS_BYTES, tally);
}

/**
 * The rows' values back to back (row-major, in `dtype`), `chunkBytes` of f32 at a time: the body
 * of .npy and safetensors files. Clamped / saturated values are counted in `tally`.
 */
export async function writeRowsPlain(sink: ByteSink, rows: RowSource, dtype: OutputDtype, chunkBytes: number, tally: Narrowing = { clamped: 0 }): Promise<void> {
  const { n, d } = rows;
  const per = Math.max(1, Math.floor(chunkBytes / (4 * d)));
  let scratch: NarrowArray | undefined;
  for (let r0 = 0; r0 < n; r0 += per) {
    const k = Math.min(per, n - r0);
    const out = narrow(rows.rows(r0, k).subarray(0, k * d), dtype, tally, scratch);
    if (dtype !== 'f32') scratch = out;
    await sink.write(bytesOf(out));
  }
}
