// Writing vectors (decompress output, exports): .npy, Arrow IPC file (Feather v2), Parquet,
// safetensors or .fvecs, always through writeOutput (output.ts) so a failure or Ctrl-C never
// leaves a partial file, and rows are taken a chunk at a time from a RowSource.
import { extname } from 'node:path';
import { UsageError } from '../errors.js';
import { writeOutput, type OutputPlan } from './output.js';
import type { RowSource } from './rows.js';
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

/**
 * Write vectors as `o.format` to `out` (a plan from planOutput, or a path planned with the default
 * rules: never over an existing file). Returns the bytes written.
 */
export async function writeVectors(
  out: OutputPlan | string,
  rows: RowSource,
  o: { format: VectorFormat; dtype?: 'f32' | 'f16'; onBytes?: (written: number) => void },
): Promise<number> {
  const dtype = o.dtype ?? 'f32';
  if (o.format === 'fvecs' && dtype !== 'f32') throw new UsageError('.fvecs holds float32 only; use .npy, .arrow or .safetensors for f16 output');
  if (o.format === 'parquet' && dtype !== 'f32') throw new UsageError('the Parquet writer writes float32 only; use .npy, .arrow or .safetensors for f16 output');
  return writeOutput(
    out,
    async (sink) => {
      if (o.format === 'npy') await writeNpy(sink, rows, dtype);
      // apache-arrow is slow to import (bench/results/host_costs.json): only when an Arrow file is written.
      else if (o.format === 'arrow') await (await import('./writers/arrow.js')).writeArrow(sink, rows, { dtype });
      else if (o.format === 'parquet') await (await import('./writers/parquet.js')).writeParquet(sink, rows);
      else if (o.format === 'safetensors') await writeSafetensors(sink, rows, dtype);
      else await writeFvecs(sink, rows);
    },
    { onBytes: o.onBytes },
  );
}

/** About how many bytes writeVectors will write (values only: headers and framing are small). */
export function vectorBytes(format: VectorFormat, n: number, d: number, dtype: 'f32' | 'f16'): number {
  if (format === 'fvecs') return n * (4 + 4 * d);
  if (format === 'parquet') return n * (8 + 4 * d);
  return n * d * (dtype === 'f32' ? 4 : 2);
}
