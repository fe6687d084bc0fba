// Every command, one file each. Order here is the order in --help. A command file registers its
// flags and help from light modules only and loads its work (src/api/) in its action, with
// import(): every command then starts without loading the others' (`vlc --version` loaded 224
// modules before; the cost is in bench/results/2026-11-28-cpu-startup.json).
import type { Command } from 'commander';
import { register as compress } from './compress.js';
import { register as decompress } from './decompress.js';
import { register as info } from './info.js';
import { register as evaluate } from './eval.js';
import { register as search } from './search.js';
import { register as testCuda } from './test-cuda.js';
import { register as devices } from './devices.js';
import { register as bench } from './bench.js';

export const commands: Array<(program: Command) => void> = [
  compress,
  decompress,
  info,
  evaluate,
  search,
  testCuda,
  devices,
  bench,
];
