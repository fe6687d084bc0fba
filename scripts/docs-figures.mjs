// The README's generated figures (`npm run docs:figures`):
//   - the demo table: the demo fixture compressed with the default and with each codec, then
//     evaluated — a fresh run of `vlc compress` and `vlc eval` on this checkout (CPU);
//   - the quick start's figures: the two lines the default compress of that run printed;
//   - the knob table: `--quality` / `--bytes` on the bench data sets, rendered from
//     bench/results/quality-knob.json (bench/quality-knob.mjs measures it; it takes an hour).
// Each table sits between `<!-- NAME:begin -->` and `<!-- NAME:end -->` in README.md.
//   node scripts/docs-figures.mjs          print the tables
//   node scripts/docs-figures.mjs --write  put them into README.md
//   node scripts/docs-figures.mjs --check  exit 1 (naming the table) when README.md differs
// test/cli/readme.test.ts runs the check's pieces (demoTable, quickStart, knobTable, readmeTable).
import { spawnSync } from 'node:child_process';
import { existsSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';

const ROOT = resolve(dirname(fileURLToPath(import.meta.url)), '..');
const BIN = join(ROOT, 'bin/vlc.js');
const README = join(ROOT, 'README.md');
export const DEMO = 'fixtures/demo-2000x64.npy';

/** The demo table's rows: what is passed to compress, and how the row is named. */
export const DEMO_ROWS = [
  [[], 'default (`--quality 0.9`)'],
  [['--residual', 'none'], '`--residual none`'],
  [['--residual', 'int8'], '`--residual int8`'],
  [['--bytes', '16'], '`--bytes 16`'],
];

function vlc(args, withLog = false) {
  const r = spawnSync(process.execPath, [BIN, ...args], { cwd: ROOT, encoding: 'utf8', maxBuffer: 1 << 26 });
  if (r.status !== 0) throw new Error(`vlc ${args.join(' ')}: exit ${r.status}: ${r.stderr}`);
  return withLog ? { json: JSON.parse(r.stdout), log: r.stderr } : JSON.parse(r.stdout);
}

const grouped = (x) => Math.round(x).toLocaleString('en-US');
const pct = (x) => `${(x * 100).toFixed(x < 0.1 ? 2 : 1)}%`;
const f3 = (x) => (x === null ? 'n/a' : x.toFixed(3));

/** One fresh run on the demo fixture (both the table and the quick start's figures come from it). */
let demoRun;

/** A fresh run on the demo fixture, as a markdown table. */
export function demoTable() {
  return (demoRun ??= runDemo()).table;
}

/**
 * The quick start's example lines, from the default compress of the same run: its choice line and
 * the size and quality of its summary (the rest, timings, varies run to run).
 */
export function quickStart() {
  const { log } = (demoRun ??= runDemo());
  const line = (re) => {
    const m = re.exec(log);
    if (!m) throw new Error(`the default compress printed no line matching ${re}:\n${log}`);
    return m[1];
  };
  const choice = line(/^vlc: (chose .*? ± [0-9.]+) of exact search/m);
  const summary = line(/^vlc: \S+?: (\d.*?recall@10 [0-9.]+(?: \([^)]*\))?);/m);
  return (
    `compress prints what it chose and what the file costs and keeps, e.g. \`${choice} …\` and\n` +
    `\`/tmp/demo.vlc: ${summary}; …\`. Then see what the compression cost in detail:`
  );
}

function runDemo() {
  const dir = mkdtempSync(join(tmpdir(), 'vlc-figures-'));
  try {
    let log = '';
    const rows = DEMO_ROWS.map(([args, name], i) => {
      const out = join(dir, `${i}.vlc`);
      // The default run keeps its log lines: the quick start quotes them.
      const run = vlc(['compress', DEMO, '-o', out, '--device', 'cpu', '--json', ...(i === 0 ? [] : ['-q']), ...args], i === 0);
      const c = i === 0 ? run.json : run;
      if (i === 0) log = run.log;
      const e = vlc(['eval', DEMO, out, '--json', '-q']);
      return (
        `| ${name} | ${c.residual} | ${grouped(c.m)} | ${grouped(c.bytes)} B | ${c.bytes_per_vector.toFixed(2)} | ${pct(c.ratio_f32)} | ` +
        `${e.relative_error.toFixed(4)} | ${e.mean_cosine.toFixed(4)} | ${f3(e.recall_at_1)} | ${f3(e.recall_at_10)} |`
      );
    });
    const table = [
      '| compress | stores | m | file | bytes/vector | of f32 | relative error | mean cosine | recall@1 | recall@10 |',
      '|---|---|---|---|---|---|---|---|---|---|',
      ...rows,
    ].join('\n');
    return { table, log };
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}

export const KNOB_RESULTS = join(ROOT, 'bench/results/quality-knob.json');

/** The knob table from bench/results/quality-knob.json (null when it has not been measured). */
export function knobTable() {
  if (!existsSync(KNOB_RESULTS)) return null;
  const { runs } = JSON.parse(readFileSync(KNOB_RESULTS, 'utf8'));
  const rows = runs.map((r) => {
    const goal = r.args.length ? `\`${r.args.join(' ')}\`` : 'default (`--quality 0.9`)';
    const target = r.goal === 'quality' ? `recall@10 ≥ ${r.target}` : `≤ ${r.target} B/vector`;
    const hit = r.goal === 'quality' ? r.eval_recall_at_10 >= r.target : r.bytes_per_vector <= r.target;
    return (
      `| ${r.dataset} | ${goal} | ${target} | ${r.residual} | ${grouped(r.m)} | ${r.bytes_per_vector.toFixed(2)} | ${pct(r.ratio_f32)} | ` +
      `${f3(r.sample_recall_at_10)} | ${f3(r.eval_recall_at_10)} | ${r.eval_mean_cosine.toFixed(4)} | ${hit ? 'yes' : '**no**'} |`
    );
  });
  return [
    '| data set | option | target | chose | m | bytes/vector | of f32 | recall@10 measured by compress (sample) | recall@10 by `vlc eval` (all n) | mean cosine | target hit |',
    '|---|---|---|---|---|---|---|---|---|---|---|',
    ...rows,
  ].join('\n');
}

/** Where the table of `name` sits in the text: the character range between its two marker lines. */
function span(name, text) {
  const begin = `<!-- ${name}:begin -->\n`;
  const end = `<!-- ${name}:end -->`;
  const i = text.indexOf(begin);
  const j = text.indexOf(end, i);
  if (i < 0 || j < 0) throw new Error(`README.md has no ${name} markers`);
  return [i + begin.length, j];
}

/** The table README.md holds between the markers of `name` (without its last newline). */
export function readmeTable(name, text = readFileSync(README, 'utf8')) {
  const [a, b] = span(name, text);
  return text.slice(a, b).replace(/\n$/, '');
}

function replaceTable(text, name, table) {
  const [a, b] = span(name, text);
  return text.slice(0, a) + table + '\n' + text.slice(b);
}

if (process.argv[1] === fileURLToPath(import.meta.url)) {
  const mode = process.argv[2];
  const tables = { 'demo-table': demoTable(), 'quick-start': quickStart(), 'knob-table': knobTable() };
  let text = readFileSync(README, 'utf8');
  let stale = [];
  for (const [name, table] of Object.entries(tables)) {
    if (table === null) continue;
    if (mode === '--check' && readmeTable(name, text) !== table) stale.push(name);
    text = replaceTable(text, name, table);
    if (!mode) console.log(`${name}:\n${table}\n`);
  }
  if (mode === '--write') writeFileSync(README, text);
  if (mode === '--check' && stale.length) {
    console.error(`README.md is stale: ${stale.join(', ')} (run npm run docs:figures -- --write)`);
    process.exit(1);
  }
}
