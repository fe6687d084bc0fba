// `vlc search --device cuda` end to end from files (issue 11: 10,000 queries over 1,000,000
// vectors under 1 s on the H100, Node's start excluded): exhaustive exact search over every decoded
// vector on the GPU (src/search/exhaustive.ts), for an int8 and a pq file (--residuals: others, e.g. bits). Synthetic data: a
// mixture of 1,000 Gaussian clusters in d dims (the queries drawn from it too). Per file: the
// search's wall time (3 runs, the best), `node bin/vlc.js --version`'s wall time (Node's start),
// their difference, and for the first 100 queries the share of ids equal to the CPU's exact k-NN
// over the same decoded vectors (near-ties may keep it a little under 1).
// Usage (on the GPU machine): npx tsc -p . && node bench/search-gpu.mjs [--n 1000000] [--d 128] [--queries 10000] [--residuals int8,pq,bits,pqd64] [--gpus '0;0,1;0,1,2,3'] [--out FILE.json]
// --gpus: each list a `--gpu` of its own (the rows split over them), a row each, its output compared byte for byte with the first list's.
// (pqdK: pq on K principal directions, --residual pq --pq-dims K.)
import { execFileSync } from 'node:child_process';
import { mkdtempSync, rmSync, writeFileSync, readFileSync, statSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';

const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..');
const lib = (p) => import(path.join(root, 'dist', p));
const { npyHeader } = await lib('io/writers/npy.js');
const { readVlc } = await lib('io/vlc/file.js');
const { reconstruct } = await lib('io/vlc/reconstruct.js');
const { knn: cpuKnn } = await lib('backend/cpu/knn.js');

const arg = (name, dflt) => {
  const i = process.argv.indexOf(`--${name}`);
  return i > 0 ? process.argv[i + 1] : dflt;
};
const n = Number(arg('n', 1_000_000)), d = Number(arg('d', 128)), nq = Number(arg('queries', 10_000));
const k = 10, CLUSTERS = 1000, CHECKED = 100;
const bin = path.join(root, 'bin', 'vlc.js');
const tmp = mkdtempSync(path.join(os.tmpdir(), 'vlc-search-gpu-'));

let seed = 12345;
const uniform = () => {
  seed = (seed + 0x6d2b79f5) | 0;
  let t = Math.imul(seed ^ (seed >>> 15), 1 | seed);
  t = (t + Math.imul(t ^ (t >>> 7), 61 | t)) ^ t;
  return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
};
const normal = () => Math.sqrt(-2 * Math.log(1 - uniform())) * Math.cos(2 * Math.PI * uniform());
const centres = Float32Array.from({ length: CLUSTERS * d }, () => normal() / Math.sqrt(d));
function mixture(rows) {
  const x = new Float32Array(rows * d);
  for (let i = 0; i < rows; i++) {
    const c = Math.floor(uniform() * CLUSTERS) * d;
    for (let j = 0; j < d; j++) x[i * d + j] = centres[c + j] + (0.3 * normal()) / Math.sqrt(d);
  }
  return x;
}
function writeNpy(file, x, rows) {
  writeFileSync(file, Buffer.concat([Buffer.from(npyHeader('<f4', [rows, d])), Buffer.from(x.buffer, x.byteOffset, x.byteLength)]));
}
const wall = (args, stdout = 'ignore') => {
  const t0 = performance.now();
  execFileSync(process.execPath, [bin, ...args], { stdio: ['ignore', stdout, 'inherit'], maxBuffer: 1 << 30 });
  return (performance.now() - t0) / 1000;
};

try {
  const data = path.join(tmp, 'data.npy'), queriesFile = path.join(tmp, 'queries.npy');
  writeNpy(data, mixture(n), n);
  const queries = mixture(nq);
  writeNpy(queriesFile, queries, nq);
  const nodeStart = Math.min(...[0, 1, 2].map(() => wall(['--version'])));
  const rows = [];
  const residuals = (arg('residuals', 'int8,pq')).split(',');
  for (const residual of residuals) {
    const vlcFile = path.join(tmp, `${residual}.vlc`);
    const dims = /^pqd(\d+)$/.exec(residual)?.[1];
    const codec = dims ? ['--residual', 'pq', '--pq-dims', dims] : ['--residual', residual];
    const compressSeconds = wall(['compress', data, '-o', vlcFile, ...codec, '--device', 'cuda', '-q']);
    const out = path.join(tmp, `${residual}.jsonl`);
    let firstOutput;
    for (const gpus of arg('gpus', '0').split(';')) {
      const searchArgs = ['search', vlcFile, '--queries', queriesFile, '-k', String(k), '--device', 'cuda', '--gpu', gpus, '-q'];
      const runs = [0, 1, 2].map(() => {
        const t0 = performance.now();
        execFileSync(process.execPath, [bin, ...searchArgs], { stdio: ['ignore', 'pipe', 'inherit'], maxBuffer: 1 << 30 });
        return (performance.now() - t0) / 1000;
      });
      const output = execFileSync(process.execPath, [bin, ...searchArgs], { maxBuffer: 1 << 30 });
      firstOutput ??= output;
      writeFileSync(out, output);
      // The first CHECKED queries against the CPU's exact k-NN over the same decoded vectors.
      const lines = readFileSync(out, 'utf8').trim().split('\n').slice(0, CHECKED).map((l) => JSON.parse(l));
      const file = await readVlc(vlcFile);
      const want = await cpuKnn(reconstruct(file), n, queries.subarray(0, CHECKED * d), CHECKED, d, k);
      let same = 0;
      lines.forEach((l, q) => l.ids.forEach((id, r) => (same += id === want.ids[q * k + r] ? 1 : 0)));
      const row = {
        residual, gpus, same_output_as_first_gpus: output.equals(firstOutput), bytes: statSync(vlcFile).size, compress_s: compressSeconds,
        search_wall_s: Math.min(...runs), node_start_s: nodeStart, search_minus_node_start_s: Math.min(...runs) - nodeStart,
        ids_equal_cpu_exhaustive: same / (CHECKED * k), goal_s: 1,
      };
      rows.push(row);
      console.log(JSON.stringify(row));
    }
  }
  const outFile = arg('out');
  if (outFile) writeFileSync(outFile, JSON.stringify({ n, d, queries: nq, k, date: new Date().toISOString(), rows }, null, 2) + '\n');
} finally {
  rmSync(tmp, { recursive: true, force: true });
}
