// Runs vlc's quantizer (dist/, CPU backend) on one .npy file and prints one JSON line.
// Usage: node bench/quality-run.mjs data.npy --m 256 [--config '{"t0":0.2}'] [--threads 2]
// Used by bench/quality.py; calls dist/ directly so it does not depend on the CLI's options.
import { parseArgs } from 'node:util';
import { anneal } from '../dist/anneal/index.js';
import { DEFAULT_CONFIG } from '../dist/anneal/config.js';
import { createCpuBackend } from '../dist/backend/cpu/index.js';
import { readNpy } from './npy.mjs';

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
