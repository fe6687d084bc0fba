// `vlc info <in.vlc>`: what a .vlc file holds — header, section sizes, compression ratios and the
// training statistics — as text, or as one JSON object with --json. Reading it validates the file.
import type { Command } from 'commander';
import { readVlc } from '../io/vlc/file.js';
import type { VlcFile } from '../io/vlc/format.js';
import type { PqResiduals } from '../codecs/pq.js';
import { bytesPerVector, grouped, percent, seedRatio, trueRatio } from '../io/vlc/stats.js';
import { addOutputOptions, applyVerbosity, type OutputFlags } from './options.js';

export function register(program: Command): void {
  const cmd = program
    .command('info')
    .description('show what a .vlc file holds: header, sizes, ratios, training statistics (validates it too)')
    .argument('<in.vlc>', '.vlc file, or - for stdin');
  addOutputOptions(cmd);
  cmd
    .action(async (input: string, o: OutputFlags) => {
      applyVerbosity(o);
      const file = await readVlc(input);
      const facts = infoOf(file);
      process.stdout.write(o.json ? JSON.stringify(facts) + '\n' : infoText(facts, input));
    });
}

export function infoOf(file: VlcFile) {
  const mf = file.manifest;
  const { n, d, m } = mf;
  return {
    n,
    d,
    m,
    metric: mf.metric,
    anchor_dtype: mf.anchorDtype,
    assignment_width: mf.assignmentWidth,
    residual: mf.residual,
    /** With pq residuals: subspaces and bits per code. */
    pq: file.residuals?.mode === 'pq' ? pqFacts(file.residuals as PqResiduals) : null,
    format_version: file.version,
    tool_version: mf.tool.version,
    bytes: file.fileBytes,
    sections: file.sections.map((s) => ({ name: s.name, bytes: s.bytes })),
    ratio: seedRatio(n, d, m),
    true_ratio: trueRatio(file.fileBytes, n, d),
    bytes_per_vector: bytesPerVector(file.fileBytes, n),
    energy: mf.training.energy,
    residual_energy: mf.residualEnergy ?? null,
    iterations: mf.training.iterations,
    converged: mf.training.converged,
    init: mf.training.init,
    device: mf.device,
    seed: mf.seed,
    input_dtype: mf.input.dtype,
    dropped: mf.input.dropped,
    config: mf.config,
  };
}

function pqFacts(r: PqResiduals) {
  return { subspaces: r.M, bits: r.bits, code_bytes: r.bits === 8 ? r.M : Math.ceil(r.M / 2) };
}

function infoText(f: ReturnType<typeof infoOf>, name: string): string {
  const sectionBytes = f.sections.reduce((s, x) => s + x.bytes, 0);
  const rows: Array<[string, string]> = [
    ['file', `${name === '-' ? '<stdin>' : name}: ${grouped(f.bytes)} bytes, .vlc format version ${f.format_version}, written by vlc ${f.tool_version}`],
    ['vectors', `n = ${grouped(f.n)}, d = ${f.d} (input ${f.input_dtype}${f.dropped ? `, ${grouped(f.dropped)} invalid rows dropped` : ''})`],
    ['encoding', `m = ${grouped(f.m)} anchors (${f.anchor_dtype}), ${f.assignment_width} assignments, residuals ${f.residual}, metric ${f.metric}`],
    [
      'sections',
      f.sections.map((s) => `${s.name} ${grouped(s.bytes)} B`).join(', ') + `; header and framing ${grouped(f.bytes - sectionBytes)} B`,
    ],
    [
      'ratio',
      `${percent(f.true_ratio)} of f32 (file bytes / n·d·4); seed formula ${percent(f.ratio)} ((m·d·2 + n·4) / n·d·4); ` +
        `${f.bytes_per_vector.toFixed(2)} bytes/vector (f32: ${f.d * 4})`,
    ],
    [
      'training',
      `energy ${f.energy.toPrecision(6)} (mean squared L2 error), ${f.iterations} iterations, ` +
        `${f.converged ? 'converged' : 'stopped at the iteration limit'}, init ${f.init}, device ${f.device}, seed ${f.seed}`,
    ],
    ...(f.residual_energy !== null
      ? ([
          [
            'residuals',
            `${f.residual}${f.pq ? ` (M = ${f.pq.subspaces} subspaces, ${f.pq.bits}-bit codes, ${f.pq.code_bytes} bytes/vector)` : ''}: ` +
              `mean squared L2 error with residuals ${f.residual_energy.toPrecision(6)}`,
          ],
        ] as Array<[string, string]>)
      : []),
    ['config', Object.entries(f.config).map(([k, v]) => `${k}=${v}`).join(' ')],
  ];
  return rows.map(([k, v]) => `${k.padEnd(9)} ${v}\n`).join('');
}
