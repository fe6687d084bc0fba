// Peak host memory of one `vlc compress` against the size of its input (issue 7: under 1.3x the
// file). Writes a seeded Gaussian mixture n x d f32 .npy under the OS temp dir (or takes --input
// FILE), runs `node bin/vlc.js compress FILE -o OUT --anchors m --json [extra args]` in a child,
// and prints one JSON line: the child's maximum RSS (process.resourceUsage, read at its exit by a
// preloaded module), the bytes of vectors the child allocated in host memory (allocStore's counter,
// src/vectors/dataset.ts: the input, plus any host copy of a sample), both against the file's bytes,
// and the figures of vlc's own --json. The files it wrote are deleted.
// Usage: npx tsc -p . && node bench/compress_memory.mjs [--n 10000000] [--d 128] [--m 16384] [--input FILE] [-- extra vlc args]
import { spawnSync } from 'node:child_process';
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';

const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..');
const argv = process.argv.slice(2);
const dash = argv.indexOf('--');
const extra = dash >= 0 ? argv.slice(dash + 1) : [];
const own = dash >= 0 ? argv.slice(0, dash) : argv;
const opt = (name, fallback) => {
  const k = own.indexOf(`--${name}`);
  return k >= 0 ? own[k + 1] : fallback;
};
const n = Number(opt('n', 10_000_000));
const d = Number(opt('d', 128));
const m = Number(opt('m', 16384));
const tmp = fs.mkdtempSync(path.join(os.tmpdir(), 'vlc-compress-memory-'));
const CENTRES = 4096;
const NOISE = 0.3;
const ROWS = 65_536; // rows generated and written at a time

/** xorshift32 uniforms and Box–Muller normals: the same file for the same n, d on every machine. */
function normals(seed) {
  let s = seed >>> 0 || 1;
  const uniform = () => {
    s ^= s << 13;
    s >>>= 0;
    s ^= s >>> 17;
    s ^= s << 5;
    s >>>= 0;
    return (s + 0.5) / 2 ** 32;
  };
  return { uniform, normal: () => Math.sqrt(-2 * Math.log(uniform())) * Math.cos(2 * Math.PI * uniform()) };
}

/** CENTRES seeded centres, every row one of them plus NOISE x a normal, written as a .npy piece by piece. */
function writeMixture(file) {
  const r = normals(7);
  const centres = Float32Array.from({ length: CENTRES * d }, r.normal);
  let header = `{'descr': '<f4', 'fortran_order': False, 'shape': (${n}, ${d}), }`;
  header += ' '.repeat(63 - ((10 + header.length) % 64)) + '\n';
  const fd = fs.openSync(file, 'w');
  const magic = Buffer.from([0x93, 0x4e, 0x55, 0x4d, 0x50, 0x59, 1, 0, header.length & 0xff, header.length >> 8]);
  fs.writeSync(fd, Buffer.concat([magic, Buffer.from(header, 'latin1')]));
  const block = new Float32Array(ROWS * d);
  for (let r0 = 0; r0 < n; r0 += ROWS) {
    const k = Math.min(ROWS, n - r0);
    for (let i = 0; i < k; i++) {
      const c = Math.floor(r.uniform() * CENTRES) * d;
      for (let j = 0; j < d; j++) block[i * d + j] = centres[c + j] + NOISE * r.normal();
    }
    fs.writeSync(fd, new Uint8Array(block.buffer, 0, k * d * 4));
  }
  fs.closeSync(fd);
}

const given = opt('input', undefined);
const input = given ?? path.join(tmp, `mixture-${n}x${d}.npy`);
const output = path.join(tmp, 'out.vlc');
const report = path.join(tmp, 'memory.json');
const preload = path.join(tmp, 'report-memory.mjs');
try {
  if (!given) {
    const t0 = performance.now();
    writeMixture(input);
    console.error(`wrote ${input} (${((performance.now() - t0) / 1000).toFixed(1)} s)`);
  }
  // Loaded into the child before vlc: the same module instance as the CLI's (one URL), so its counter is the CLI's.
  const dataset = pathToFileURL(path.join(root, 'dist', 'io', 'dataset.js')).href;
  fs.writeFileSync(
    preload,
    `import { writeFileSync } from 'node:fs';\nimport { storeBytesAllocated } from ${JSON.stringify(dataset)};\n` +
      `process.on('exit', () => writeFileSync(${JSON.stringify(report)}, JSON.stringify({ maxRssKb: process.resourceUsage().maxRSS, storeBytes: storeBytesAllocated() })));\n`,
  );
  const args = ['--import', pathToFileURL(preload).href, path.join(root, 'bin', 'vlc.js'), 'compress', input, '-o', output, '--anchors', String(m), '--json', ...extra];
  const t0 = performance.now();
  const run = spawnSync(process.execPath, args, { encoding: 'utf8', stdio: ['ignore', 'pipe', 'inherit'], maxBuffer: 1 << 26 });
  const wall = (performance.now() - t0) / 1000;
  if (run.status !== 0) throw new Error(`vlc compress exited ${run.status}`);
  const fileBytes = fs.statSync(input).size;
  const mem = JSON.parse(fs.readFileSync(report, 'utf8'));
  const stats = JSON.parse(run.stdout);
  const pick = (...keys) => Object.fromEntries(keys.filter((k) => k in stats).map((k) => [k, stats[k]]));
  console.log(
    JSON.stringify({
      command: `vlc compress ${given ?? `<${n}x${d} f32 mixture>`} --anchors ${m} --json ${extra.join(' ')}`.trim(),
      file_bytes: fileBytes,
      max_rss_bytes: mem.maxRssKb * 1024,
      rss_over_file: +((mem.maxRssKb * 1024) / fileBytes).toFixed(3),
      host_vector_bytes: mem.storeBytes,
      host_vectors_over_file: +(mem.storeBytes / fileBytes).toFixed(3),
      wall_s: +wall.toFixed(2),
      ...pick('n', 'd', 'm', 'device_label', 'residual', 'sample_rows', 'total_seconds', 'residual_seconds', 'write_seconds'),
    }),
  );
} finally {
  fs.rmSync(tmp, { recursive: true, force: true });
}
