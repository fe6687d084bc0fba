// readVectors() and openVlc(): the readers the commands use, for a Node program.
import type { Dataset } from '../vectors/dataset.js';
import type { ReadOptions } from '../io/read.js';
import { readInputs } from '../io/shards.js';
import { readVlc } from '../io/vlc/file.js';
import type { VlcFile } from '../io/vlc/format.js';
import { reconstruct, reconstructRange } from '../io/vlc/reconstruct.js';

/**
 * Read an embedding file (any input format; '-' for stdin; several files, a directory or a glob
 * as one) as `vlc compress` does: n × d values, f32 or f16 (half bits), NaN/Inf refused or
 * dropped, in shared memory — read them with `rows(ds, r0, r1)` or `forEachPiece` (vectors/dataset.ts).
 */
export function readVectors(path: string | string[], o: ReadOptions = {}): Promise<Dataset> {
  return readInputs(path, o);
}

/** An opened .vlc file: manifest, anchors (m × d, f32), assignments (n ids), and its reconstruction. */
export interface OpenedVlc extends VlcFile {
  /**
   * Vectors r0 .. r1 − 1 as decompress rebuilds them (anchor + residual), (r1 − r0) × d f32, into
   * `out` when given: the way to read a file of any size, a block of rows at a time.
   */
  rows(r0: number, r1: number, out?: Float32Array): Float32Array;
  /** All n × d vectors in one array: small files only (past one array's 2^32 − 1 values it throws, naming rows()). */
  reconstruct(): Float32Array;
}

/** Read and validate a .vlc file (every checksum), as `vlc info` does. */
export async function openVlc(path: string): Promise<OpenedVlc> {
  const file = await readVlc(path);
  const { n, d } = file.manifest;
  const rows = (r0: number, r1: number, out?: Float32Array): Float32Array => {
    if (!(Number.isInteger(r0) && Number.isInteger(r1) && 0 <= r0 && r0 <= r1 && r1 <= n)) throw new RangeError(`rows(${r0}, ${r1}): the file has rows 0 .. ${n}`);
    return reconstructRange(file, r0, r1, out ?? new Float32Array((r1 - r0) * d));
  };
  return { ...file, rows, reconstruct: () => reconstruct(file) };
}
