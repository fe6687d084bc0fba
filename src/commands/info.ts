// `vlc info <in.vlc>`: what a .vlc file holds — header, section sizes, compression ratios and the
// training statistics — as text, or as one JSON object with --json. Reading it validates the file.
import type { Command } from 'commander';
import { readVlc } from '../io/vlc/file.js';
import type { VlcFile } from '../io/vlc/format.js';
import type { BitsResiduals } from '../codecs/bits.js';
import type { PqResiduals } from '../codecs/pq.js';
import type { VlcManifest } from '../io/vlc/manifest.js';
import { grouped, percent, sizeFigures } from '../io/vlc/stats.js';
import { jsonResult, snakeKeys } from './json.js';
import { fewIds } from '../vectors/row-ids.js';
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
      const file = await readVlc(input);
      const facts = infoOf(file);
      process.stdout.write(o.json ? JSON.stringify(jsonResult('info', facts)) + '\n' : infoText(facts, input));
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
    /** With pq residuals: subspaces, bits per code, and the projected dimensions (null: none). */
    pq: file.residuals?.mode === 'pq' ? pqFacts(file.residuals as PqResiduals) : null,
    /** With bits residuals: code bytes and how many dimensions got each width. */
    bits: file.residuals?.mode === 'bits' ? bitsFacts(file.residuals as BitsResiduals) : null,
    format_version: file.version,
    tool_version: mf.tool.version,
    input_dtype: mf.input.dtype,
    ...sizeFigures(file.fileBytes, n, d, m, mf.input.dtype),
    sections: file.sections.map((s) => ({ name: s.name, bytes: s.bytes })),
    energy: mf.training.energy,
    ...qualityOf(mf),
    iterations: mf.training.iterations,
    init_iterations: mf.training.initIterations ?? null,
    converged: mf.training.converged,
    init: mf.training.init,
    device: mf.device,
    seed: mf.seed,
    dropped: mf.input.dropped,
    dropped_rows: mf.input.droppedRows ?? [],
    config: snakeKeys(mf.config),
  };
}

/**
 * The quality figures compress measured and stored (manifest `quality`). Files written before that
 * carry only the MSE (the residual error, or the training energy without residuals).
 */
function qualityOf(mf: VlcManifest) {
  const q = mf.quality;
  return {
    mse: q?.mse ?? mf.residualEnergy ?? mf.training.energy,
    relative_error: q?.relativeError ?? null,
    mean_cosine: q?.meanCosine ?? null,
    quality_vectors: q?.vectors ?? null,
    recall_at_10: q?.recallAt10 ?? null,
    recall_at_10_all: q?.recallAt10All ?? null,
    recall_queries: q?.recallQueries ?? null,
    recall_base: q?.recallBase ?? null,
  };
}

function pqFacts(r: PqResiduals) {
  return { subspaces: r.M, bits: r.bits, code_bytes: r.bits === 8 ? r.M : Math.ceil(r.M / 2), dims: r.projection ? r.dims : null };
}

function bitsFacts(r: BitsResiduals) {
  const dimensions_by_bits = new Array<number>(9).fill(0);
  for (const b of r.bits) dimensions_by_bits[b]++;
  return { code_bytes: r.R, dimensions_by_bits };
}

function infoText(f: ReturnType<typeof infoOf>, name: string): string {
  const sectionBytes = f.sections.reduce((s, x) => s + x.bytes, 0);
  const rows: Array<[string, string]> = [
    ['file', `${name === '-' ? '<stdin>' : name}: ${grouped(f.bytes)} bytes, .vlc format version ${f.format_version}, written by vlc ${f.tool_version}`],
    ['vectors', `n = ${grouped(f.n)}, d = ${f.d} (input ${f.input_dtype}${f.dropped ? `, ${grouped(f.dropped)} invalid row${f.dropped === 1 ? '' : 's'} dropped${f.dropped_rows.length ? `: input row${f.dropped === 1 ? '' : 's'} ${fewIds(f.dropped_rows)}` : ''}` : ''})`],
    ['encoding', `m = ${grouped(f.m)} anchors (${f.anchor_dtype}), ${f.assignment_width} assignments, residuals ${f.residual}, metric ${f.metric}`],
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
    ...(f.pq
      ? ([['residuals', `pq: M = ${f.pq.subspaces} subspaces, ${f.pq.bits}-bit codes, ${f.pq.code_bytes} bytes/vector${f.pq.dims ? `, on ${f.pq.dims} principal directions` : ''}`]] as Array<[string, string]>)
      : []),
    ...(f.bits
      ? ([['residuals', `bits: ${f.bits.code_bytes} code bytes/vector; dimensions by width ${f.bits.dimensions_by_bits.map((c, b) => (c ? `${b}:${c}` : '')).filter(Boolean).join(' ')} (bits:dimensions)`]] as Array<[string, string]>)
      : []),
    ['config', Object.entries(f.config).map(([k, v]) => `${k}=${v}`).join(' ')],
  ];
  return rows.map(([k, v]) => `${k.padEnd(9)} ${v}\n`).join('');
}

function qualityText(f: ReturnType<typeof infoOf>): string {
  const mse = `mse ${f.mse.toPrecision(6)} (mean squared L2 error of the reconstruction)`;
  if (f.relative_error === null || f.mean_cosine === null) return `${mse}; no other figures stored (file written by an older vlc: run vlc eval)`;
  const on = f.quality_vectors === f.n ? 'every vector' : `a sample of ${grouped(f.quality_vectors ?? 0)} vectors`;
  const recall =
    f.recall_at_10 === null
      ? ''
      : `; recall@10 ${f.recall_at_10.toFixed(3)} of exact search over the decoded vectors (${grouped(f.recall_queries ?? 0)} queries among ${grouped(f.recall_base ?? 0)} vectors` +
        (f.recall_at_10_all !== null && (f.recall_base ?? 0) < f.n ? `; ≈${f.recall_at_10_all.toFixed(3)} expected over all ${grouped(f.n)})` : ')');
  return `relative error ${f.relative_error.toFixed(4)}, mean cosine ${f.mean_cosine.toFixed(5)}, ${mse}, measured on ${on}${recall}`;
}
