// Peak RSS of `vlc info`, `vlc search` and `vlc eval` reading one large .vlc, before (a build of an
// earlier commit) and after (this checkout), each command run by `/usr/bin/time -v` one at a time,
// and whether the two builds print the same answer (eval: every figure but `seconds`).
// Usage: node bench/vlc_read_memory.mjs <before-bin/vlc.js> <x.npy> <x.vlc> <q.npy> <out.json> [queries=200] [runs]
// runs: a comma-separated list of the runs below (default: info,search_index,search_exhaustive,eval;
// eval_nprobe is `vlc eval --nprobe 8`, the index search's recall).
// The files are made beforehand (see bench/results/2026-11-28-cpu-read-memory.json: numpy writes
// the .npy, `vlc compress` the .vlc); this script only reads them.
import { spawnSync } from 'node:child_process';
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { fileURLToPath } from 'node:url';

const [beforeBin, npy, file, queries, out, nq = '200', chosen = 'info,search_index,search_exhaustive,eval'] = process.argv.slice(2);
const afterBin = path.join(path.dirname(fileURLToPath(import.meta.url)), '..', 'bin', 'vlc.js');

/** One command under /usr/bin/time -v: its peak RSS, wall time and stdout. */
function timed(bin, args) {
  const r = spawnSync('/usr/bin/time', ['-v', process.execPath, bin, ...args], { encoding: 'utf8', maxBuffer: 1 << 28 });
  const field = (name) => r.stderr.match(new RegExp(`${name}: (.*)`))?.[1]?.trim();
  if (r.status !== 0) throw new Error(`${args.join(' ')}: exit ${r.status}\n${r.stderr.slice(-2000)}`);
  const [m, s] = field('Elapsed \\(wall clock\\) time \\(h:mm:ss or m:ss\\)').split(':').slice(-2).map(Number);
  return { peak_rss_bytes: Number(field('Maximum resident set size \\(kbytes\\)')) * 1024, wall_seconds: m * 60 + s, stdout: r.stdout };
}

const runs = {
  info: ['info', file, '--json'],
  search_index: ['search', file, '--queries', queries, '-k', '10', '--device', 'cpu', '--json'],
  search_exhaustive: ['search', file, '--queries', queries, '-k', '10', '--device', 'cpu', '--exhaustive', '--json'],
  eval: ['eval', npy, file, '--device', 'cpu', '--queries', nq, '--json'],
  eval_nprobe: ['eval', npy, file, '--device', 'cpu', '--queries', nq, '--nprobe', '8', '--json'],
};
const strip = (text) => JSON.stringify({ ...JSON.parse(text), seconds: undefined });
const result = {};
for (const name of chosen.split(',')) {
  const args = runs[name];
  if (!args) throw new Error(`no run named ${name}: ${Object.keys(runs).join(', ')}`);
  const entry = { command: `vlc ${args.join(' ')}` };
  const before = name === 'search_exhaustive' ? undefined : timed(beforeBin, args); // no CPU exhaustive search before
  const after = timed(afterBin, args);
  if (before) entry.before = { peak_rss_bytes: before.peak_rss_bytes, wall_seconds: before.wall_seconds };
  entry.after = { peak_rss_bytes: after.peak_rss_bytes, wall_seconds: after.wall_seconds };
  if (before) entry.same_answer = strip(before.stdout) === strip(after.stdout);
  if (name.startsWith('eval')) entry.answer = JSON.parse(after.stdout);
  if (name === 'search_exhaustive') entry.answer_sha = (await import('node:crypto')).createHash('sha256').update(after.stdout).digest('hex');
  result[name] = entry;
  console.log(name, JSON.stringify(entry.before ?? {}), JSON.stringify(entry.after), entry.same_answer ?? '');
}
fs.writeFileSync(out, JSON.stringify({
  date: new Date().toISOString(),
  machine: { cpus: os.cpus().length, memory_bytes: os.totalmem(), load_average: os.loadavg(), node: process.version },
  file_bytes: fs.statSync(file).size, input_bytes: fs.statSync(npy).size,
  runs: result,
}, null, 1) + '\n');
