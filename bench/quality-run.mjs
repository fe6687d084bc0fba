// Runs vlc's quantizer (dist/, CPU backend) on one .npy file and prints one JSON line.
// Usage: node bench/quality-run.mjs data.npy --m 256 [--config '{"t0":0.2}'] [--threads 2]
// Used by bench/quality.py; calls dist/ directly so it does not depend on the CLI's options.
import { readFileSync } from 'node:fs';
import { parseArgs } from 'node:util';
import { anneal } from '../dist/anneal/index.js';
import { DEFAULT_CONFIG } from '../dist/anneal/config.js';
import { createCpuBackend } from '../dist/backend/cpu/index.js';

/** Minimal .npy reader (little-endian, C order, f32/f16/f64) — enough for the bench datasets. */
function readNpy(path) {
  const buf = readFileSync(path);
  const hlen = buf.readUInt16LE(8);
  const header = buf.toString('latin1', 10, 10 + hlen);
  const descr = /'descr':\s*'([^']+)'/.exec(header)[1];
  const shape = /'shape':\s*\((\d+),\s*(\d+)\)/.exec(header);
  if (/'fortran_order':\s*True/.test(header)) throw new Error('fortran order not supported here');
  const n = Number(shape[1]), d = Number(shape[2]);
  const body = buf.subarray(10 + hlen);
  const copy = new Uint8Array(body.length);
  copy.set(body);
  if (descr === '<f4') {
    const data = new Float32Array(new SharedArrayBuffer(n * d * 4));
    data.set(new Float32Array(copy.buffer, 0, n * d));
    return { n, d, dtype: 'f32', data, format: 'npy', dropped: 0 };
  }
  if (descr === '<f2') {
    const data = new Uint16Array(new SharedArrayBuffer(n * d * 2));
    data.set(new Uint16Array(copy.buffer, 0, n * d));
    return { n, d, dtype: 'f16', data, format: 'npy', dropped: 0 };
  }
  if (descr === '<f8') {
    const data = new Float32Array(new SharedArrayBuffer(n * d * 4));
    data.set(new Float64Array(copy.buffer, 0, n * d));
    return { n, d, dtype: 'f32', data, format: 'npy', dropped: 0 };
  }
  throw new Error(`unsupported dtype ${descr}`);
}

const { values, positionals } = parseArgs({
  allowPositionals: true,
  options: { m: { type: 'string' }, config: { type: 'string', default: '{}' }, threads: { type: 'string' }, history: { type: 'boolean', default: false } },
});
const ds = readNpy(positionals[0]);
const cfg = { ...DEFAULT_CONFIG, ...JSON.parse(values.config), m: Number(values.m) };
const backend = createCpuBackend({ threads: values.threads ? Number(values.threads) : undefined });
const engine = await backend.open(ds, cfg.m);
try {
  const r = await anneal(engine, cfg);
  const empty = cfg.m - new Set(r.assignments).size;
  const out = { energy: r.energy, iterations: r.iterations, converged: r.converged, seconds: r.seconds,
    initSeconds: r.initSeconds, iterMsMedian: r.iterMsMedian, emptyAnchors: empty, config: cfg, label: backend.label };
  if (values.history) out.history = r.history;
  console.log(JSON.stringify(out));
} finally {
  await backend.close();
}
