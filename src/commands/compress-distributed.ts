// `vlc compress` as one MPI rank (`mpirun -n R vlc compress ...`, detected from the launcher's
// environment, or --distributed): api/compress-mpi.ts does the work; here MPI is started and
// ended, and only rank 0 speaks — the other ranks log nothing but errors and print no result.
import { compressDistributed, type DistributedOptions } from '../api/compress-mpi.js';
import type { CompressResult } from '../api/compress.js';
import { launchedByMpirun, MpiUnavailableError, worldComm } from '../backend/sharded/mpi.js';
import { UsageError } from '../errors.js';
import { setVerbosity, silentReporter } from '../log.js';

/** Whether this compress runs as an MPI rank: asked for, or started by mpirun. */
export function distributedRun(flag: boolean | undefined): boolean {
  return flag === true || launchedByMpirun();
}

/** Resolves to the result on rank 0 (the caller reports it), to undefined on the other ranks. */
export async function runDistributed(input: string[], o: DistributedOptions): Promise<CompressResult | undefined> {
  const comm = openWorld();
  if (comm.rank > 0) setVerbosity('quiet');
  try {
    return await compressDistributed(input, comm.rank > 0 ? { ...o, progress: silentReporter, onIter: undefined } : o, comm);
  } finally {
    comm.finalize(); // after a failure every rank has left its collectives in step (agree.ts)
  }
}

/** MPI_COMM_WORLD; without Open MPI a one-line usage error (exit 2) naming what to install. */
function openWorld() {
  try {
    return worldComm();
  } catch (e) {
    if (e instanceof MpiUnavailableError) throw new UsageError(`--distributed runs under Open MPI: ${e.message}`);
    throw e;
  }
}
