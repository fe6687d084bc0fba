// Issues 28 and 30: does `vlc compress --quality R` write a file no larger than the smallest one
// (any codec, any --bytes) that reaches R? Every file measured the same way: `vlc eval` over all
// n vectors, the same 1,000 queries (--seed 1), recall@10 of exact search over the decoded
// vectors; bytes per vector = the file's size / n.
//   --chosen R=FILE.vlc[:LOG],...  the files `vlc compress --quality R -v` wrote (LOG: its stderr,
//                                  for the choice line, the measurements and the phases' seconds);
//   --queries Q                    eval's query count (default 1,000; the same --seed 1 for every file);
//   --sweep DIR                    the fixed codecs' files (bench/rate-distortion.mjs --save DIR:
//                                  the anchors trained once, as compress trains them, then
//                                  --residual ec|bits --bytes B, int4, int8, none);
// then, for each R, the smallest sweep file whose eval recall reaches R, and the chosen file's
// size over it (the goal: at most 1.05).
// --sweep takes several folders (a,b); --sweep-from RESULT.json takes the sweep rows of an earlier
// result instead (same data, queries and seed; the anchors train the same way: its commit is kept as
// sweep_from); --cache FILE keeps each file's eval (JSON lines, by path, size
// and time) so that files can be evaluated as they are written, and a later run reuses them.
// Usage: node bench/quality-fmnist-ec.mjs --data bench/.data/fashion.npy --chosen 0.9=/tmp/a.vlc:/tmp/a.log
//          --sweep /tmp/sweep [--cache /tmp/evals.jsonl] [--out bench/results/DATE-cpu-quality-fmnist-ec.json]
import { spawnSync } from 'node:child_process';
import { appendFileSync, existsSync, readdirSync, readFileSync, statSync, writeFileSync } from 'node:fs';
import { cpus, loadavg } from 'node:os';
import { basename, dirname, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';

const ROOT = resolve(dirname(fileURLToPath(import.meta.url)), '..');
const arg = (name, dflt) => {
  const i = process.argv.indexOf(name);
  return i > 0 ? process.argv[i + 1] : dflt;
};
const DATA = resolve(arg('--data', join(ROOT, 'bench/.data/fashion.npy')));
const SWEEP = arg('--sweep');
const CHOSEN = arg('--chosen', '').split(',').filter(Boolean).map((s) => {
  const [r, rest] = s.split('=');
  const [file, log] = rest.split(':');
  return { quality: Number(r), file, log };
});
const OUT = arg('--out', join(ROOT, `bench/results/${new Date().toISOString().slice(0, 10)}-cpu-quality-fmnist-ec.json`));
const VLC = join(ROOT, 'bin/vlc.js');
const CACHE = arg('--cache');
const QUERIES = arg('--queries', '1000');
const cached = new Map(CACHE && existsSync(CACHE) ? readFileSync(CACHE, 'utf8').split('\n').filter(Boolean).map((l) => JSON.parse(l)).map((r) => [r.key, r.row]) : []);

function vlc(args) {
  const r = spawnSync(process.execPath, [VLC, ...args], { encoding: 'utf8', maxBuffer: 1 << 26 });
  if (r.status !== 0) throw new Error(`vlc ${args.join(' ')}: ${r.stderr}`);
  return JSON.parse(r.stdout);
}

function evaluate(file) {
  const st = statSync(file);
  const key = `${resolve(file)}:${st.size}:${st.mtimeMs}`;
  if (cached.has(key)) return cached.get(key);
  const row = evaluateNow(file);
  if (CACHE) appendFileSync(CACHE, `${JSON.stringify({ key, row })}\n`);
  return row;
}

function evaluateNow(file) {
  const t0 = performance.now();
  const e = vlc(['eval', DATA, file, '--queries', QUERIES, '--seed', '1', '--json']);
  const info = vlc(['info', file, '--json']);
  process.stderr.write(`${basename(file)}: ${e.bytes_per_vector.toFixed(2)} B/vector, recall@10 ${e.recall_at_10} (${((performance.now() - t0) / 1000).toFixed(0)} s)\n`);
  return {
    residual: info.residual, ec: info.ec, bits: info.bits, bytes_per_vector: e.bytes_per_vector, file_bytes: statSync(file).size,
    eval_recall_at_10: e.recall_at_10, eval_recall_at_1: e.recall_at_1, mse: e.mse, relative_error: e.relative_error,
  };
}

const git = (a) => spawnSync('git', a, { cwd: ROOT, encoding: 'utf8' }).stdout.trim();
const SWEEP_FROM = arg('--sweep-from');
const earlier = SWEEP_FROM ? JSON.parse(readFileSync(SWEEP_FROM, 'utf8')) : null;
const sweep = [
  ...(SWEEP ? SWEEP.split(',') : []).flatMap((dir) =>
    readdirSync(dir).filter((f) => f.endsWith('.vlc')).sort().map((f) => ({ method: f.replace(/\.vlc$/, ''), ...evaluate(join(dir, f)) })),
  ),
  ...(earlier?.sweep ?? []),
];
const chosen = CHOSEN.map(({ quality, file, log }) => {
  const row = { quality, ...evaluate(file) };
  if (log) {
    const text = readFileSync(log, 'utf8');
    row.choice_line = text.split('\n').find((l) => l.startsWith('vlc: chose')) ?? null;
    row.measured = [...text.matchAll(/measured (.+?): recall@10 ([\d.]+) over all, ([\d.]+) bytes\/vector, ([\d.]+) s/g)].map((m) => ({ codec: m[1], recall_at_10_all: Number(m[2]), bytes_per_vector: Number(m[3]), seconds: Number(m[4]) }));
    const phases = text.match(/phases \(s\): (.+)/);
    row.phases_seconds = phases ? Object.fromEntries(phases[1].replace('; ', ', ').split(', ').map((p) => p.split(' ')).map(([k, v]) => [k, Number(v)])) : null;
    const wall = text.match(/([\d.]+) s wall ([\d.]+) user/);
    row.wall_seconds = wall ? Number(wall[1]) : null;
  }
  const reaching = sweep.filter((s) => s.eval_recall_at_10 >= quality).sort((a, b) => a.bytes_per_vector - b.bytes_per_vector);
  const smallest = reaching[0];
  row.smallest_reaching = smallest ? { method: smallest.method, bytes_per_vector: smallest.bytes_per_vector, eval_recall_at_10: smallest.eval_recall_at_10 } : null;
  row.reaches = row.eval_recall_at_10 >= quality;
  row.size_over_smallest = smallest ? row.bytes_per_vector / smallest.bytes_per_vector : null;
  row.within_5_percent = smallest ? row.bytes_per_vector <= 1.05 * smallest.bytes_per_vector : null;
  return row;
});

const result = {
  what: `issues 28/30: vlc compress --quality R on Fashion-MNIST (60,000 x 784 uint8, train-images-idx3-ubyte), against a sweep of fixed codecs over anchors trained as compress trains them; every file measured by vlc eval (${QUERIES} queries, --seed 1, exact search over all n decoded vectors)`,
  date: new Date().toISOString(),
  machine: `${cpus().length}-core ${cpus()[0]?.model ?? 'CPU'}, shared with other sessions' jobs`,
  loadavg_1min_at_end: loadavg()[0],
  commit: git(['rev-parse', 'HEAD']),
  dirty: git(['status', '--porcelain', '--untracked-files=no']) !== '',
  node: process.version,
  data: DATA,
  sweep_from: earlier ? { file: basename(SWEEP_FROM), commit: earlier.commit, date: earlier.date, what: earlier.what } : null,
  chosen,
  sweep,
};
writeFileSync(OUT, `${JSON.stringify(result, null, 1)}\n`);
process.stderr.write(`wrote ${OUT}\n`);
