// Which GPU an MPI rank takes (api/compress-mpi.ts rankGpu) and where its local rank comes from.
import { describe, expect, it } from 'vitest';
import { rankGpu } from '../../src/api/compress-mpi.js';
import { localRankOf } from '../../src/backend/sharded/mpi.js';

describe('the GPU of an MPI rank', () => {
  it('a --gpu list: the local-th, round robin', () => {
    expect([0, 1, 2, 3].map((l) => rankGpu([2, 5], l, () => 8))).toEqual([2, 5, 2, 5]);
  });
  it('one --gpu: every rank on it', () => {
    expect([0, 1].map((l) => rankGpu(1, l, () => 2))).toEqual([1, 1]);
  });
  it('no --gpu: one GPU per local rank, round robin over the GPUs present; GPU 0 without any', () => {
    expect([0, 1, 2].map((l) => rankGpu(undefined, l, () => 2))).toEqual([0, 1, 0]);
    expect(rankGpu(undefined, 3, () => 0)).toBe(0);
  });
  it('the local rank from Open MPI, MPICH or Slurm; none: undefined', () => {
    expect(localRankOf({ OMPI_COMM_WORLD_LOCAL_RANK: '1' })).toBe(1);
    expect(localRankOf({ MPI_LOCALRANKID: '3' })).toBe(3);
    expect(localRankOf({ SLURM_LOCALID: '2' })).toBe(2);
    expect(localRankOf({ OMPI_COMM_WORLD_LOCAL_RANK: 'x' })).toBeUndefined();
    expect(localRankOf({})).toBeUndefined();
  });
});
