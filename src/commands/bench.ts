// `vlc bench`: the standard workloads on one device (bench(), api/bench.ts); JSON on stdout with
// --json or to a file with --out, else a table. On the GPU, --peer runs the PyTorch peer on the
// same data in the same run (bench/run-gpu.sh does this and commits bench/results/*gpu*.json).
import type { Command } from 'commander';
import type { WorkloadResult } from '../api/bench.js';
import { WORKLOAD_NAMES } from '../api/flags.js';
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
    .option('--workloads <list>', `comma-separated subset of ${WORKLOAD_NAMES.join(',')}`, WORKLOAD_NAMES.join(','))
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

async function runBenchCommand(o: BenchFlags, cmd: Command): Promise<void> {
  applyVerbosity(o);
  // On use: see src/commands/index.ts.
  const [{ bench }, { planOutput }, { writeOutput }] = await Promise.all([import('../api/bench.js'), import('../api/preflight.js'), import('../io/output.js')]);
  const out = o.out === undefined ? undefined : planOutput(o.out, { option: '--out', force: o.force });
  const workloads = o.workloads.split(',').map((s) => s.trim()).filter(Boolean);
  const report = jsonResult('bench', await bench({ workloads, iters: o.iters, anneal: o.anneal, peer: o.peer, full: o.full, device: effectiveDevice(cmd, o), gpu: o.gpu }));
  const text = JSON.stringify(report, null, 2) + '\n';
  if (out) await writeOutput(out, async (sink) => sink.write(Buffer.from(text)));
  if (o.json || !o.out) process.stdout.write(o.json ? text : summary(report.workloads));
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
