// `vlc compress --quality / --bytes` (and the default) on the bench data sets, each file then
// measured by `vlc eval` over all n vectors: did the knob hit its target, and what did it cost?
// Writes bench/results/quality-knob.json, from which `npm run docs:figures` renders the README's
// table. Data: the demo fixture and bench/datasets.py's seed-large, gm, gauss and clustered
// (python3 with numpy; the script says so and stops when they are missing). CPU; under an hour on
// two cores. Usage: node bench/quality-knob.mjs [dataset,...]
import { spawnSync } from 'node:child_process';
import { existsSync, mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join, resolve, dirname } from 'node:path';
import { fileURLToPath } from 'node:url';
import { benchInput } from './bench-input.mjs';
import { cpus } from 'node:os';

const ROOT = resolve(dirname(fileURLToPath(import.meta.url)), '..');
const DATA = join(ROOT, 'bench/.data');
const OUT = join(ROOT, 'bench/results/quality-knob.json');

/** Data set → the compress options tried on it (none: the default, --quality 0.9). */
const PLAN = {
  demo: [[], ['--quality', '0.95'], ['--bytes', '60'], ['--bytes', '16']],
  'seed-large': [[], ['--quality', '0.99'], ['--bytes', '100']],
  gm: [[], ['--quality', '0.8'], ['--bytes', '100'], ['--bytes', '16']],
  gauss: [[], ['--bytes', '100']],
  clustered: [[], ['--bytes', '100']],
};

const input = benchInput;

function vlc(args) {
  const r = spawnSync(process.execPath, [join(ROOT, 'bin/vlc.js'), ...args], { encoding: 'utf8', maxBuffer: 1 << 26 });
  if (r.status !== 0) throw new Error(`vlc ${args.join(' ')}: exit ${r.status}: ${r.stderr}`);
  return JSON.parse(r.stdout);
}

const only = process.argv[2]?.split(',');
const previous = existsSync(OUT) ? JSON.parse(readFileSync(OUT, 'utf8')).runs : [];
const runs = previous.filter((r) => only && !only.includes(r.dataset));
for (const [dataset, optionSets] of Object.entries(PLAN)) {
  if (only && !only.includes(dataset)) continue;
  const file = input(dataset);
  for (const args of optionSets) {
    const out = join(DATA, `${dataset}.vlc`);
    mkdirSync(DATA, { recursive: true });
    const c = vlc(['compress', file, '-o', out, '-f', '--device', 'cpu', '--json', '-q', ...args]); // -f: the previous run's file
    const e = vlc(['eval', file, out, '--json', '-q']);
    const run = {
      dataset, n: c.n, d: c.d, args,
      goal: c.choice.goal, target: c.choice.target, residual: c.residual, m: c.m,
      bytes: c.bytes, bytes_per_vector: c.bytes_per_vector, ratio_f32: c.ratio_f32,
      sample_recall_at_10: c.recall_at_10, measured: c.choice.measured, met: c.choice.met,
      eval_recall_at_10: e.recall_at_10, eval_recall_at_1: e.recall_at_1, eval_mean_cosine: e.mean_cosine,
      eval_relative_error: e.relative_error,
      compress_seconds: c.total_seconds, choose_seconds: c.choose_seconds, quality_seconds: c.quality_seconds, eval_seconds: e.seconds,
    };
    runs.push(run);
    console.error(`${dataset} ${args.join(' ') || '(default)'}: ${c.residual} m=${c.m} ${c.bytes_per_vector.toFixed(2)} B/vector, recall@10 ${c.recall_at_10} (sample) / ${e.recall_at_10} (eval)`);
  }
}
const order = Object.keys(PLAN);
runs.sort((a, b) => order.indexOf(a.dataset) - order.indexOf(b.dataset));
writeFileSync(OUT, JSON.stringify({
  tool: 'vlc', date: new Date().toISOString(), commit: spawnSync('git', ['rev-parse', '--short', 'HEAD'], { cwd: ROOT, encoding: 'utf8' }).stdout.trim(),
  node: process.version, cpus: cpus().length,
  method: 'vlc compress --device cpu [option] then vlc eval (1,000 queries, exact search over all n decoded vectors)',
  runs,
}, null, 2) + '\n');
