// `vlc bench`: the SPEC §5 workloads on one device (per-iteration time from the backend's own
// timers, TFLOP/s, energy); JSON on stdout with --json or to a file with --out. On the CPU the
// workloads are subsampled so it stays quick. On the GPU, --peer runs the PyTorch peer on the
// same data in the same run (bench/run-gpu.sh does this and commits bench/results/*gpu*.json).
import type { Command } from 'commander';
import { execFileSync } from 'node:child_process';
import { selectBackend } from '../backend/select.js';
import { UsageError } from '../errors.js';
import { planOutput } from '../api/preflight.js';
import { writeOutput } from '../io/output.js';
import { runBench, type WorkloadResult } from '../bench/run.js';
import { WORKLOADS } from '../bench/workloads.js';
import { VERSION } from '../version.js';
import { jsonResult } from './json.js';
import { addExamples } from './help.js';
import { addDeviceOptions, addForceOption, addOutputOptions, applyVerbosity, effectiveDevice, parseInteger, type CommonOptions } from './options.js';

interface BenchFlags extends CommonOptions {
  workloads: string;
  iters: number;
  anneal?: boolean;
  peer?: string;
  full?: boolean;
  out?: string;
  force?: boolean;
}

export function register(program: Command): void {
  const cmd = program
    .command('bench')
    .description('time the standard workloads (seed-small, seed-large, mnemo, prod) on one device; JSON out')
    .option('--workloads <list>', `comma-separated subset of ${WORKLOADS.map((w) => w.name).join(',')}`, WORKLOADS.map((w) => w.name).join(','))
    .option('--iters <n>', 'timed Lloyd iterations per workload (after 2 warm-up ones)', (v) => parseInteger('--iters', v, 1, 10000), 20)
    .option('--anneal', 'also time a whole anneal (k-means++ init + default schedule) per workload')
    .option('--full', 'on the CPU, run the full sizes instead of subsampling (slow)')
    .option('--peer <torch_kmeans.py>', 'run this PyTorch k-means peer on the same data and report speedup_vs_torch')
    .option('--out <file>', 'write the JSON result to this file (atomically)');
  addDeviceOptions(cmd);
  addForceOption(cmd);
  addOutputOptions(cmd);
  addExamples(cmd, [
    ['vlc bench --workloads seed-small,seed-large', 'a quick table of the two small workloads'],
    ['vlc bench --device cpu --workloads seed-small --iters 5 --json | jq \'.workloads[].iter_ms_median\'', 'a pipeline: one figure from the JSON'],
  ]);
  cmd.action(async (o: BenchFlags, c: Command) => runBenchCommand(o, c));
}

function gitCommit(): string | undefined {
  if (process.env.VLC_COMMIT) return process.env.VLC_COMMIT;
  try {
    return execFileSync('git', ['rev-parse', 'HEAD'], { encoding: 'utf8', stdio: ['ignore', 'pipe', 'ignore'] }).trim();
  } catch {
    return undefined;
  }
}

async function runBenchCommand(o: BenchFlags, cmd: Command): Promise<void> {
  applyVerbosity(o);
  const out = o.out === undefined ? undefined : planOutput(o.out, { option: '--out', force: o.force });
  const names = o.workloads.split(',').map((s) => s.trim()).filter(Boolean);
  for (const n of names) {
    if (!WORKLOADS.some((w) => w.name === n)) {
      throw new UsageError(`--workloads: unknown workload '${n}'; choose from ${WORKLOADS.map((w) => w.name).join(', ')}`);
    }
  }
  const backend = await selectBackend({ device: effectiveDevice(cmd, o), gpu: o.gpu });
  let results: WorkloadResult[];
  try {
    results = await runBench(backend, {
      workloads: names,
      iters: o.iters,
      anneal: o.anneal === true,
      peer: o.peer,
      subsample: backend.kind === 'cpu' && !o.full,
    });
  } finally {
    await backend.close();
  }
  const speedups: Record<string, number> = {};
  for (const r of results) if (r.speedup_vs_torch !== undefined) speedups[r.name] = r.speedup_vs_torch;
  const report = jsonResult('bench', {
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
  });
  const text = JSON.stringify(report, null, 2) + '\n';
  if (out) await writeOutput(out, async (sink) => sink.write(Buffer.from(text)));
  if (o.json || !o.out) process.stdout.write(o.json ? text : summary(results));
}

function summary(rs: WorkloadResult[]): string {
  const head = `${'workload'.padEnd(11)} ${'n×d'.padStart(14)} ${'m'.padStart(5)} ${'ms/iter'.padStart(9)} ${'TFLOP/s'.padStart(8)} ${'energy'.padStart(11)} ${'vs torch'.padStart(9)}`;
  const lines = rs.map(
    (r) =>
      `${r.name.padEnd(11)} ${`${r.n}×${r.d}`.padStart(14)} ${String(r.m).padStart(5)} ${r.iter_ms_median.toFixed(3).padStart(9)} ` +
      `${(r.assign_tflops ?? r.iter_tflops).toFixed(2).padStart(8)} ${r.energy.toPrecision(5).padStart(11)} ` +
      `${r.speedup_vs_torch ? `${r.speedup_vs_torch.toFixed(2)}x`.padStart(9) : '-'.padStart(9)}`,
  );
  return [head, ...lines].join('\n') + '\n';
}
