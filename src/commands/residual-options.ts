// compress's flags for what each vector stores beside its anchor id: --quality, --bytes, --residual,
// --pq, --pq-bits, --pq-dims (their meaning: src/api/compress-codec.ts and src/api/residuals.ts).
import { Option, type Command } from 'commander';
import { DEFAULT_QUALITY, parseBytes, parseQuality } from '../api/compress-codec.js';
import type { ResidualMode } from '../api/options.js';
import { parseInteger } from './options.js';

export interface ResidualFlags {
  residual?: ResidualMode;
  quality?: number;
  pq?: number;
  pqBits?: string;
  pqDims?: number;
  bytes?: number;
}

export function addResidualOptions(cmd: Command): Command {
  return cmd
    .option(
      '--quality <recall>',
      `the smallest file whose decoded vectors keep this recall@10 of exact search, measured on a sample (default ${DEFAULT_QUALITY})`,
      parseQuality,
    )
    .option('--bytes <B>', 'the best recall@10 within B bytes per vector, every section counted (with --residual pq: the most subspaces that fit; with --residual bits: the most code bytes)', parseBytes)
    .addOption(
      new Option(
        '--residual <mode>',
        'store exactly this beside each anchor id, no measuring: none, int8 / int4 per dimension (d or d/2 bytes/vector), pq (product-quantized: --pq M or --bytes B), or bits (0-8 bits per dimension, allocated where they remove the most error: d/2 bytes/vector or --bytes B)',
      ).choices(['none', 'int8', 'int4', 'pq', 'bits']),
    )
    .option('--pq <M>', 'with --residual pq: M subspaces, one code each per vector (default: d/4, at most d)', (v) => parseInteger('--pq', v, 1))
    .addOption(new Option('--pq-bits <bits>', 'with --residual pq: bits per code, 8 (256 centroids, default) or 4 (16, two codes a byte)').choices(['8', '4']))
    .option(
      '--pq-dims <k>',
      "with --residual pq: code the residual along its k leading principal directions only (k x d f16 values stored); pays on real data at low rates, where the residual's variance sits in few directions (default: every dimension)",
      (v) => parseInteger('--pq-dims', v, 1),
    );
}

/** The flags as compress() takes them. */
export function residualChoiceFrom(o: ResidualFlags) {
  return { residual: o.residual, quality: o.quality, pq: o.pq, pqDims: o.pqDims, bytes: o.bytes, pqBits: o.pqBits === undefined ? undefined : Number(o.pqBits) };
}
