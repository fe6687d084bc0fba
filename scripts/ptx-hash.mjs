// The hash that ties a build/<name>.ptx to its sources: the .cu file plus every shared header
// (cuda/*.cuh), so an edit to either makes the committed PTX stale. Used by build-ptx.mjs and by
// the freshness test.
import { createHash } from 'node:crypto';
import { readFileSync, readdirSync } from 'node:fs';
import { join } from 'node:path';

export const ARCH = 'compute_80';

/**
 * Modules built for another virtual architecture than ARCH: screen_h90 uses Hopper's wgmma, which
 * exists only in the arch-specific sm_90a PTX (loaded on compute capability 9.0 only: ptx.ts).
 */
const ARCH_OF = { screen_h90: 'compute_90a' };

/**
 * Hopper's machine code, compiled by ptxas from the committed PTX (build/sm_90/<name>.cubin): on
 * compute capability 9.0 the context loads it instead of having the driver JIT the PTX in every new
 * process whose JIT cache is cold (ptx.ts). screen_h90's PTX is sm_90a, so its cubin is too.
 */
export const CUBIN_DIR = 'sm_90';
export function cubinArchOf(name) {
  return archOf(name) === 'compute_90a' ? 'sm_90a' : 'sm_90';
}

/** sha256 of a file's bytes: ties a cubin to the PTX it was compiled from. */
export function bytesHash(bytes) {
  return createHash('sha256').update(bytes).digest('hex');
}

/** The virtual architecture module `name` is built for. */
export function archOf(name) {
  return ARCH_OF[name] ?? ARCH;
}

export function sourceHash(cudaDir, cuFile) {
  const h = createHash('sha256');
  const headers = readdirSync(cudaDir).filter((f) => f.endsWith('.cuh')).sort();
  for (const f of [cuFile, ...headers]) {
    h.update(f + '\0');
    // Line endings normalised so a checkout with CRLF does not look stale.
    h.update(readFileSync(join(cudaDir, f), 'utf8').replace(/\r\n/g, '\n'));
  }
  return h.digest('hex');
}
