// Writing vectors (decompress output, exports): .npy, Arrow IPC file (Feather v2), Parquet,
// safetensors or .fvecs, always through writeAtomic so a failure or Ctrl-C never leaves a partial file.
import { extname } from 'node:path';
import { UsageError } from '../errors.js';
import { writeAtomic } from './atomic.js';
import { writeFvecs } from './writers/fvecs.js';
import { writeNpy } from './writers/npy.js';
import { writeSafetensors } from './writers/safetensors.js';

export type VectorFormat = 'npy' | 'arrow' | 'parquet' | 'safetensors' | 'fvecs';

export const VECTOR_FORMATS: VectorFormat[] = ['npy', 'arrow', 'parquet', 'safetensors', 'fvecs'];

const BY_EXTENSION: Record<string, VectorFormat> = {
  '.npy': 'npy',
  '.arrow': 'arrow',
  '.feather': 'arrow',
  '.ipc': 'arrow',
  '.parquet': 'parquet',
  '.pq': 'parquet',
  '.safetensors': 'safetensors',
  '.fvecs': 'fvecs',
};

export function formatFromPath(p: string): VectorFormat | undefined {
  return BY_EXTENSION[extname(p).toLowerCase()];
}

export async function writeVectors(
  target: string,
  data: Float32Array,
  n: number,
  d: number,
  o: { format: VectorFormat; dtype?: 'f32' | 'f16' },
): Promise<void> {
  const dtype = o.dtype ?? 'f32';
  if (data.length < n * d) throw new Error(`writeVectors: ${data.length} values given for ${n} × ${d}`);
  if (o.format === 'fvecs' && dtype !== 'f32') throw new UsageError('.fvecs holds float32 only; use .npy, .arrow or .safetensors for f16 output');
  if (o.format === 'parquet' && dtype !== 'f32') throw new UsageError('the Parquet writer writes float32 only; use .npy, .arrow or .safetensors for f16 output');
  await writeAtomic(target, async (sink) => {
    if (o.format === 'npy') await writeNpy(sink, data, n, d, dtype);
    // apache-arrow is slow to import (bench/results/host_costs.json): only when an Arrow file is written.
    else if (o.format === 'arrow') await (await import('./writers/arrow.js')).writeArrow(sink, data, n, d, { dtype });
    else if (o.format === 'parquet') await (await import('./writers/parquet.js')).writeParquet(sink, data, n, d);
    else if (o.format === 'safetensors') await writeSafetensors(sink, data, n, d, dtype);
    else await writeFvecs(sink, data, n, d);
  });
}
