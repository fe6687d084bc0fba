// Issue 30 item 2: does an explicit --quality cost more than its meaning? `vlc compress --device cpu`
// with no codec option, with --quality 0.9 and with --quality 0.8, on the demo fixture and on a
// 50,000 x 384 clustered set (bench/datasets.py clustered384, seeded), REPEATS times each, the
// options interleaved so that load on a shared machine falls on all of them alike. Reports each
// run's wall time, compress's own total and choose seconds, the codec chosen and the file's
// SHA-256, then the medians and their ratios to no option, of the wall time and of the CPU time
// (user + system, from GNU time: on a shared machine the wall time mostly measures the others). `--vlc PATH` times another checkout's
// bin/vlc.js in the same way (a baseline), `--repeats N`, `--data a,b`.
// Usage: node bench/quality-speed.mjs [--repeats 3] [--data demo,clustered384] [--vlc ../main/bin/vlc.js] [--out FILE]
import { spawnSync } from 'node:child_process';
import { createHash } from 'node:crypto';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { cpus, loadavg, tmpdir } from 'node:os';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { benchInput } from './bench-input.mjs';

const ROOT = resolve(dirname(fileURLToPath(import.meta.url)), '..');
const arg = (name, dflt) => {
  const i = process.argv.indexOf(name);
  return i > 0 ? process.argv[i + 1] : dflt;
};
const REPEATS = Number(arg('--repeats', '3'));
const SETS = arg('--data', 'demo,clustered384').split(',');
const VLC = resolve(arg('--vlc', join(ROOT, 'bin/vlc.js')));
const OPTIONS = [[], ['--quality', '0.9'], ['--quality', '0.8']];
const OUT = arg('--out', join(ROOT, `bench/results/${new Date().toISOString().slice(0, 10)}-quality-speed.json`));

const input = benchInput;

const git = (args, cwd) => spawnSync('git', args, { cwd, encoding: 'utf8' }).stdout.trim();
const median = (v) => {
  const s = [...v].sort((a, b) => a - b);
  return s.length % 2 ? s[(s.length - 1) / 2] : (s[s.length / 2 - 1] + s[s.length / 2]) / 2;
};

const tmp = mkdtempSync(join(tmpdir(), 'vlc-bench-'));
const results = [];
try {
  for (const set of SETS) {
    const file = input(set);
    const runs = [];
    for (let rep = 0; rep < REPEATS; rep++)
      for (const opts of OPTIONS) {
        const out = join(tmp, 'x.vlc');
        const load = loadavg()[0];
        const t0 = performance.now();
        // GNU time's user + system seconds: the work done, which other jobs on a shared machine inflate far less than the wall time.
        const timeFile = join(tmp, 'time.txt');
        const r = spawnSync('/usr/bin/time', ['-f', '%U %S', '-o', timeFile, process.execPath, VLC, 'compress', file, '-o', out, '-f', '--device', 'cpu', '--json', '-q', ...opts], { encoding: 'utf8', maxBuffer: 1 << 26 });
        const wall = (performance.now() - t0) / 1000;
        const cpu = readFileSync(timeFile, 'utf8').trim().split('\n').at(-1).split(' ').map(Number).reduce((a, b) => a + b, 0);
        if (r.status !== 0) throw new Error(`vlc compress ${set} ${opts.join(' ')}: exit ${r.status}: ${r.stderr}`);
        const c = JSON.parse(r.stdout);
        const run = {
          options: opts.join(' ') || '(none)', repeat: rep, wall_seconds: +wall.toFixed(2), cpu_seconds: +cpu.toFixed(2), total_seconds: +c.total_seconds.toFixed(2),
          choose_seconds: +c.choose_seconds.toFixed(2), train_seconds: +c.train_seconds.toFixed(2), codec: c.codec ?? c.residual,
          bytes_per_vector: c.bytes_per_vector, recall_at_10: c.recall_at_10, recall_at_10_all: c.recall_at_10_all, recall_at_10_all_interval: [c.recall_at_10_all_low, c.recall_at_10_all_high],
          measured: (c.choice?.measured ?? []).map((m) => `${m.residual}${m.bits_code_bytes ? ` ${m.bits_code_bytes}B` : m.pq_subspaces ? ` ${m.pq_subspaces}x${m.pq_bits}` : ''}`),
          sha256: createHash('sha256').update(readFileSync(out)).digest('hex').slice(0, 16), loadavg_1min_before: +load.toFixed(2),
        };
        runs.push(run);
        console.error(`${set} ${run.options}: ${run.wall_seconds} s, cpu ${run.cpu_seconds} s (choose ${run.choose_seconds} s), ${run.codec} ${run.bytes_per_vector.toFixed(2)} B/vector, load ${run.loadavg_1min_before}`);
      }
    const of = (o) => runs.filter((r) => r.options === o);
    const stat = (o, k) => median(of(o).map((r) => r[k]));
    const med = Object.fromEntries(['(none)', '--quality 0.9', '--quality 0.8'].map((o) => [o, { wall_seconds: stat(o, 'wall_seconds'), cpu_seconds: stat(o, 'cpu_seconds'), choose_seconds: stat(o, 'choose_seconds') }]));
    const ratio = (o, k) => +(med[o][k] / med['(none)'][k]).toFixed(3);
    results.push({
      data: set, input: file.replace(ROOT + '/', ''), runs, medians: med,
      ratio_quality_0_9: ratio('--quality 0.9', 'wall_seconds'), ratio_quality_0_8: ratio('--quality 0.8', 'wall_seconds'),
      cpu_ratio_quality_0_9: ratio('--quality 0.9', 'cpu_seconds'), cpu_ratio_quality_0_8: ratio('--quality 0.8', 'cpu_seconds'),
      same_file_0_9: new Set([...of('(none)'), ...of('--quality 0.9')].map((r) => r.sha256)).size === 1,
    });
  }
} finally {
  rmSync(tmp, { recursive: true, force: true });
}
const vlcRoot = resolve(dirname(VLC), '..');
writeFileSync(OUT, JSON.stringify({
  what: 'issue 30 item 2: vlc compress --device cpu with no codec option, --quality 0.9 and --quality 0.8; wall seconds (median of the repeats), ratios to no option, and whether --quality 0.9 writes the same bytes as no option',
  date: new Date().toISOString(),
  machine: `${cpus().length}-core ${cpus()[0]?.model ?? 'cpu'}, shared with other sessions' jobs (load average per run below)`,
  vlc: VLC.replace(ROOT + '/', ''), commit: git(['rev-parse', 'HEAD'], vlcRoot), dirty: git(['status', '--porcelain', '--untracked-files=no'], vlcRoot) !== '',
  node: process.version, repeats: REPEATS, results,
}, null, 1) + '\n');
console.error(`wrote ${OUT}`);
