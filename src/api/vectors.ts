// readVectors() and openVlc(): the readers the commands use, for a Node program.
import type { Dataset } from '../vectors/dataset.js';
import type { ReadOptions } from '../io/read.js';
import { readInputs } from '../io/shards.js';
import { readVlc } from '../io/vlc/file.js';
import type { VlcFile } from '../io/vlc/format.js';
import { reconstruct } from '../io/vlc/reconstruct.js';

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
  /** The n × d vectors as decompress rebuilds them (anchor + residual), f32. */
  reconstruct(): Float32Array;
}

/** Read and validate a .vlc file (every checksum), as `vlc info` does. */
export async function openVlc(path: string): Promise<OpenedVlc> {
  const file = await readVlc(path);
  return { ...file, reconstruct: () => reconstruct(file) };
}
