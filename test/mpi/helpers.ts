// What the MPI tests share: whether mpirun is here, and `mpirun -n R vlc <args>`. CI installs Open
// MPI (.ci/run); without mpirun the tests are skipped, and say why.
import { spawnSync } from 'node:child_process';
import { BIN, ROOT } from '../cli/helpers.js';

export const MPIRUN = spawnSync('mpirun', ['--version']).status === 0;

/** The describe title's note when mpirun is missing. */
export const SKIPPED = MPIRUN ? '' : ' (skipped: mpirun is not installed; apt-get install openmpi-bin libopenmpi-dev)';

/** `mpirun -n ranks vlc <args>`: --quiet keeps mpirun's own banners off stderr (ours stay). */
export function mpirun(args: string[], ranks = 2) {
  const r = spawnSync('mpirun', ['--quiet', '-n', String(ranks), '--oversubscribe', '--allow-run-as-root', process.execPath, BIN, ...args], {
    cwd: ROOT,
    env: { ...process.env, FORCE_COLOR: '0' },
    maxBuffer: 64 * 1024 * 1024,
  });
  return { code: r.status, stderr: r.stderr.toString(), stdout: r.stdout.toString() };
}
