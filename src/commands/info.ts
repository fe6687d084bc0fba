// `vlc info <in.vlc>`: what a .vlc file holds — header, section sizes, compression ratios and the
// training statistics — as text, or as one JSON object with --json. Reading it validates the file.
import type { Command } from 'commander';
import type { InfoResult } from '../api/info.js';
import { fewIds } from '../api/flags.js';
import { grouped, percent } from '../io/vlc/stats.js';
import { jsonResult } from './json.js';
import { recallFigures } from './recall-figures.js';
import { addExamples } from './help.js';
import { addOutputOptions, applyVerbosity, type OutputFlags } from './options.js';

export function register(program: Command): void {
  const cmd = program
    .command('info')
    .description('show what a .vlc file holds: header, sizes, ratios, training statistics (validates it too)')
    .argument('<in.vlc>', '.vlc file, or - for stdin');
  addOutputOptions(cmd);
  addExamples(cmd, [
    ['vlc info emb.vlc', 'size, quality compress measured, training statistics'],
    ['vlc info emb.vlc --json | jq .bytes_per_vector', 'one figure from the JSON (fields: docs/json.md)'],
    ['cat emb.vlc | vlc info -', 'a pipeline: the file on stdin'],
  ]);
  cmd
    .action(async (input: string, o: OutputFlags) => {
      applyVerbosity(o);
      const { info } = await import('../api/info.js'); // on use: see src/commands/index.ts
      const facts = await info(input);
      process.stdout.write(o.json ? JSON.stringify(jsonResult('info', facts)) + '\n' : infoText(facts, input));
    });
}

function infoText(f: InfoResult, name: string): string {
  const sectionBytes = f.sections.reduce((s, x) => s + x.bytes, 0);
  const rows: Array<[string, string]> = [
    ['file', `${name === '-' ? '<stdin>' : name}: ${grouped(f.bytes)} bytes, .vlc format version ${f.format_version}, written by vlc ${f.tool_version}`],
    ['vectors', `n = ${grouped(f.n)}, d = ${f.d} (input ${f.input_dtype}${f.dropped ? `, ${grouped(f.dropped)} invalid row${f.dropped === 1 ? '' : 's'} dropped${f.dropped_rows.length ? `: input row${f.dropped === 1 ? '' : 's'} ${fewIds(f.dropped_rows)}` : ''}` : ''})`],
    ['encoding', `m = ${grouped(f.m)} anchors (${f.anchor_dtype}), ${f.assignment_width} assignments, residuals ${f.residual}, metric ${f.metric}${f.metric === 'cosine' ? ' (vectors coded at unit length, their norms stored as f32)' : ''}`],
    [
      'sections',
      f.sections.map((s) => `${s.name} ${grouped(s.bytes)} B`).join(', ') + `; header and framing ${grouped(f.bytes - sectionBytes)} B`,
    ],
    [
      'size',
      `${f.bytes_per_vector.toFixed(2)} bytes/vector (${f.input_dtype === 'f32' ? '' : `input ${f.input_dtype}: ${f.input_bytes / f.n}, `}f32: ${f.d * 4}), ` +
        `${f.input_dtype === 'f32' ? '' : `${percent(f.ratio_input)} of the ${f.input_dtype} input, `}${percent(f.ratio_f32)} of f32, ${percent(f.ratio_f16)} of f16 ` +
        `(every section counted); the seed's formula (m·d·2 + n·4) / (n·d·4), residuals not counted: ${percent(f.seed_ratio)}`,
    ],
    ['quality', qualityText(f)],
    [
      'training',
      `energy ${f.energy.toPrecision(6)} (mean squared L2 error), ${f.iterations} iterations, ` +
        `${f.converged ? 'converged' : 'stopped at the iteration limit'}, init ${f.init}, device ${f.device}, seed ${f.seed}`,
    ],
    ...(f.residual_summary ? ([['residuals', f.residual_summary]] as Array<[string, string]>) : []),
    ['config', Object.entries(f.config).map(([k, v]) => `${k}=${v}`).join(' ')],
  ];
  return rows.map(([k, v]) => `${k.padEnd(9)} ${v}\n`).join('');
}

function qualityText(f: InfoResult): string {
  const mse = `mse ${f.mse.toPrecision(6)} (mean squared L2 error of the reconstruction)`;
  if (f.relative_error === null || f.mean_cosine === null) return `${mse}; no other figures stored (file written by an older vlc: run vlc eval)`;
  const on = f.quality_vectors === f.n ? 'every vector' : `a sample of ${grouped(f.quality_vectors ?? 0)} vectors`;
  const recall =
    f.recall_at_10 === null
      ? ''
      : `; recall@10 ${recallFigures(f)} of exact search${f.metric === 'l2' ? '' : ` by ${f.metric}`} over the decoded vectors (${grouped(f.recall_queries ?? 0)} queries among ${grouped(f.recall_base ?? 0)} vectors)`;
  return `relative error ${f.relative_error.toFixed(4)}, mean cosine ${f.mean_cosine.toFixed(5)}, ${mse}, measured on ${on}${recall}`;
}
