// Which cores an MPI rank is widened to when mpirun bound it to one by default
// (src/backend/sharded/cores.ts): the launcher's CPU list read, cut into the ranks' disjoint
// shares, and a binding asked for with --bind-to left alone.
import { describe, expect, it } from 'vitest';
import { boundByDefault, cpuListText, parseCpuList, shareOfCpus } from '../../dist/backend/sharded/cores.js';

describe('cores of an MPI rank', () => {
  it('reads /proc status CPU lists and writes them back', () => {
    expect(parseCpuList('0-3,8,10-11\n')).toEqual([0, 1, 2, 3, 8, 10, 11]);
    expect(parseCpuList('5')).toEqual([5]);
    expect(parseCpuList('0-x')).toEqual([]); // not a list: nothing is widened
    expect(cpuListText([0, 1, 2, 3, 8, 10, 11])).toBe('0-3,8,10-11');
  });

  it('gives each local rank a contiguous, disjoint share covering every CPU', () => {
    const cpus = parseCpuList('0-31');
    const shares = [0, 1, 2].map((r) => shareOfCpus(cpus, r, 3));
    expect(shares.map((s) => s.length)).toEqual([10, 11, 11]);
    expect(shares.flat()).toEqual(cpus);
    expect(shareOfCpus(parseCpuList('0-1'), 1, 2)).toEqual([1]);
    expect(shareOfCpus(parseCpuList('0-1'), 2, 3)).toEqual([]); // more ranks than CPUs: left as bound
  });

  it('widens only mpirun\'s own default binding, not one asked for', () => {
    expect(boundByDefault({ OMPI_MCA_orte_bound_at_launch: '1' })).toBe(true);
    expect(boundByDefault({ OMPI_MCA_orte_bound_at_launch: '1', OMPI_MCA_hwloc_base_binding_policy: 'core' })).toBe(false);
    expect(boundByDefault({ OMPI_MCA_hwloc_base_binding_policy: 'none' })).toBe(false);
    expect(boundByDefault({})).toBe(false);
  });
});
