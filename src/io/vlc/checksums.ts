// The payload checksums of a large .vlc file, on several threads: a 130 MB int8 file spent a third
// of a GPU search's time in one thread's CRC32C. Each worker checksums contiguous slices of a
// payload the file buffer shares with it (a SharedArrayBuffer, so nothing is copied) and the
// slices' CRCs are joined into the payload's (crc32cJoin). decodeVlc then compares instead of
// computing; every other check stays where it is.
import { availableParallelism } from 'node:os';
import { Worker } from 'node:worker_threads';
import { crc32c, crc32cCombine, crc32cJoin } from './crc32c.js';
import { SECTION_HEADER_BYTES } from './format.js';
import { asPayload, up8, type PayloadLike } from './payload.js';

/** Payloads smaller than this are checksummed in line: starting threads costs tens of milliseconds. */
export const PARALLEL_CHECK_MIN_BYTES = 32 << 20;
/** One worker's unit of work, and of progress. */
const SLICE = 8 << 20;
/**
 * A thread's CRC32C runs near 1 GB/s (a table loop in JS), far below a server's memory bandwidth:
 * with 8 threads on a 64-core host, `vlc info` of a 130 GB file checked 6.5 GB/s, 8 threads' worth
 * (bench/results/2026-11-28-h200x4-r10.json). So up to this many, where the cores are there.
 */
const MAX_THREADS = 32;

/** A payload's place in the file and its CRC32C, computed off the main thread. */
export interface PayloadCrc {
  start: number;
  size: number;
  crc: number;
}

/**
 * Where each section's payload lies, read from the section headers without checking them (decodeVlc
 * checks everything; a damaged header only means a span that decodeVlc will not ask about).
 */
export function payloadSpans(input: PayloadLike, manifestEnd: number): Array<{ start: number; size: number }> {
  const buf = asPayload(input);
  const spans = [];
  for (let off = align8(manifestEnd); off + SECTION_HEADER_BYTES <= buf.length; ) {
    const sh = buf.view(off, SECTION_HEADER_BYTES); // the file may be larger than one view: each header on its own
    const size = Number(new DataView(sh.buffer, sh.byteOffset, SECTION_HEADER_BYTES).getBigUint64(8, true));
    const start = off + SECTION_HEADER_BYTES;
    if (size > buf.length - start) break;
    spans.push({ start, size });
    off = align8(start + size);
  }
  return spans;
}

/** How parallelPayloadCrcs splits the work (tests make it small). */
export interface ParallelCheck {
  threads: number;
  minBytes: number;
  slice: number;
}

/** The defaults (as many threads as cores, up to MAX_THREADS), with what `how` sets. */
function checkSettings(how: Partial<ParallelCheck>): ParallelCheck {
  return { threads: Math.min(MAX_THREADS, availableParallelism()), minBytes: PARALLEL_CHECK_MIN_BYTES, slice: SLICE, ...how };
}

/**
 * The CRC32C of every payload of at least `minBytes` in `buf` (which must live in a
 * SharedArrayBuffer), each on up to `threads` workers; `onChecked(bytes, total)` hears each slice.
 * Empty when the file has no such payload or the host one core.
 */
export async function parallelPayloadCrcs(
  input: PayloadLike, manifestEnd: number, onChecked?: (bytes: number, total: number) => void, how: Partial<ParallelCheck> = {},
): Promise<PayloadCrc[]> {
  const buf = asPayload(input);
  if (!(buf.buffer instanceof SharedArrayBuffer)) return [];
  return spansOnThreads(buf, manifestEnd, { buffer: buf.buffer, byteOffset: buf.byteOffset }, onChecked, checkSettings(how));
}

/**
 * parallelPayloadCrcs for a file read where it lies (on-disk.ts): `input` reads the file at `path`
 * (its section headers), and each worker reads its own slices of the payloads from the file, so a
 * 130 GB file is checked at the speed of several threads and the disk instead of one thread's CRC.
 */
export async function parallelFileCrcs(
  path: string, input: PayloadLike, manifestEnd: number, onChecked?: (bytes: number, total: number) => void, how: Partial<ParallelCheck> = {},
): Promise<PayloadCrc[]> {
  return spansOnThreads(asPayload(input), manifestEnd, { path }, onChecked, checkSettings(how));
}

/** The CRC32C of each payload of at least minBytes, its slices spread over the threads (`where`: the bytes' place for the workers). */
async function spansOnThreads(
  buf: ReturnType<typeof asPayload>, manifestEnd: number, where: Pick<CrcJob, 'buffer' | 'byteOffset' | 'path'>,
  onChecked: ((bytes: number, total: number) => void) | undefined, { threads, minBytes, slice }: ParallelCheck,
): Promise<PayloadCrc[]> {
  const big = payloadSpans(buf, manifestEnd).filter((s) => s.size >= minBytes && s.size > 0);
  if (big.length === 0 || threads < 2) return [];
  const out: PayloadCrc[] = [];
  for (const { start, size } of big) {
    const slices = Math.ceil(size / slice);
    const crcs = new Array<number>(slices);
    let checked = 0;
    const per = Math.ceil(slices / threads);
    const jobs = [];
    for (let s0 = 0; s0 < slices; s0 += per) {
      const job: CrcJob = { ...where, start, size, slice, s0, s1: Math.min(slices, s0 + per) };
      jobs.push(sliceCrcs(job, (i, crc) => {
        crcs[i] = crc;
        checked += Math.min(slice, size - i * slice);
        onChecked?.(start + checked, buf.length);
      }));
    }
    await Promise.all(jobs);
    out.push({ start, size, crc: crc32cJoin(0, crcs, slice, size) });
  }
  return out;
}

/**
 * The CRC32C of `pieces` joined (a section's payload, as the writer gets it), the pieces of at
 * least `minBytes` in shared memory checksummed on worker threads, the others in line. Undefined
 * (at once, not a promise) when the whole is smaller than `minBytes` or the host has one core: the
 * caller checksums it in line. A 4.5 GB bits payload took seconds of one thread when writing
 * (bench/results/2026-11-28-h100x4-r3i.json); the writer now writes while the threads checksum.
 */
export function parallelPiecesCrc(pieces: Uint8Array[], how: Partial<ParallelCheck> = {}): Promise<number> | undefined {
  const { threads, minBytes, slice } = checkSettings(how);
  if (threads < 2 || pieces.reduce((s, p) => s + p.length, 0) < minBytes) return undefined;
  return piecesCrc(pieces, threads, minBytes, slice);
}

async function piecesCrc(pieces: Uint8Array[], threads: number, minBytes: number, slice: number): Promise<number> {
  let crc = 0;
  for (const p of pieces) {
    if (p.length < minBytes || !(p.buffer instanceof SharedArrayBuffer)) {
      crc = crc32c(p, crc);
      continue;
    }
    const slices = Math.ceil(p.length / slice);
    const crcs = new Array<number>(slices);
    const per = Math.ceil(slices / threads);
    const jobs = [];
    for (let s0 = 0; s0 < slices; s0 += per) {
      const job: CrcJob = { buffer: p.buffer, byteOffset: p.byteOffset, start: 0, size: p.length, slice, s0, s1: Math.min(slices, s0 + per) };
      jobs.push(sliceCrcs(job, (i, c) => (crcs[i] = c)));
    }
    await Promise.all(jobs);
    crc = crc32cCombine(crc, crc32cJoin(0, crcs, slice, p.length), p.length);
  }
  return crc;
}

/**
 * What crc-worker.js is handed: slices s0..s1 of the payload at `start`, in shared memory
 * (`buffer`) or in the file at `path` (read by the worker itself).
 */
export interface CrcJob {
  buffer?: SharedArrayBuffer;
  byteOffset?: number;
  path?: string;
  start: number;
  size: number;
  slice: number;
  s0: number;
  s1: number;
}

/** One worker over the job's slices (it answers one message per slice, then is stopped). */
function sliceCrcs(job: CrcJob, onSlice: (i: number, crc: number) => void): Promise<void> {
  return new Promise((resolve, reject) => {
    // The parent's flags (e.g. --input-type of `node -e`) can be invalid for a worker file.
    const w = new Worker(new URL('./crc-worker.js', import.meta.url), { execArgv: [] });
    let left = job.s1 - job.s0;
    w.on('message', ({ i, crc }: { i: number; crc: number }) => {
      onSlice(i, crc);
      if (--left === 0) void w.terminate().then(() => resolve());
    });
    w.once('error', reject);
    w.once('exit', (code) => {
      if (left > 0) reject(new Error(`checksum worker exited (code ${code}) with ${left} slices left`));
    });
    w.postMessage(job);
  });
}

const align8 = up8; // number arithmetic: offsets pass 2^32
