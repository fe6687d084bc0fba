// Minimal .npy reader for the bench scripts (little-endian, C order, 2-D, f32/f16/f64): the data
// lands in shared memory as a Dataset (buffer + byteOffset, src/vectors/dataset.ts), as the CLI's readers
// would give it.
import { readFileSync } from 'node:fs';

export function readNpy(path) {
  const buf = readFileSync(path);
  const hlen = buf.readUInt16LE(8);
  const header = buf.toString('latin1', 10, 10 + hlen);
  const descr = /'descr':\s*'([^']+)'/.exec(header)[1];
  const shape = /'shape':\s*\((\d+),\s*(\d+)\)/.exec(header);
  if (/'fortran_order':\s*True/.test(header)) throw new Error(`${path}: Fortran order not supported by the bench reader`);
  const n = Number(shape[1]), d = Number(shape[2]);
  const body = new Uint8Array(buf.subarray(10 + hlen)); // aligned copy
  if (descr === '<f2') {
    const buffer = new SharedArrayBuffer(n * d * 2);
    new Uint16Array(buffer).set(new Uint16Array(body.buffer, 0, n * d));
    return { n, d, dtype: 'f16', buffer, byteOffset: 0, format: 'npy', dropped: 0 };
  }
  const src = descr === '<f4' ? new Float32Array(body.buffer, 0, n * d) : descr === '<f8' ? new Float64Array(body.buffer, 0, n * d) : null;
  if (!src) throw new Error(`${path}: dtype ${descr} not supported by the bench reader`);
  const buffer = new SharedArrayBuffer(n * d * 4);
  new Float32Array(buffer).set(src);
  return { n, d, dtype: 'f32', buffer, byteOffset: 0, format: 'npy', dropped: 0 };
}
