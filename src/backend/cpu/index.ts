// PLACEHOLDER (being written): the CPU backend.
import type { Backend } from '../types.js';
export function createCpuBackend(_o: { threads?: number }): Backend {
  throw new Error('CPU backend not written yet');
}
