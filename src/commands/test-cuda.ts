// `vlc test-cuda [--large]`: the seed's parity test (testCuda(), api/test-cuda.ts) — CUDA then CPU on
// the same data, config and init; prints both runs and exits non-zero when parity fails. Without a
// usable GPU it still runs the CPU half, prints its figures, and exits 3 saying why.
import type { Command } from 'commander';
import type { DeviceRun, ParityReport } from '../api/test-cuda.js';
import { PARITY } from '../api/flags.js';
import { DeviceError, VlcError, EXIT } from '../errors.js';
import { jsonResult } from './json.js';
import { addExamples, hintsFor } from './help.js';
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
  // A DeviceError's hints may name --device, which test-cuda does not have: hintsFor words them for it.
  const { parityJson, testCuda } = await import('../api/test-cuda.js'); // on use: see src/commands/index.ts
  const report = await testCuda({ large: o.large, gpu: o.gpu, explain: (reason) => hintsFor(cmd, reason) });
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
