// Options shared by several commands, and validation helpers that say how to fix the input.
import { Option, type Command } from 'commander';
import { UsageError } from '../errors.js';
import { setVerbosity } from '../log.js';
import { METRICS, type DeviceChoice, type Metric } from '../api/options.js';

/** -q, -v: every command. */
export interface VerbosityFlags {
  quiet?: boolean;
  verbose?: boolean;
}

/** --json and -q/-v: every command whose stdout is not the data itself. */
export interface OutputFlags extends VerbosityFlags {
  json?: boolean;
}

/** --device, --gpu: the commands that run the quantizer (compress's --gpu may list several). */
export interface DeviceFlags {
  device: DeviceChoice;
  gpu: number | number[];
}

export interface CommonOptions extends DeviceFlags, OutputFlags {}

/** --device and --gpu (the commands that run the quantizer); `gpuList`: --gpu may name several GPUs (a string: what they do, for --help). */
export function addDeviceOptions(cmd: Command, o: { gpuList?: boolean | string } = {}): Command {
  cmd.addOption(
    new Option('--device <device>', 'where to run: auto (CUDA when usable, else CPU), cuda, cpu')
      .default('auto')
      .argParser((v) => parseDevice(v)),
  );
  if (o.gpuList) {
    const what = typeof o.gpuList === 'string' ? o.gpuList : 'the rows split over them, one engine each';
    return cmd.option('--gpu <index>', `GPU index (see \`vlc devices\`), or several (0,1): ${what}`, parseGpuList, 0);
  }
  return addGpuOption(cmd);
}

/** --gpu 0 or 0,1,...: one index, or a list of distinct indexes (the sharded engine over those GPUs). */
export function parseGpuList(v: string): number | number[] {
  const ids = v.split(',').map((x) => parseInteger('--gpu', x, 0));
  if (new Set(ids).size !== ids.length) throw new UsageError(`--gpu ${v}: each GPU may be named once`);
  return ids.length === 1 ? ids[0] : ids;
}

/** -f, --force: replace an existing output file (never an input; devices and FIFOs need none). */
export function addForceOption(cmd: Command): Command {
  return cmd.option('-f, --force', 'replace an existing output file (an input is never written over)');
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

/** --json (what it prints, when a command says more than the default), -q, -v. */
export function addOutputOptions(cmd: Command, json = 'print one machine-readable JSON object on stdout'): Command {
  return addVerbosityOptions(cmd.option('--json', json));
}

/** -q, -v. */
export function addVerbosityOptions(cmd: Command): Command {
  return cmd.option('-q, --quiet', 'only errors on stderr').option('-v, --verbose', 'debug logs on stderr');
}

/** --seed S: a 32-bit seed; `what` says what it makes reproducible. */
export function addSeedOption(cmd: Command, what: string, defaultSeed: number): Command {
  return cmd.option('--seed <s>', what, (v) => parseInteger('--seed', v, 0, 2 ** 32 - 1), defaultSeed);
}

/** --nprobe P: anchors visited at least per query in the compressed search (src/search/). */
export function addNprobeOption(
  cmd: Command,
  what = 'visit at least this many nearest anchors per query in the compressed search (default: 1, or 8 with residuals)',
): Command {
  return cmd.option('--nprobe <p>', what, (v) => parseInteger('--nprobe', v, 1));
}

/**
 * --metric l2|ip|cosine: what search ranks by. `what` says what it does in this command; no
 * default here (compress's is l2, search's and eval's the file's).
 */
export function addMetricOption(cmd: Command, what: string): Command {
  return cmd.option('--metric <metric>', what, parseMetric);
}

export function parseMetric(v: string): Metric {
  if ((METRICS as readonly string[]).includes(v)) return v as Metric;
  throw new UsageError(`--metric must be ${METRICS.slice(0, -1).join(', ')} or ${METRICS[METRICS.length - 1]} (got '${v}')`);
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
  const x = BigInt(t);
  if (x < BigInt(min)) throw new UsageError(`${name} must be ${max === Number.MAX_SAFE_INTEGER ? `at least ${min}` : `between ${min} and ${max}`} (got ${x})`);
  if (x > BigInt(max))
    throw new UsageError(`${name} ${x} is too large (at most ${max === Number.MAX_SAFE_INTEGER ? 'about 9.0e15' : max})`);
  return Number(x);
}
