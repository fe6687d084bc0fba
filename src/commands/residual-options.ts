// compress's residual flags: --residual, --pq, --pq-bits, --bytes (their meaning: src/api/residuals.ts).
import { Option, type Command } from 'commander';
import type { ResidualMode } from '../codecs/index.js';
import { UsageError } from '../errors.js';
import { parseInteger } from './options.js';

export interface ResidualFlags {
  residual: ResidualMode;
  pq?: number;
  pqBits?: string;
  bytes?: number;
}

export function addResidualOptions(cmd: Command): Command {
  return cmd
    .addOption(
      new Option(
        '--residual <mode>',
        'also store each vector minus its anchor: int8 / int4 per dimension (d or d/2 bytes/vector), or pq (product-quantized: --pq M or --bytes B)',
      )
        .choices(['none', 'int8', 'int4', 'pq'])
        .default('none'),
    )
    .option('--pq <M>', 'with --residual pq: M subspaces, one code each per vector (default: d/4, at most d)', (v) => parseInteger('--pq', v, 1))
    .addOption(new Option('--pq-bits <bits>', 'with --residual pq: bits per code, 8 (256 centroids, default) or 4 (16, two codes a byte)').choices(['8', '4']))
    .option('--bytes <B>', 'with --residual pq: the largest M whose whole .vlc file stays within B bytes per vector', parseBudget);
}

function parseBudget(v: string): number {
  const x = Number(v.trim());
  if (!(v.trim() !== '' && Number.isFinite(x) && x > 0)) throw new UsageError(`--bytes must be a positive number of bytes per vector (got '${v}')`);
  return x;
}

/** The flags as compress() takes them. */
export function residualChoiceFrom(o: ResidualFlags) {
  return { residual: o.residual, pq: o.pq, bytes: o.bytes, pqBits: o.pqBits === undefined ? undefined : Number(o.pqBits) };
}
