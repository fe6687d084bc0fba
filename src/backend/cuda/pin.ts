// Large uploads — an engine's resident rows, the residual encoder's input — from the host's own
// buffer, page-locked. From pageable memory the driver stages every byte through a buffer of its
// own on the calling thread, and with one JS thread several GPUs' copies take turns. Locked with
// cuMemHostRegister, the bytes are read by the GPUs' copy engines directly, at once on every GPU
// (bench/results/2026-11-28-h100x4-r3j.json: 12.8 GB to 4 x H100 in 0.08 s once locked). Locking
// costs about as much as one pageable copy (1.3 s for those 12.8 GB), so what is locked stays locked
// until the context that locked it closes: the rows are uploaded twice (the engine, then the
// residual encoder) and locked once. Locks are PORTABLE, so any GPU copies from any GPU's lock.
// A piece is locked, then its copy queued while the next is locked. The bytes are the same either way.
import { setImmediate as yieldImmediate } from 'node:timers/promises';
import { InterruptedError } from '../../errors.js';
import { interruptSignal } from '../../interrupt.js';
import { log } from '../../log.js';
import { libc } from '../../vectors/libc.js';
import type { CudaContext } from './context.js';
import { describeStatus } from './check.js';
import { CU } from './status.js';
import type { DeviceBuffer } from './pool.js';

/** Bytes locked at a time: one lock call per piece, and the copy of one overlaps the locking of the next. */
export const PIN_PIECE = 256 * 2 ** 20;
/**
 * Bytes left unlocked after each locked piece (copied from pageable memory once the rest is
 * queued), so that no page is ever locked twice: not by two pieces, nor by two GPUs whose row
 * ranges meet inside one page (the driver refuses a range that overlaps a locked one).
 */
export const PIN_GAP = 64 * 1024;
/** Bytes per synchronous copy from pageable memory (Ctrl-C is heard between them). */
const SYNC_CHUNK = 64 * 2 ** 20;
/** CU_MEMHOSTREGISTER_PORTABLE: the pages count as locked for every GPU's context. */
const PORTABLE = 1;

/** Bytes [start, end) of `buffer`, locked by `ctx` (its `view`), until ctx closes (unlockAll). */
interface Lock {
  buffer: ArrayBufferLike;
  start: number;
  end: number;
  ctx: CudaContext;
  view: Uint8Array;
}
const locks: Lock[] = [];
/** Locks being released (passRuns): unlocked a piece at a time in the waits of passes (unlockWhileWaiting). */
const releasing: Lock[] = [];
/** Buffers whose rows are uploaded once (releaseAfterUpload). */
const once = new WeakSet<ArrayBufferLike>();

/**
 * `buffer`'s rows will be uploaded once, by the engine over them: their locks may go once passes
 * run over them, in the time the host would wait for the GPU anyway (25.6 GB of a 100M input took
 * 0.5 s to unlock after the file was written), not in the short waits of opening and init. A later
 * upload from it would lock again: slower, never wrong.
 */
export function releaseAfterUpload(buffer: ArrayBufferLike): void {
  once.add(buffer);
}

/**
 * A pass is under way (pass.ts): the locks of buffers marked by releaseAfterUpload are released in
 * waits from now on. Measured, this frees little: judging by the count, cuMemHostUnregister returns
 * only once the GPU's work is done, so a wait unlocks about one piece a pass (a 100M input: 11 of
 * 96 pieces, the rest at close). Unlocking on libuv's threads (the driver takes the call without a
 * current context) moved that time and did not remove it: begun with the pass, the loop grew by
 * what teardown lost; all at close, the driver took them one at a time. The runs:
 * bench/results/2026-11-28-h200-r15-r16.json; the change: .dev/tried/unlock-on-threads.diff.
 */
export function passRuns(): void {
  for (let k = locks.length - 1; k >= 0; k--) if (once.has(locks[k].buffer)) releasing.push(...locks.splice(k, 1));
}

/**
 * Unlock pieces waiting for release for at most `ms` milliseconds (CudaContext.wait, before it
 * sleeps through a long kernel, or polls a kernel that runs long: the host has nothing else to do
 * then). Returns the milliseconds spent: 0 when nothing waits for release.
 */
export function unlockWhileWaiting(ms: number): number {
  if (releasing.length === 0) return 0;
  const t0 = performance.now();
  while (releasing.length > 0 && performance.now() - t0 < ms) {
    unlock(releasing.pop()!);
    unlockedInWaits++;
  }
  return performance.now() - t0;
}

function unlock(l: Lock): void {
  l.ctx.makeCurrent();
  l.ctx.drv.cuMemHostUnregister(l.view);
}

/** Copy `src` to `buf` at `offsetBytes`, waiting until it is there. `piece`: tests cut small inputs into several pieces. */
export async function uploadLarge(ctx: CudaContext, buf: DeviceBuffer, src: Uint8Array, offsetBytes = 0, piece = PIN_PIECE): Promise<void> {
  if (offsetBytes + src.byteLength > buf.bytes) throw new Error(`upload past the end of ${buf.name}`);
  await readyToLock(src.buffer);
  const s0 = src.byteOffset;
  const at = (a: number, b: number) => src.subarray(a - s0, b - s0); // buffer offsets → a view of src
  const dst = (a: number) => offsetBytes + (a - s0);
  const pageable: Array<[number, number]> = []; // buffer ranges copied synchronously at the end
  let queued = false;
  try {
    for (const run of lockedRuns(ctx, src, piece)) {
      if (!run.view) {
        pageable.push([run.a, run.b]);
        continue;
      }
      ctx.uploadAsync(buf, run.view, dst(run.a), ctx.stream);
      queued = true;
      if (!run.fresh) continue;
      if (interruptSignal.aborted) throw new InterruptedError();
      await yieldImmediate(); // other GPUs lock and queue their pieces meanwhile
    }
    if (queued) await ctx.finish();
  } catch (e) {
    if (queued) drain(ctx); // the copies must be over before their pages can be unlocked
    throw e;
  }
  for (const [a, b] of pageable) {
    for (let k = a; k < b; k += SYNC_CHUNK) {
      ctx.upload(buf, at(k, Math.min(b, k + SYNC_CHUNK)), dst(k));
      if (interruptSignal.aborted) throw new InterruptedError();
      if (b - a > SYNC_CHUNK) await yieldImmediate();
    }
  }
}

/**
 * Copy `dst.byteLength` bytes of `buf` from `offsetBytes` into `dst`, the copy engine writing dst's
 * own pages, locked as uploadLarge locks a source (lockedRuns: what is left unlocked is copied
 * through the driver's staging). Through a staging buffer of ours the host would copy every byte
 * once more, on this thread. The locks join the context's others: unlocked on a thread once
 * uploads are over (unlockOffThread), or at close. False, with nothing copied, where this context
 * does not lock (the caller stages the copy).
 */
export async function downloadLarge(ctx: CudaContext, dst: Uint8Array, buf: DeviceBuffer, offsetBytes = 0, piece = PIN_PIECE): Promise<boolean> {
  if (offsetBytes + dst.byteLength > buf.bytes) throw new Error(`download past the end of ${buf.name}`);
  if (!ctx.pinCopies) return false;
  await readyToLock(dst.buffer);
  const s0 = dst.byteOffset;
  for (const run of lockedRuns(ctx, dst, piece)) {
    for (let k = run.a; k < run.b; k += SYNC_CHUNK) ctx.download(dst.subarray(k - s0, Math.min(run.b, k + SYNC_CHUNK) - s0), buf, offsetBytes + (k - s0));
    if (interruptSignal.aborted) throw new InterruptedError();
    if (run.fresh) await yieldImmediate(); // other GPUs lock and copy their pieces meanwhile
  }
  return true;
}

/** Before `buffer` is locked: the unlocks handed to a thread are over, and its locks released but not yet unlocked are unlocked (a new lock must not overlap one). */
async function readyToLock(buffer: ArrayBufferLike): Promise<void> {
  await unlocksSettled();
  for (let k = releasing.length - 1; k >= 0; k--) if (releasing[k].buffer === buffer) unlock(releasing.splice(k, 1)[0]);
}

/** Bytes [a, b) of a buffer (its offsets) to copy: their locked view where locked, and whether lockedRuns just locked them. */
interface Run {
  a: number;
  b: number;
  view?: Uint8Array;
  fresh: boolean;
}

/**
 * The bytes of `bytes` as the runs a large copy takes, in order: a range already locked as it is;
 * the rest locked a piece at a time as the runs are taken, each piece clear of every other lock by
 * PIN_GAP (the PIN_GAP after each piece, and a piece the driver will not lock, left pageable), so
 * that no page is ever locked twice: not by two pieces, nor by two GPUs whose ranges meet inside one.
 */
function* lockedRuns(ctx: CudaContext, bytes: Uint8Array, piece: number): Generator<Run> {
  const { buffer } = bytes, s0 = bytes.byteOffset, s1 = s0 + bytes.byteLength;
  const at = (a: number, b: number) => bytes.subarray(a - s0, b - s0);
  for (const [a, b, locked] of segments(buffer, s0, s1)) {
    if (locked) {
      yield { a, b, view: at(a, b), fresh: false };
      continue;
    }
    let p = a === s0 && !touchesLock(buffer, a) ? a : a + PIN_GAP;
    yield { a, b: Math.min(b, p), fresh: false };
    for (; p < b; p += piece) {
      const end = Math.min(b, p + piece);
      const view = end - PIN_GAP > p && ctx.pinCopies ? lock(ctx, buffer, p, end - PIN_GAP, at(p, end - PIN_GAP)) : undefined;
      if (!view) {
        yield { a: p, b: end, fresh: false };
        continue;
      }
      yield { a: p, b: end - PIN_GAP, view, fresh: true };
      yield { a: end - PIN_GAP, b: end, fresh: false };
    }
  }
}

/** The unlocks handed to a libuv thread (unlockOffThread), one after another; settled when they are over. */
let offThread: Promise<void> = Promise.resolve();
/** Pieces unlocked on a thread so far, and the milliseconds from the first handed over to the last done: -v says them at close. */
const onThread = { pieces: 0, ms: 0 };

/**
 * `ctx`'s uploads are over (its stream drained, nothing large will be copied from the host's pages
 * again: compress measures quality and writes the file next): everything it locked is unlocked
 * now, one piece after another on one of libuv's threads (driver.hostUnregisterAsync), while this
 * thread works. The driver takes unlocks one at a time whatever thread asks, and an unlock under
 * way holds up the GPU's work (passRuns), so they go where the GPU has little left to do and the
 * host much: teardown then waits only for what is left (unlocksSettled). One thread, so that the
 * file's writes still find libuv's other threads free. Where the driver cannot call off the thread (or
 * no address can be had), the locks stay for close (unlockAll).
 */
export function unlockOffThread(ctx: CudaContext): void {
  const unlockAsync = ctx.drv.hostUnregisterAsync, c = libc();
  if (!unlockAsync || !c) return;
  const mine: Lock[] = [];
  for (const list of [releasing, locks]) for (let k = list.length - 1; k >= 0; k--) if (list[k].ctx === ctx) mine.push(...list.splice(k, 1));
  if (mine.length === 0) return;
  const t0 = performance.now();
  // A failed unlock leaves its pages locked until the process ends: slower for others, never wrong;
  // so a failure is said (-v) and the chain goes on, and never rejects (close and uploads wait on it).
  const failed = (e: unknown) => log().debug(`${ctx.where}: unlocking host pages on a thread failed (${e})`);
  offThread = offThread.then(async () => {
    for (const l of mine) {
      try {
        const status = await new Promise<number>((done) => unlockAsync(c.addressOf(l.view), done));
        if (status !== CU.SUCCESS) failed(describeStatus(ctx.drv, status));
        else onThread.pieces++;
      } catch (e) {
        failed((e as Error).message);
      }
    }
    onThread.ms += performance.now() - t0;
  });
}

/** Once the unlocks handed to a thread are over: before a context closes, or anything is locked again. */
export function unlocksSettled(): Promise<void> {
  return offThread;
}

/** "N unlocked on a thread in M ms" for -v, or '' when none were. */
export const unlockedOnThread = (): string => (onThread.pieces ? `, ${onThread.pieces} unlocked on a thread in ${onThread.ms.toFixed(0)} ms` : '');

/** Pieces unlocked so far in waits (unlockWhileWaiting), all contexts: -v says it at close. */
let unlockedInWaits = 0;
export const piecesUnlockedInWaits = (): number => unlockedInWaits;

/** Unlock what `ctx` locked (CudaContext.close, after its work is over). Returns the pieces it unlocked. */
export function unlockAll(ctx: CudaContext): number {
  let count = 0;
  for (let k = releasing.length - 1; k >= 0; k--) {
    if (releasing[k].ctx !== ctx) continue;
    ctx.drv.cuMemHostUnregister(releasing[k].view); // not yet reached in a wait
    releasing.splice(k, 1);
    count++;
  }
  for (let k = locks.length - 1; k >= 0; k--) {
    if (locks[k].ctx !== ctx) continue;
    ctx.drv.cuMemHostUnregister(locks[k].view);
    locks.splice(k, 1);
    count++;
  }
  return count;
}

/** Milliseconds the host has spent in lock calls (cuMemHostRegister), all contexts: -v says an upload's share. */
let lockMs = 0;
export const lockMilliseconds = (): number => lockMs;

/** Host bytes locked now (tests). */
export function lockedBytes(): number {
  return [...locks, ...releasing].reduce((s, l) => s + l.end - l.start, 0);
}

/** [s0, s1) of `buffer` cut where locks begin and end: [a, b, locked] in order. */
function segments(buffer: ArrayBufferLike, s0: number, s1: number): Array<[number, number, boolean]> {
  const mine = locks.filter((l) => l.buffer === buffer && l.end > s0 && l.start < s1).sort((x, y) => x.start - y.start);
  const out: Array<[number, number, boolean]> = [];
  let p = s0;
  for (const l of mine) {
    if (l.start > p) out.push([p, l.start, false]);
    out.push([Math.max(p, l.start), Math.min(s1, l.end), true]);
    p = Math.min(s1, l.end);
  }
  if (p < s1) out.push([p, s1, false]);
  return out;
}

/** Whether a lock of `buffer` ends within PIN_GAP before `a` (locking from `a` could share its page). */
function touchesLock(buffer: ArrayBufferLike, a: number): boolean {
  return locks.some((l) => l.buffer === buffer && l.end <= a && l.end > a - PIN_GAP);
}

/** Bytes [start, end) of `buffer` (`view`), locked for every context; undefined when the driver refuses (then it is not asked again in this context). */
function lock(ctx: CudaContext, buffer: ArrayBufferLike, start: number, end: number, view: Uint8Array): Uint8Array | undefined {
  ctx.makeCurrent();
  const t = performance.now();
  const st = ctx.drv.cuMemHostRegister_v2(view, view.byteLength, PORTABLE);
  lockMs += performance.now() - t;
  if (st === CU.SUCCESS) {
    locks.push({ buffer, start, end, ctx, view });
    return view;
  }
  ctx.pinCopies = false;
  log().debug(`${ctx.where}: page-locking host memory refused (${describeStatus(ctx.drv, st)}): copies from pageable memory`);
  return undefined;
}

function drain(ctx: CudaContext): void {
  try {
    ctx.drainBlocking();
  } catch {
    // a context that cannot even wait: its close unlocks all the same
  }
}
