// The cores an MPI rank may run on. Open MPI's mpirun binds each rank to ONE core by default
// (with -n 2 or fewer ranks a node: `--bind-to core`), so a rank sees one CPU
// (os.availableParallelism() is 1) and every thread pool vlc sizes from it runs on that core: the
// payload checksum, the quality figures, the host encoders and the CUDA driver's host work of a
// rank on a 32-core GPU machine shared one core while one process had all 32. When the binding is
// mpirun's default (not asked for with --bind-to) and the launcher's cores are more than the
// ranks on the node, each rank is given its share of them instead: the local-th of
// OMPI_COMM_WORLD_LOCAL_SIZE contiguous slices, disjoint, so ranks still do not compete; and rank 0,
// while the others only wait for it (choosing, measuring, writing: rank-finish.ts), all of them —
// back to its share while every rank encodes. Every thread of the process moves (/proc/self/task),
// so pools started on more cores are narrowed with the rest.
// A binding asked for with --bind-to (OMPI_MCA_hwloc_base_binding_policy) is kept as it is.
import { readdirSync, readFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { log } from '../../log.js';
import { localRankOf, localSizeOf } from './mpi.js';

/** The CPUs a cpu mask holds (1024, glibc's CPU_SETSIZE). */
const MASK_BYTES = 128;

/** "0-3,8,10-11" (Cpus_allowed_list of /proc/PID/status) as CPU numbers, ascending. */
export function parseCpuList(text: string): number[] {
  const out: number[] = [];
  for (const part of text.trim().split(',')) {
    if (part === '') continue;
    const m = /^(\d+)(?:-(\d+))?$/.exec(part);
    if (!m) return [];
    const a = Number(m[1]), b = m[2] === undefined ? a : Number(m[2]);
    for (let c = a; c <= b; c++) out.push(c);
  }
  return out;
}

/** The local-th of `size` contiguous, disjoint slices of `cpus` (empty when there are fewer CPUs than slices). */
export function shareOfCpus(cpus: readonly number[], local: number, size: number): number[] {
  if (!(size >= 1 && local >= 0 && local < size) || cpus.length < size) return [];
  return cpus.slice(Math.floor((local * cpus.length) / size), Math.floor(((local + 1) * cpus.length) / size));
}

/** Whether mpirun bound this rank by its own default rather than because --bind-to asked. */
export function boundByDefault(env: NodeJS.ProcessEnv): boolean {
  return env.OMPI_MCA_orte_bound_at_launch === '1' && env.OMPI_MCA_hwloc_base_binding_policy === undefined;
}

function allowedOf(pid: number | 'self'): number[] {
  try {
    const m = /^Cpus_allowed_list:\s*(.*)$/m.exec(readFileSync(`/proc/${pid}/status`, 'utf8'));
    return m ? parseCpuList(m[1]) : [];
  } catch {
    return [];
  }
}

type SetAffinity = (pid: number, bytes: number, mask: Uint8Array) => number;
let setAffinity: SetAffinity | null | undefined;

function setter(): SetAffinity | null {
  if (setAffinity !== undefined) return setAffinity;
  try {
    const koffi = createRequire(import.meta.url)('koffi') as typeof import('koffi');
    setAffinity = koffi.load('libc.so.6').func('int sched_setaffinity(int pid, size_t size, const uint8_t *mask)') as unknown as SetAffinity;
  } catch {
    setAffinity = null;
  }
  return setAffinity;
}

/**
 * Every thread of this process on `cpus` (threads started later inherit the main thread's);
 * false when the system refuses (then nothing is promised: some threads may have moved).
 */
function runOn(cpus: readonly number[]): boolean {
  const set = setter();
  if (!set || cpus.length === 0 || cpus[cpus.length - 1] >= MASK_BYTES * 8) return false;
  const mask = new Uint8Array(MASK_BYTES);
  for (const c of cpus) mask[c >> 3] |= 1 << (c & 7);
  let tasks: string[];
  try {
    tasks = readdirSync('/proc/self/task');
  } catch {
    return false;
  }
  let ok = true;
  for (const t of tasks) if (set(Number(t), MASK_BYTES, mask) !== 0) ok = false; // a thread that has just exited: the others still move
  return ok && set(0, MASK_BYTES, mask) === 0;
}

/** How a rank's cores were changed, for a debug line. */
export interface Widened {
  from: number[];
  to: number[];
}

/** The cores mpirun bound this process to, read on the first call. */
let bound: number[] | undefined;

/**
 * This rank's share of the launcher's cores (see the top of the file) when mpirun bound it to
 * fewer by default; `all`: every core of the launcher (rank 0 while the others wait). Never fewer
 * than mpirun gave: a share no larger than the binding leaves it as it was. Undefined when nothing
 * changed.
 */
export function widenDefaultBinding(local: number, localSize: number, all = false, env: NodeJS.ProcessEnv = process.env): Widened | undefined {
  if (!boundByDefault(env) || process.platform !== 'linux') return undefined;
  const from = allowedOf('self');
  bound ??= from;
  const launcher = allowedOf(process.ppid);
  let to = all ? launcher : shareOfCpus(launcher, local, localSize);
  if (to.length <= bound.length) to = bound;
  if (to.length === 0 || (to.length === from.length && to.every((c, k) => c === from[k])) || !runOn(to)) return undefined;
  return { from, to };
}

/** "0-3,8" for a debug line. */
export function cpuListText(cpus: readonly number[]): string {
  const runs: string[] = [];
  for (let i = 0; i < cpus.length; ) {
    let j = i;
    while (j + 1 < cpus.length && cpus[j + 1] === cpus[j] + 1) j++;
    runs.push(j > i ? `${cpus[i]}-${cpus[j]}` : `${cpus[i]}`);
    i = j + 1;
  }
  return runs.join(',');
}

/**
 * This rank's share of its machine's cores when mpirun bound it to one by default (see the top of
 * the file); rank 0 says so. `all`: every core of the machine (rank 0 while the others wait for
 * it); without, back to the share (rank 0 while every rank encodes).
 */
export function widenCores(rank: number, all = false): void {
  const local = localRankOf(), size = localSizeOf();
  if (local === undefined || size === undefined) return;
  const w = widenDefaultBinding(local, size, all);
  if (w && rank === 0)
    log().debug(`rank 0: on cores ${cpuListText(w.to)} (${
      all ? 'all of them while the other ranks wait'
      : w.to.length < w.from.length ? 'back to its share while every rank encodes'
      : `its share of the machine's; mpirun bound it to ${cpuListText(bound ?? [])}: --bind-to keeps a binding`})`);
}
