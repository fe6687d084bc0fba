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
import { NPY_DESCR } from './writers/npy.js';
import type { Narrowing, OutputDtype } from './writers/narrow.js';
import { INPUT_DTYPE_BYTES } from '../vectors/dataset.js';

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
  o: { format: VectorFormat; dtype?: OutputDtype; onBytes?: (written: number) => void; tally?: Narrowing },
): Promise<number> {
  const dtype = o.dtype ?? 'f32';
  if (!formatHolds(o.format, dtype)) throw new UsageError(cannotHold(o.format, dtype));
  const tally = o.tally ?? { clamped: 0 };
  return writeOutput(
    out,
    async (sink) => {
      if (o.format === 'npy') await writeNpy(sink, rows, dtype, tally);
      // apache-arrow is slow to import (bench/results/host_costs.json): only when an Arrow file is written.
      else if (o.format === 'arrow') await (await import('./writers/arrow.js')).writeArrow(sink, rows, { dtype, tally });
      else if (o.format === 'parquet') await (await import('./writers/parquet.js')).writeParquet(sink, rows);
      else if (o.format === 'safetensors') await writeSafetensors(sink, rows, dtype, tally);
      else await writeFvecs(sink, rows);
    },
    { onBytes: o.onBytes },
  );
}

/**
 * Whether a format holds an element type: .npy all but bf16 (numpy has none), Arrow the same,
 * safetensors all six; .fvecs and the Parquet writer f32 only.
 */
export function formatHolds(format: VectorFormat, dtype: OutputDtype): boolean {
  if (format === 'safetensors') return true;
  if (format === 'npy' || format === 'arrow') return NPY_DESCR[dtype] !== undefined; // Arrow: the same five
  return dtype === 'f32';
}

/** Why `format` cannot take `dtype`, and what can. */
export function cannotHold(format: VectorFormat, dtype: OutputDtype): string {
  const holders = VECTOR_FORMATS.filter((f) => formatHolds(f, dtype)).map((f) => `.${f}`);
  const what = format === 'fvecs' ? '.fvecs holds float32 only' : format === 'parquet' ? 'the Parquet writer writes float32 only' : `${format === 'npy' ? '.npy' : 'Arrow'} has no ${dtype}`;
  return `${what}; use ${holders.join(' or ')} for ${dtype} output, or --dtype f32`;
}

/** About how many bytes writeVectors will write (values only: headers and framing are small). */
export function vectorBytes(format: VectorFormat, n: number, d: number, dtype: OutputDtype): number {
  if (format === 'fvecs') return n * (4 + 4 * d);
  if (format === 'parquet') return n * (8 + 4 * d);
  return n * d * INPUT_DTYPE_BYTES[dtype];
}
