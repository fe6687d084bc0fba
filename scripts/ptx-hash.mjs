// The hash that ties a build/<name>.ptx to its sources: the .cu file plus every shared header
// (cuda/*.cuh), so an edit to either makes the committed PTX stale. Used by build-ptx.mjs and by
// the freshness test.
import { createHash } from 'node:crypto';
import { readFileSync, readdirSync } from 'node:fs';
import { join } from 'node:path';

export const ARCH = 'compute_80';

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
