// Large host buffers on 2 MiB pages (Linux transparent huge pages). Most distributions give huge
// pages only to memory whose program asks for them (madvise mode), and V8 never asks. On 4 KiB pages
// a buffer of tens of GiB costs a page fault per 4 KiB while the reader first fills it, a page
// walked per 4 KiB while the GPU driver locks it for copies (backend/cuda/pin.ts), and a page freed
// per 4 KiB when the process exits — after the last phase it reports, so a user's wall outgrew the
// phases. Asked for with madvise(MADV_HUGEPAGE) before the first write, the kernel maps the buffer
// 2 MiB at a time (bench/results/2026-11-28-h200x4-r4b.json measures the phases it changes).
// Only advice: the bytes, and what any code reads, are the same either way. VLC_HUGE_PAGES=0 turns it off.
import { readFileSync } from 'node:fs';
import { libc } from './libc.js';

/** Buffers smaller than this stay as V8 made them: too few pages to matter, and no FFI loaded. */
export const HUGE_PAGE_MIN_BYTES = 64 * 2 ** 20;
const HUGE = 2n * 2n ** 20n;
const MADV_HUGEPAGE = 14;

type Advise = (buffer: ArrayBufferLike, bytes: number) => boolean;
let advise: Advise | null | undefined;

/** What VLC_HUGE_PAGES asks (unset: on where the kernel offers huge pages), read once. */
function wanted(): boolean {
  const v = process.env.VLC_HUGE_PAGES;
  if (v === '0') return false;
  if (process.platform !== 'linux') return false;
  try {
    return !/\[never\]/.test(readFileSync('/sys/kernel/mm/transparent_hugepage/enabled', 'utf8'));
  } catch {
    return false; // no THP in this kernel
  }
}

/** madvise through libc (libc.ts), or null where it cannot be had. */
function load(): Advise | null {
  const c = wanted() ? libc() : null;
  if (!c) return null; // no koffi, no glibc: plain pages
  return (buffer, bytes) => {
    const at = addressOf(buffer);
    const lo = (at + HUGE - 1n) & ~(HUGE - 1n), hi = (at + BigInt(bytes)) & ~(HUGE - 1n);
    return hi > lo && c.madvise(lo, Number(hi - lo), MADV_HUGEPAGE) === 0;
  };
}

/** A buffer's address. */
function addressOf(buffer: ArrayBufferLike): bigint {
  return libc()!.addressOf(new Uint8Array(buffer, 0, 1));
}

/**
 * Asks for `buffer`'s first `bytes` (fresh, not yet written) on huge pages where the buffer is
 * large and the system offers them; whether the advice was taken. Never throws.
 */
export function adviseHugePages(buffer: ArrayBufferLike, bytes = buffer.byteLength): boolean {
  if (bytes < HUGE_PAGE_MIN_BYTES) return false;
  if (advise === undefined) advise = load();
  if (!advise) return false;
  try {
    return advise(buffer, bytes);
  } catch {
    return false;
  }
}

/** A fresh shared buffer of `bytes`, advised onto huge pages before anything writes it (adviseHugePages). */
export function hugeSharedBuffer(bytes: number): SharedArrayBuffer {
  const buffer = new SharedArrayBuffer(bytes);
  adviseHugePages(buffer, bytes);
  return buffer;
}

/** A fresh buffer for an array that may be large: hugeSharedBuffer from HUGE_PAGE_MIN_BYTES (a fault each 2 MiB when first written), a plain ArrayBuffer below. */
export function largeBuffer(bytes: number): ArrayBufferLike {
  return bytes >= HUGE_PAGE_MIN_BYTES ? hugeSharedBuffer(bytes) : new ArrayBuffer(bytes);
}

/**
 * Bytes of `buffer` the kernel maps on 2 MiB pages now: the AnonHugePages of the mappings of
 * /proc/self/smaps that it spans. Undefined where that cannot be known (huge pages not asked for,
 * no smaps) or not worth asking: a buffer below HUGE_PAGE_MIN_BYTES is never advised, and reading
 * smaps costs tens of milliseconds (a process's every mapping). For -v: page-locking memory on
 * 4 KiB pages costs the GPU driver far more than on 2 MiB ones (backend/cuda/pin.ts), and whether
 * the kernel could give them varies.
 */
export function hugePageBytes(buffer: ArrayBufferLike): number | undefined {
  if (advise === undefined) advise = load();
  if (!advise || buffer.byteLength < HUGE_PAGE_MIN_BYTES) return undefined;
  try {
    const at = addressOf(buffer);
    return smapsHugeBytes(readFileSync('/proc/self/smaps', 'utf8'), at, at + BigInt(buffer.byteLength));
  } catch {
    return undefined;
  }
}

/** The AnonHugePages (bytes) of the mappings in `smaps` (the text of /proc/PID/smaps) that overlap [lo, hi). */
export function smapsHugeBytes(smaps: string, lo: bigint, hi: bigint): number {
  let inside = false, bytes = 0;
  for (const line of smaps.split('\n')) {
    const range = /^([0-9a-f]+)-([0-9a-f]+) /.exec(line);
    if (range) {
      inside = BigInt('0x' + range[1]) < hi && BigInt('0x' + range[2]) > lo;
      continue;
    }
    const huge = inside && /^AnonHugePages:\s+(\d+) kB/.exec(line);
    if (huge) bytes += Number(huge[1]) * 1024;
  }
  return bytes;
}
