// `vlc devices`: the GPUs the CUDA driver sees (devices(), api/devices.ts: the same probe as
// --device auto), or why none.
import type { Command } from 'commander';
import { DeviceError } from '../errors.js';
import { jsonResult } from './json.js';
import { addExamples } from './help.js';
import { addOutputOptions, applyVerbosity, type OutputFlags } from './options.js';

const GiB = 2 ** 30;

export function register(program: Command): void {
  const cmd = program
    .command('devices')
    .description('list the GPUs seen by the CUDA driver: index, name, compute capability, memory, SMs, driver version');
  addOutputOptions(cmd);
  addExamples(cmd, [
    ['vlc devices', 'the GPUs, or why there are none (exit 3)'],
    ['vlc devices --json | jq -r \'.devices[].name\'', 'a pipeline: the names only'],
  ]);
  cmd.action(async (o: OutputFlags) => runDevices(o));
}

async function runDevices(o: OutputFlags): Promise<void> {
  applyVerbosity(o);
  const { devices } = await import('../api/devices.js'); // on use: see src/commands/index.ts
  const probe = devices();
  if (!probe.ok) {
    if (o.json) process.stdout.write(JSON.stringify(jsonResult('devices', { ok: false, reason: probe.reason, driver_version: null, devices: [] })) + '\n');
    throw new DeviceError(probe.reason);
  }
  if (o.json) {
    process.stdout.write(
      JSON.stringify(
        jsonResult('devices', {
          ok: true,
          reason: null,
          driver_version: probe.driverVersionText,
          devices: probe.devices.map((d) => ({
            index: d.index,
            name: d.name,
            compute_capability: d.computeCapability,
            multiprocessors: d.multiprocessors,
            memory_total_bytes: d.memoryTotalBytes,
            memory_free_bytes: d.memoryFreeBytes ?? null,
          })),
        }),
        null,
        2,
      ) + '\n',
    );
    return;
  }
  const rows = [['index', 'name', 'compute', 'memory total', 'memory free', 'SMs']];
  for (const d of probe.devices) {
    rows.push([
      String(d.index),
      d.name,
      d.computeCapability,
      `${(d.memoryTotalBytes / GiB).toFixed(1)} GiB`,
      d.memoryFreeBytes === undefined ? '?' : `${(d.memoryFreeBytes / GiB).toFixed(1)} GiB`,
      String(d.multiprocessors),
    ]);
  }
  const widths = rows[0].map((_, c) => Math.max(...rows.map((r) => r[c].length)));
  const lines = rows.map((r) => r.map((v, c) => v.padEnd(widths[c])).join('  ').trimEnd());
  process.stdout.write(`CUDA driver ${probe.driverVersionText} (${probe.driverVersion})\n${lines.join('\n')}\n`);
}
