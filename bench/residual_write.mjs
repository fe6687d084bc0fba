// The host costs `--residual int8` adds to `vlc compress` after training, at a chosen size: encoding
// the residuals (src/codecs/scalar.ts, worker threads) and writing the .vlc file (CRC32C of every
// section, src/io/vlc/crc32c.ts, and the write itself). Synthetic data: vectors near random anchors.
// The manifest is taken from a small real compress of fixtures/demo-2000x64.npy, resized.
// Usage: npx tsc -p . && node bench/residual_write.mjs [--n 1000000] [--d 128] [--m 2048] [--residual int8|int4] [--dist DIR] [--out FILE]
//   --dist: the compiled tree to measure (default ./dist; another checkout's dist gives a "before").
import { execFileSync } from 'node:child_process';
import { mkdtempSync, rmSync, statSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { pathToFileURL } from 'node:url';

const arg = (name, dflt) => {
  const i = process.argv.indexOf(`--${name}`);
  return i > 0 ? process.argv[i + 1] : dflt;
};
const n = Number(arg('n', 1_000_000));
const d = Number(arg('d', 128));
const m = Number(arg('m', 2048));
const mode = arg('residual', 'int8');
const dist = path.resolve(arg('dist', new URL('../dist', import.meta.url).pathname));
const load = (p) => import(pathToFileURL(path.join(dist, p)).href);
const { encodeScalar } = await load('codecs/scalar.js');
const { readVlc, writeVlc } = await load('io/vlc/file.js');
const { crc32c } = await load('io/vlc/crc32c.js');

const tmp = mkdtempSync(path.join(os.tmpdir(), 'vlc-residual-write-'));
try {
  const small = path.join(tmp, 'small.vlc');
  const cli = path.join(dist, '..', 'bin', 'vlc.js');
  const demo = new URL('../fixtures/demo-2000x64.npy', import.meta.url).pathname;
  execFileSync(process.execPath, [cli, 'compress', demo, '-o', small, '--anchors', '16', '--residual', 'int8', '--device', 'cpu'], { stdio: 'ignore' });
  const template = (await readVlc(small)).manifest;

  let s = 1;
  const rand = () => ((s = (Math.imul(s, 1103515245) + 12345) >>> 0) / 2 ** 32) - 0.5;
  const anchors = new Float32Array(m * d);
  for (let i = 0; i < m * d; i++) anchors[i] = rand();
  const assign = new Uint16Array(n);
  for (let i = 0; i < n; i++) assign[i] = Math.floor((rand() + 0.5) * m);
  const x = new Float32Array(new SharedArrayBuffer(n * d * 4));
  for (let i = 0; i < n; i++) for (let j = 0; j < d; j++) x[i * d + j] = anchors[assign[i] * d + j] + 0.05 * rand();

  const t0 = performance.now();
  const { residuals, residualEnergy } = await encodeScalar(mode, { x, n, d, anchors, assign });
  const t1 = performance.now();
  const manifest = { ...template, n, d, m, anchorDtype: 'f32', residual: mode, residualEnergy };
  delete manifest.sections;
  delete manifest.assignmentWidth;
  const file = path.join(tmp, 'big.vlc');
  await writeVlc(file, { manifest, anchors, assignments: assign, residuals });
  const t2 = performance.now();
  const bytes = statSync(file).size;
  const pieces = [residuals.payload()].flat();
  const payloadBytes = pieces.reduce((s, p) => s + p.length, 0);
  const t3 = performance.now();
  pieces.reduce((crc, p) => crc32c(p, crc), 0);
  const t4 = performance.now();

  const result = {
    bench: 'residual_write',
    date: new Date().toISOString(),
    commit: (() => { try { return execFileSync('git', ['rev-parse', '--short', 'HEAD'], { cwd: path.join(dist, '..'), stdio: ['ignore', 'pipe', 'ignore'] }).toString().trim(); } catch { return null; } })(),
    machine: { cpu: os.cpus()[0]?.model, cores: os.availableParallelism(), node: process.version, load: os.loadavg() },
    n, d, m, residual: mode,
    file_bytes: bytes,
    encode_seconds: (t1 - t0) / 1000,
    write_seconds: (t2 - t1) / 1000,
    crc32c_residual_payload_seconds: (t4 - t3) / 1000,
    crc32c_mb_per_s: payloadBytes / 1e6 / ((t4 - t3) / 1000),
  };
  const json = JSON.stringify(result, null, 2) + '\n';
  const out = arg('out');
  if (out) writeFileSync(out, json);
  process.stdout.write(json);
} finally {
  rmSync(tmp, { recursive: true, force: true });
}
