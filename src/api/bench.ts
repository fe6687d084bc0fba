// bench(): the standard workloads (bench/workloads.ts: seed-small, seed-large, mnemo, prod) on one
// device — per-iteration time from the backend's own timers, TFLOP/s, energy. On the CPU the
// workloads are subsampled unless `full`. What `vlc bench --json` prints after `schema` and `command`.
import { execFileSync } from 'node:child_process';
import { selectBackend, type DeviceChoice } from '../backend/select.js';
import { runBench, type WorkloadResult } from '../bench/run.js';
import { WORKLOADS } from '../bench/workloads.js';
import { UsageError } from '../errors.js';
import { VERSION } from '../version.js';
import { WORKLOAD_NAMES } from './flags.js';

export type { WorkloadResult };
/** The workloads' names, in their order (api/flags.ts, which the command reads too). */
export { WORKLOAD_NAMES };

export interface BenchOptions {
  /** A subset of WORKLOAD_NAMES (default: all). */
  workloads?: string[];
  /** Timed Lloyd iterations per workload, after 2 warm-up ones (default 20). */
  iters?: number;
  /** Also time a whole anneal (k-means++ init + default schedule) per workload. */
  anneal?: boolean;
  /** A PyTorch k-means peer script run on the same data (speedup_vs_torch). */
  peer?: string;
  /** On the CPU, the full sizes instead of subsampling (slow). */
  full?: boolean;
  device?: DeviceChoice;
  gpu?: number | number[];
}

export async function bench(o: BenchOptions = {}) {
  const names = o.workloads ?? WORKLOAD_NAMES;
  for (const n of names) {
    if (!WORKLOADS.some((w) => w.name === n)) {
      throw new UsageError(`--workloads: unknown workload '${n}'; choose from ${WORKLOAD_NAMES.join(', ')}`);
    }
  }
  const backend = await selectBackend({ device: o.device ?? 'auto', gpu: o.gpu ?? 0 });
  let results: WorkloadResult[];
  try {
    results = await runBench(backend, {
      workloads: names,
      iters: o.iters ?? 20,
      anneal: o.anneal === true,
      peer: o.peer,
      subsample: backend.kind === 'cpu' && !o.full,
    });
  } finally {
    await backend.close();
  }
  const speedups: Record<string, number> = {};
  for (const r of results) if (r.speedup_vs_torch !== undefined) speedups[r.name] = r.speedup_vs_torch;
  return {
    tool: 'vlc',
    version: VERSION,
    date: new Date().toISOString(),
    commit: gitCommit() ?? null,
    device: backend.kind,
    device_label: backend.label,
    node: process.version,
    method:
      'per workload: m seeded random rows as anchors, 2 warm-up then --iters Lloyd iterations (T=0, step 1); ' +
      'medians of the per-iteration time (CUDA events on the GPU); assign TFLOP/s = 2nmd / assign-kernel time' +
      (backend.kind === 'cpu'
        ? '; on the CPU, points whose nearest anchor provably cannot change skip the search (exact), so ' +
          'iter_tflops is 2nmd-equivalent work per second, not arithmetic executed'
        : ''),
    workloads: results,
    speedup_vs_torch: Object.keys(speedups).length ? speedups : null,
  };
}

function gitCommit(): string | undefined {
  if (process.env.VLC_COMMIT) return process.env.VLC_COMMIT;
  try {
    return execFileSync('git', ['rev-parse', 'HEAD'], { encoding: 'utf8', stdio: ['ignore', 'pipe', 'ignore'] }).trim();
  } catch {
    return undefined;
  }
}
