// Time to quality on the CPU (issue 17): `vlc compress --device cpu` with its defaults against FAISS
// k-means on the same .npy, in the same command, interleaved (FAISS 1 thread, FAISS 2 threads, vlc;
// then again for each round) so that load from other processes hits all alike.
//
// Recorded per run: wall seconds (spawn to exit), iterations and final energy (mean squared
// distance of a point to its nearest anchor: FAISS's IndexFlatL2 search of its centroids, vlc's
// final exact pass: the same definition); FAISS's own training seconds (no loading); for vlc, the
// wall seconds from spawning the command to the arrival of its first iteration line (-v,
// VLC_LOG_JSON=1: one line per iteration, written synchronously when the iteration ends) whose
// energy is at or below FAISS's final energy, and the --json figures (read, init, anneal seconds).
// vlc's times include starting Node and reading the file, FAISS's training seconds do not. The
// CPU seconds vlc had used at that line are read from /proc (Linux). The
// machine's 1-minute load average is recorded before and after each run (other processes share
// the cores: compare runs of one round), with each process's CPU seconds (user + system, all
// threads: /usr/bin/time), which other processes' load disturbs much less than wall time.
//
// Usage: node bench/time_to_quality.mjs [--rounds 1] [--out FILE] [--effort default] [--peers DIR] NAME=path.npy:m ...
//        node bench/time_to_quality.mjs --fashion 256,1024          (Fashion-MNIST's 60,000 training images)
// --fashion converts /usr/share/datasets/fashion-mnist/train-images-idx3-ubyte.gz (Debian package
// dataset-fashion-mnist) to a 60,000 x 784 f32 .npy of the raw pixel values 0..255 in a temporary
// directory. Needs: npm run build (dist/), /usr/bin/time; /usr/bin/python3 with numpy and FAISS (python3-faiss) and
// the peer script faiss_kmeans.py in --peers DIR (default ../shared/peers beside the checkout),
// outside the repository: when either is missing
// the FAISS runs are skipped and the result says so.
import { execFileSync, spawn } from 'node:child_process';
import { existsSync, mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { parseArgs } from 'node:util';
import { fileURLToPath } from 'node:url';
import { gunzipSync } from 'node:zlib';

const here = path.dirname(fileURLToPath(import.meta.url));
const root = path.resolve(here, '..');
const { values, positionals } = parseArgs({
  allowPositionals: true,
  options: {
    rounds: { type: 'string', default: '1' },
    effort: { type: 'string' },
    fashion: { type: 'string' },
    seed: { type: 'string', default: '1234' },
    'faiss-iters': { type: 'string', default: '25' },
    peers: { type: 'string', default: path.resolve(root, '..', 'shared', 'peers') },
    out: { type: 'string' },
  },
});
const PY = '/usr/bin/python3';
const FAISS = path.join(path.resolve(values.peers), 'faiss_kmeans.py');
const FASHION = '/usr/share/datasets/fashion-mnist/train-images-idx3-ubyte.gz';
const CLI = path.join(root, 'bin', 'vlc.js');
const faissIters = Number(values['faiss-iters']);
const seed = Number(values.seed);
const load = () => Number(os.loadavg()[0].toFixed(2));
const tmp = mkdtempSync(path.join(os.tmpdir(), 'vlc-ttq-data-'));

const TICKS = Number(execFileSync('getconf', ['CLK_TCK'], { encoding: 'utf8' }).trim());

/** CPU seconds (user + system, all threads) used so far by the child of `timePid` (/usr/bin/time's command); undefined when unknown. */
function cpuSecondsOf(timePid) {
  try {
    const pid = readFileSync(`/proc/${timePid}/task/${timePid}/children`, 'utf8').trim().split(/\s+/)[0];
    const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
    const f = stat.slice(stat.lastIndexOf(')') + 2).split(' '); // fields from the 3rd on
    return Number(((Number(f[11]) + Number(f[12])) / TICKS).toFixed(2)); // utime, stime
  } catch {
    return undefined;
  }
}

/**
 * Runs a command under /usr/bin/time (its CPU seconds, user + system, all threads); resolves with
 * its wall seconds, CPU seconds, stdout, and each stderr line with its arrival time.
 */
function timed(cmd, args, env = {}) {
  const cpuFile = path.join(tmp, `cpu-${process.hrtime.bigint()}`);
  return new Promise((resolve, reject) => {
    const t0 = performance.now();
    const child = spawn('/usr/bin/time', ['-f', '%U %S', '-o', cpuFile, cmd, ...args], { env: { ...process.env, ...env }, stdio: ['ignore', 'pipe', 'pipe'] });
    let out = '', pending = '';
    const lines = [];
    child.stdout.on('data', (b) => (out += b));
    child.stderr.on('data', (b) => {
      const t = (performance.now() - t0) / 1000;
      const cpu = cpuSecondsOf(child.pid);
      pending += b;
      const parts = pending.split('\n');
      pending = parts.pop();
      for (const line of parts) lines.push({ t, cpu, line });
    });
    child.on('error', reject);
    child.on('close', (code) => {
      const seconds = (performance.now() - t0) / 1000;
      if (code !== 0) return reject(new Error(`${cmd} ${args.join(' ')} exited ${code}: ${lines.map((l) => l.line).join('\n').slice(-2000)}`));
      const [user, sys] = readFileSync(cpuFile, 'utf8').trim().split(/\s+/).slice(-2).map(Number);
      resolve({ seconds, cpuSeconds: Number((user + sys).toFixed(2)), out, lines });
    });
  });
}

async function faiss(npy, m, threads) {
  const before = load();
  const r = await timed(PY, [FAISS, npy, '--m', String(m), '--iters', String(faissIters), '--seed', String(seed)], {
    OMP_NUM_THREADS: String(threads), OPENBLAS_NUM_THREADS: '1', MKL_NUM_THREADS: '1',
  });
  const j = JSON.parse(r.out.trim().split('\n').pop());
  return { threads: j.threads, trainSeconds: j.seconds, wallSeconds: r.seconds, cpuSeconds: r.cpuSeconds, iterations: j.iters, energy: j.energy, load: [before, load()] };
}

async function vlc(npy, m, targets) {
  const before = load();
  const dir = mkdtempSync(path.join(os.tmpdir(), 'vlc-ttq-'));
  try {
    const args = [CLI, 'compress', npy, '--anchors', String(m), '--device', 'cpu', '-o', path.join(dir, 'out.vlc'), '--json', '-v'];
    if (values.effort) args.push('--effort', values.effort);
    const r = await timed(process.execPath, args, { VLC_LOG_JSON: '1' });
    const j = JSON.parse(r.out);
    const iters = [];
    for (const { t, cpu, line } of r.lines) {
      try {
        const rec = JSON.parse(line);
        if (rec.msg === 'iteration') iters.push({ t, cpu, energy: rec.energy });
      } catch {
        /* a plain line */
      }
    }
    const reach = (target) => {
      if (target === undefined) return undefined;
      const hit = iters.find((it) => it.energy <= target);
      if (hit) return { seconds: hit.t, cpuSeconds: hit.cpu, iteration: iters.indexOf(hit) };
      return j.energy <= target ? { seconds: r.seconds, cpuSeconds: r.cpuSeconds, iteration: 'final pass' } : null;
    };
    return {
      wallSeconds: r.seconds, cpuSeconds: r.cpuSeconds, iterations: j.iterations, energy: j.energy, converged: j.converged, device: j.device_label,
      readSeconds: j.read_seconds, initSeconds: j.init_seconds, annealSeconds: j.seconds, iterMsMedian: j.iter_ms,
      ...Object.fromEntries(Object.entries(targets).map(([k, v]) => [`reached_${k}`, reach(v)])),
      load: [before, load()],
    };
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}

/** Fashion-MNIST's training images as a 60,000 x 784 f32 .npy (pixel values 0..255). */
function fashionNpy(dir) {
  const raw = gunzipSync(readFileSync(FASHION));
  const n = raw.readUInt32BE(4), d = raw.readUInt32BE(8) * raw.readUInt32BE(12);
  const x = new Float32Array(n * d);
  for (let e = 0; e < n * d; e++) x[e] = raw[16 + e];
  let header = `{'descr': '<f4', 'fortran_order': False, 'shape': (${n}, ${d}), }`;
  header += ' '.repeat(64 - ((10 + header.length + 1) % 64)) + '\n';
  const head = Buffer.alloc(10);
  head.write('\x93NUMPY', 0, 'latin1');
  head[6] = 1;
  head.writeUInt16LE(header.length, 8);
  const file = path.join(dir, 'fashion-mnist-train.npy');
  writeFileSync(file, Buffer.concat([head, Buffer.from(header, 'latin1'), Buffer.from(x.buffer)]));
  return file;
}

function havePython(module) {
  try {
    execFileSync(PY, ['-c', `import ${module}`], { stdio: 'ignore' });
    return true;
  } catch {
    return false;
  }
}

const sets = positionals.map((p) => {
  const m = /^([^=]+)=(.+):(\d+)$/.exec(p);
  if (!m) throw new Error(`expected NAME=path.npy:m, got ${p}`);
  return { name: m[1], npy: m[2], m: Number(m[3]) };
});
if (values.fashion) {
  if (!existsSync(FASHION)) throw new Error(`--fashion needs ${FASHION} (Debian package dataset-fashion-mnist)`);
  const npy = fashionNpy(tmp);
  for (const m of values.fashion.split(',')) sets.push({ name: 'fashion-mnist-train', npy, m: Number(m) });
}
if (sets.length === 0) throw new Error('give --fashion M[,M...] or NAME=path.npy:m ...');
const haveFaiss = existsSync(FAISS) && havePython('faiss');
if (!haveFaiss) console.error(`FAISS runs skipped: they need ${FAISS} and /usr/bin/python3 with python3-faiss`);

const rows = [];
try {
  for (const s of sets) {
    for (let round = 0; round < Number(values.rounds); round++) {
      const f1 = haveFaiss ? await faiss(s.npy, s.m, 1) : undefined;
      const f2 = haveFaiss ? await faiss(s.npy, s.m, 2) : undefined;
      const v = await vlc(s.npy, s.m, { faiss1: f1?.energy, faiss2: f2?.energy });
      const row = { dataset: s.name, m: s.m, round, faiss_1_thread: f1, faiss_2_threads: f2, vlc: v };
      rows.push(row);
      const fmt = (f) => (f ? `${f.energy.toPrecision(7)}, train ${f.trainSeconds.toFixed(2)} s (wall ${f.wallSeconds.toFixed(2)} s, CPU ${f.cpuSeconds} s, load ${f.load[0]})` : 'skipped');
      const at = (r) => (r ? `${r.seconds.toFixed(2)} s, CPU ${r.cpuSeconds} s (iteration ${r.iteration})` : r === null ? 'never' : '-');
      console.error(
        `${s.name} m=${s.m} round ${round}: FAISS 1 thread ${fmt(f1)}; FAISS 2 threads ${fmt(f2)}; vlc ${v.energy.toPrecision(7)} ` +
          `in ${v.wallSeconds.toFixed(2)} s wall (CPU ${v.cpuSeconds} s), ${v.iterations} iterations (load ${v.load[0]}), FAISS-1's energy at ${at(v.reached_faiss1)}, ` +
          `FAISS-2's at ${at(v.reached_faiss2)}`,
      );
    }
  }
} finally {
  rmSync(tmp, { recursive: true, force: true });
}

let commit = 'unknown';
try {
  commit = execFileSync('git', ['rev-parse', '--short', 'HEAD'], { cwd: here, encoding: 'utf8' }).trim();
} catch {}
const cpus = os.cpus();
const date = new Date().toISOString();
const result = {
  bench: 'time_to_quality', date, commit, seed, effort: values.effort ?? 'default',
  machine: { cpu: cpus[0]?.model, cores: cpus.length, memoryGiB: Math.round(os.totalmem() / 2 ** 30), node: process.version },
  peer: haveFaiss
    ? `faiss.Kmeans(d, m, niter=${faissIters}, seed, max_points_per_centroid=1e9) via ../shared/peers/faiss_kmeans.py, OMP_NUM_THREADS 1 and 2`
    : 'absent',
  method:
    'vlc: `vlc compress X --anchors m --device cpu --json -v` (defaults), wall seconds from spawn; reached_faissN: spawn to the first iteration line whose energy <= FAISS-N final energy (cpuSeconds: user + system CPU of the process at that line, /proc). FAISS: trainSeconds = its own timer around train(), wallSeconds = spawn to exit. cpuSeconds = user + system of the whole process (/usr/bin/time). energy = mean over points of the squared distance to the nearest anchor. load = 1-minute load average before/after.',
  rows,
};
const out = values.out ?? path.join(here, 'results', `${date.slice(0, 10)}-cpu-time-to-quality.json`);
mkdirSync(path.dirname(out), { recursive: true });
writeFileSync(out, JSON.stringify(result, null, 2) + '\n');
console.error(`wrote ${out}`);
