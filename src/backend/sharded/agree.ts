// How MPI ranks fail together with ONE message, on rank 0 (api/compress-mpi.ts):
//   - agree(): a step that may fail on some ranks only (reading each rank's own rows): every rank
//     tells rank 0 how its step went (a gather), so rank 0 can name the rank and its reason;
//   - everywhere(): a step that is the same on every rank (a check of options or of figures every
//     rank holds): it fails on all of them alike, so rank 0 reports it and the others stay quiet.
// Either way rank 0 throws the error (cli.ts prints it and exits with its code) and the other
// ranks throw ReportedElsewhere (errors.ts): exit with the same code, print nothing. Failures later in the run, in
// the middle of a collective, go through Comm.abort instead (mpi.ts: the failing rank's message,
// then MPI_Abort).
import { EXIT, ReportedElsewhere, VlcError } from '../../errors.js';
import type { Comm } from './comm.js';

/** Errors every rank knows of (so no MPI_Abort is needed to stop the others): see the top of the file. */
const known = new WeakSet<object>();

/** True for an error from agree() or everywhere(): every rank is failing with it, in step. */
export function failedTogether(e: unknown): boolean {
  return e instanceof ReportedElsewhere || (typeof e === 'object' && e !== null && known.has(e));
}

function together(e: unknown): unknown {
  if (typeof e === 'object' && e !== null) known.add(e);
  return e;
}

function codeOf(e: unknown): number {
  return e instanceof VlcError ? e.exitCode : EXIT.failure;
}

function messageOf(e: unknown): string {
  return e instanceof Error ? e.message : String(e);
}

/** step() on every rank; when it fails on any, every rank throws (see the top of the file). */
export async function agree<T>(comm: Comm, step: () => Promise<T>): Promise<T> {
  let value: T | undefined;
  let error: unknown;
  try {
    value = await step();
  } catch (e) {
    error = e;
  }
  const report = error === undefined ? '' : JSON.stringify({ code: codeOf(error), message: messageOf(error) });
  const reports = await comm.gather(new TextEncoder().encode(report), 0);
  // Rank 0 picks the failure to report (the lowest failing rank) and tells every rank its exit code.
  const failures = (reports ?? []).map((b, rank) => ({ rank, text: new TextDecoder().decode(b) })).filter((r) => r.text !== '');
  const chosen = failures.length ? (JSON.parse(failures[0].text) as { code: number; message: string }) : undefined;
  const got = await comm.broadcast(comm.rank === 0 ? new TextEncoder().encode(String(chosen?.code ?? 0)) : undefined, 0);
  const code = Number(new TextDecoder().decode(got));
  if (code === 0) return value as T;
  if (comm.rank !== 0) throw new ReportedElsewhere('failed on another rank (rank 0 reports it)', code);
  const others = failures.length > 1 ? ` (and ${failures.length - 1} other rank${failures.length > 2 ? 's' : ''})` : '';
  const who = failures[0].rank === 0 ? (others ? `rank 0${others}: ` : '') : `rank ${failures[0].rank}${others}: `;
  throw together(new VlcError(`${who}${chosen!.message}`, code));
}

/** step() on every rank, where it gives the same result on every rank: rank 0 alone reports a failure. */
export async function everywhere<T>(comm: Comm, step: () => T | Promise<T>): Promise<T> {
  try {
    return await step();
  } catch (e) {
    if (comm.rank === 0) throw together(e);
    throw new ReportedElsewhere('failed on every rank (rank 0 reports it)', codeOf(e));
  }
}

/**
 * Whether every rank holds the same `value` (e.g. the options it was started with: `mpirun` with
 * several programs, ranks of different versions): compared through a 53-bit hash, the same
 * verdict on every rank.
 */
export async function sameOnEveryRank(comm: Comm, value: string): Promise<boolean> {
  const h = hash53(value);
  const both = await comm.allreduce(Float64Array.of(h, -h), 'max');
  return both[0] === -both[1];
}

/** cyrb53: a 53-bit string hash (exact in a double). */
function hash53(s: string): number {
  let h1 = 0xdeadbeef, h2 = 0x41c6ce57;
  for (let i = 0; i < s.length; i++) {
    const c = s.charCodeAt(i);
    h1 = Math.imul(h1 ^ c, 2654435761);
    h2 = Math.imul(h2 ^ c, 1597334677);
  }
  h1 = Math.imul(h1 ^ (h1 >>> 16), 2246822507) ^ Math.imul(h2 ^ (h2 >>> 13), 3266489909);
  h2 = Math.imul(h2 ^ (h2 >>> 16), 2246822507) ^ Math.imul(h1 ^ (h1 >>> 13), 3266489909);
  return 4294967296 * (2097151 & h2) + (h1 >>> 0);
}
