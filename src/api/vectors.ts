// readVectors() and openVlc(): the readers the commands use, for a Node program.
import type { Dataset } from '../io/dataset.js';
import { readDataset, type ReadOptions } from '../io/read.js';
import { readVlc } from '../io/vlc/file.js';
import type { VlcFile } from '../io/vlc/format.js';
import { reconstruct } from '../io/vlc/reconstruct.js';

/**
 * Read an embedding file (any input format; '-' for stdin) as `vlc compress` does: n × d values,
 * f32 (or f16 half bits in a Uint16Array when the file holds f16), NaN/Inf refused or dropped.
 */
export function readVectors(path: string, o: ReadOptions = {}): Promise<Dataset> {
  return readDataset(path, o);
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
