// Options shared by several commands, and validation helpers that say how to fix the input.
import { Option, type Command } from 'commander';
import { UsageError } from '../errors.js';
import { setVerbosity } from '../log.js';
import type { DeviceChoice } from '../backend/select.js';

export interface CommonOptions {
  device: DeviceChoice;
  gpu: number;
  json?: boolean;
  quiet?: boolean;
  verbose?: boolean;
}

/** --device and --gpu (the commands that run the quantizer). */
export function addDeviceOptions(cmd: Command): Command {
  cmd.addOption(
    new Option('--device <device>', 'where to run: auto (CUDA when usable, else CPU), cuda, cpu')
      .default('auto')
      .argParser((v) => parseDevice(v)),
  );
  return addGpuOption(cmd);
}

/** --gpu N, a GPU index as `vlc devices` lists them (default 0). */
export function addGpuOption(cmd: Command): Command {
  return cmd.option('--gpu <index>', 'GPU index (see `vlc devices`)', (v) => parseInteger('--gpu', v, 0), 0);
}

/**
 * --gpu N only means something on a GPU: with --device cpu it is a contradiction (exit 2), and with
 * --device auto an explicit --gpu asks for CUDA, so a missing GPU is an error (exit 3) rather than a
 * quiet fall-back to the CPU.
 */
export function effectiveDevice(cmd: Command, o: { device: DeviceChoice }): DeviceChoice {
  const gpuGiven = cmd.getOptionValueSource('gpu') === 'cli';
  if (!gpuGiven) return o.device;
  if (o.device === 'cpu') throw new UsageError('--gpu selects a GPU, but --device cpu was asked for; drop one of them');
  return 'cuda';
}

/** --json, -q, -v. */
export function addOutputOptions(cmd: Command): Command {
  return cmd
    .option('--json', 'print one machine-readable JSON object on stdout')
    .option('-q, --quiet', 'only errors on stderr')
    .option('-v, --verbose', 'debug logs on stderr');
}

export function applyVerbosity(o: { quiet?: boolean; verbose?: boolean }): void {
  setVerbosity(o.quiet ? 'quiet' : o.verbose ? 'verbose' : 'normal');
}

function parseDevice(v: string): DeviceChoice {
  if (v === 'auto' || v === 'cuda' || v === 'cpu') return v;
  throw new UsageError(`--device must be auto, cuda or cpu (got '${v}')`);
}

/** A whole number in [min, max], or a UsageError naming the option. */
export function parseInteger(name: string, v: string, min: number, max = Number.MAX_SAFE_INTEGER): number {
  const t = v.trim();
  if (!/^[+-]?\d+$/.test(t)) throw new UsageError(`${name} must be a whole number (got '${v}')`);
  const x = Number(t);
  if (x < min || x > max) {
    const range = max === Number.MAX_SAFE_INTEGER ? `at least ${min}` : `between ${min} and ${max}`;
    throw new UsageError(`${name} must be ${range} (got ${x})`);
  }
  return x;
}
