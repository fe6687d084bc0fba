// compress's flags for what each vector stores beside its anchor id: --quality, --bytes, --residual,
// and each codec's own flags (pq's --pq, --pq-bits, --pq-dims), listed from the codec registry
// (their meaning: src/api/compress-codec.ts and src/codec-registry/).
import { Option, type Command } from 'commander';
import { residualCodecs } from '../api/codecs.js';
import { DEFAULT_QUALITY, parseBytes, parseQuality } from '../api/compress-codec.js';
import { parseInteger } from './options.js';

export interface ResidualFlags {
  residual?: string;
  quality?: number;
  bytes?: number;
  /** Each codec's own flags, by key (pq, pqBits, pqDims, …). */
  [codecFlag: string]: unknown;
}

export function addResidualOptions(cmd: Command): Command {
  const codecs = residualCodecs();
  cmd
    .option(
      '--quality <recall>',
      `the smallest file whose decoded vectors keep this recall@10 of exact search, measured on a sample (default ${DEFAULT_QUALITY})`,
      parseQuality,
    )
    .option('--bytes <B>', 'the best recall@10 within B bytes per vector, every section counted (with --residual pq: the most subspaces that fit; with --residual bits: the most code bytes)', parseBytes)
    .addOption(
      new Option('--residual <mode>', `store exactly this beside each anchor id, no measuring: ${codecs.map((c) => c.help).join(', ')}`).choices(codecs.map((c) => c.mode)),
    );
  for (const c of codecs)
    for (const f of c.flags) {
      const name = f.flag.split(' ')[0];
      const option = new Option(f.flag, f.help);
      if (f.parse === 'positive-integer') option.argParser((v: string) => parseInteger(name, v, 1));
      else option.choices(f.parse); // kept a string here (commander checks the choice), a number below when numeric
      cmd.addOption(option);
    }
  return cmd;
}

/** The flags as compress() takes them: the codecs' own under their keys. */
export function residualChoiceFrom(o: ResidualFlags) {
  const { residual, quality, bytes } = o;
  const asGiven = (v: unknown) => (typeof v === 'string' && v.trim() !== '' && Number.isFinite(Number(v)) ? Number(v) : v);
  const own = Object.fromEntries(residualCodecs().flatMap((c) => c.flags.map((f) => [f.key, asGiven(o[f.key])] as const)).filter(([, v]) => v !== undefined));
  const { pq, pqBits, pqDims, ...codecOptions } = own as Record<string, unknown>;
  return {
    residual, quality, bytes,
    pq: pq as number | undefined, pqBits: pqBits as number | undefined, pqDims: pqDims as number | undefined,
    ...(Object.keys(codecOptions).length ? { codecOptions } : {}),
  };
}
