// .fvecs writer: per vector an int32 dimension, then d float32 values.
import type { ByteSink } from '../output.js';
import type { RowSource } from '../rows.js';

export async function writeFvecs(sink: ByteSink, rows: RowSource): Promise<void> {
  const { n, d } = rows;
  const record = 4 + 4 * d;
  const perChunk = Math.max(1, Math.floor((16 << 20) / record));
  const buf = new ArrayBuffer(Math.min(n, perChunk) * record);
  const ints = new Int32Array(buf);
  const floats = new Float32Array(buf);
  for (let r0 = 0; r0 < n; r0 += perChunk) {
    const k = Math.min(perChunk, n - r0);
    const values = rows.rows(r0, k);
    for (let i = 0; i < k; i++) {
      ints[i * (d + 1)] = d;
      floats.set(values.subarray(i * d, (i + 1) * d), i * (d + 1) + 1);
    }
    await sink.write(new Uint8Array(buf, 0, k * record));
  }
}
