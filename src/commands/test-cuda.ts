// `vlc test-cuda [--large]`: the seed's parity test (src/bench/parity.ts) — CUDA then CPU on the
// same data, config and init; prints both runs and exits non-zero when parity fails. Without a
// usable GPU it still runs the CPU half, prints its figures, and exits 3 saying why.
import type { Command } from 'commander';
import { DeviceError, VlcError, EXIT } from '../errors.js';
import { createCpuBackend } from '../backend/cpu/index.js';
import { createCudaBackend } from '../backend/cuda/index.js';
import type { Backend } from '../backend/types.js';
import { runParity, PARITY, type DeviceRun, type ParityReport } from '../bench/parity.js';
import { hintsFor } from './help.js';
import { snakeKeys } from '../api/json.js';
import { jsonResult } from './json.js';
import { addExamples } from './help.js';
import { addGpuOption, addOutputOptions, applyVerbosity, type OutputFlags } from './options.js';

interface TestCudaFlags extends OutputFlags {
  gpu: number;
  large?: boolean;
}

export function register(program: Command): void {
  const cmd = program
    .command('test-cuda')
    .description("the seed's parity test: the same synthetic data and config on CUDA, then the CPU, compared")
    .option('--large', 'n=10000 d=128 m=256 instead of n=1000 d=64 m=32');
  addGpuOption(cmd);
  addOutputOptions(cmd);
  addExamples(cmd, [
    ['vlc test-cuda', 'the small parity test (exit 3 without a GPU, after the CPU half)'],
    ['vlc test-cuda --large --json | jq .speedup', 'a pipeline: the GPU\'s speedup from the JSON'],
  ]);
  cmd.action(async (o: TestCudaFlags, c: Command) => runTestCuda(o, c));
}

/** Parity failed: exit 1 after the report is printed. */
class ParityError extends VlcError {}

async function runTestCuda(o: TestCudaFlags, cmd: Command): Promise<void> {
  applyVerbosity(o);
  let cuda: Backend | string;
  try {
    cuda = await createCudaBackend(o.gpu);
  } catch (e) {
    if (!(e instanceof DeviceError)) throw e; // a bad --gpu is a usage error (exit 2)
    cuda = hintsFor(cmd, e.message); // its hints may name --device, which test-cuda does not have
  }
  const cpu = createCpuBackend({});
  let report: ParityReport;
  try {
    report = await runParity(o.large ? 'large' : 'small', cuda, cpu);
  } finally {
    if (typeof cuda !== 'string') await cuda.close();
    await cpu.close();
  }
  if (o.json) process.stdout.write(JSON.stringify(jsonResult('test-cuda', parityJson(report)), null, 2) + '\n');
  else process.stdout.write(formatReport(report));
  if (report.cudaUnavailable) throw new DeviceError(`CUDA half not run: ${report.cudaUnavailable}`);
  if (!report.pass) {
    throw new ParityError(
      `parity FAILED: energy differs by ${pct(report.energyRelDiff!)} (limit ${pct(PARITY.energyRelDiff)}), ` +
        `assignments agree on ${pct(report.agreement!)} (limit ${pct(PARITY.agreement)})`,
      EXIT.failure,
    );
  }
}

/** The report with the key style and units of every other command (docs/json.md). */
function parityJson(r: ParityReport) {
  const run = (x: DeviceRun) => ({
    device: x.device,
    train_seconds: x.ms / 1000,
    init_seconds: x.initMs / 1000,
    loop_seconds: x.loopMs / 1000,
    open_seconds: x.openMs / 1000,
    iterations: x.iterations,
    iter_ms_median: x.iterMsMedian,
    energy: x.energy,
    seed_ratio: x.seedRatio,
    engine_profile: x.engineProfile ? snakeKeys(x.engineProfile as Record<string, number>) : null,
  });
  return {
    size: r.size,
    n: r.n,
    d: r.d,
    m: r.m,
    config: snakeKeys(r.config as unknown as Record<string, number>),
    cuda: r.cuda ? run(r.cuda) : null,
    cuda_unavailable: r.cudaUnavailable ?? null,
    cpu: run(r.cpu),
    speedup: r.speedup ?? null,
    energy_rel_diff: r.energyRelDiff ?? null,
    agreement: r.agreement ?? null,
    pass: r.pass ?? null,
  };
}

function pct(x: number): string {
  return `${(x * 100).toFixed(2)}%`;
}

function ms(x: number): string {
  return x >= 1000 ? `${(x / 1000).toFixed(2)} s` : `${x.toFixed(1)} ms`;
}

function formatReport(r: ParityReport): string {
  const row = (name: string, x: DeviceRun) =>
    `${name.padEnd(5)} ${ms(x.ms).padStart(10)} ${ms(x.initMs).padStart(10)} ${ms(x.loopMs).padStart(10)} ` +
    `${String(x.iterations).padStart(6)} ${x.energy.toPrecision(6).padStart(12)} ${pct(x.seedRatio).padStart(10)}  ${x.device}`;
  const lines = [
    `test-cuda (${r.size}): n=${r.n} d=${r.d} m=${r.m}, f16 data (seed formula), seed config`,
    `${'run'.padEnd(5)} ${'compress'.padStart(10)} ${'init'.padStart(10)} ${'loop'.padStart(10)} ${'iters'.padStart(6)} ${'energy'.padStart(12)} ${'seed ratio'.padStart(10)}  device`,
  ];
  if (r.cuda) lines.push(row('cuda', r.cuda));
  lines.push(row('cpu', r.cpu));
  if (r.cuda) {
    lines.push(
      `speedup ${r.speedup!.toFixed(1)}x, energy difference ${pct(r.energyRelDiff!)}, assignment agreement ${pct(r.agreement!)}`,
      `parity: ${r.pass ? 'PASS' : 'FAIL'} (limits: energy ${pct(PARITY.energyRelDiff)}, agreement ${pct(PARITY.agreement)})`,
    );
  } else {
    lines.push(`cuda: not run (${r.cudaUnavailable})`);
  }
  return lines.join('\n') + '\n';
}
