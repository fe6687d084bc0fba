// The MPI Comm (src/backend/sharded/mpi.ts) under mpirun: gather received where the root asks
// (point to point, no copy at the root) or into fresh arrays, and allreduce in place, each checked
// by every rank of test/mpi/comm-child.mjs.
import { spawnSync } from 'node:child_process';
import * as path from 'node:path';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';
import { ROOT } from '../cli/helpers.js';
import { MPIRUN, SKIPPED } from './helpers.js';

const CHILD = path.join(path.dirname(fileURLToPath(import.meta.url)), 'comm-child.mjs');

describe.skipIf(!MPIRUN)(`MPI Comm${SKIPPED}`, () => {
  it.each([2, 3])('gather into places and allreduce in place over %i ranks', (ranks) => {
    const r = spawnSync('mpirun', ['--quiet', '-n', String(ranks), '--oversubscribe', '--allow-run-as-root', process.execPath, CHILD], { cwd: ROOT, env: { ...process.env, FORCE_COLOR: '0' } });
    expect(r.stderr.toString()).toBe('');
    expect(r.stdout.toString()).toBe('ok\n');
    expect(r.status).toBe(0);
  });
});
