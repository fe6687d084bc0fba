// What the commands' flags, help and messages name before any work runs, from the light modules
// that own them: commands/ take them from here, and load their work (the rest of api/) in their
// actions (src/commands/index.ts), so that a command starts without loading the others'.
import { WORKLOADS } from '../bench/workloads.js';

export { INPUT_DTYPES } from '../vectors/dataset.js';
export { fewIds } from '../vectors/row-ids.js';
export { PARITY } from '../bench/parity.js';

/** `vlc bench`'s workloads, by name. */
export const WORKLOAD_NAMES = WORKLOADS.map((w) => w.name);
