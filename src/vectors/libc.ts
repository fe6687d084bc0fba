// The libc calls Node does not offer, reached through koffi (as the CUDA driver is): a buffer's
// address and madvise (huge-pages.ts). Loaded on first use; null where koffi or glibc cannot be had
// (callers then do without).
import { createRequire } from 'node:module';

export interface Libc {
  /** The address of a view's first byte (its data stays put: V8 never moves an ArrayBuffer's store). */
  addressOf(view: Uint8Array): bigint;
  madvise(address: bigint, bytes: number, advice: number): number;
}

let loaded: Libc | null | undefined;

export function libc(): Libc | null {
  if (loaded === undefined) loaded = load();
  return loaded;
}

function load(): Libc | null {
  if (process.platform !== 'linux') return null;
  try {
    const koffi = createRequire(import.meta.url)('koffi') as typeof import('koffi');
    const lib = koffi.load('libc.so.6');
    // memset(p, 0, 0) writes nothing and returns p: the view's address, which koffi does not otherwise give.
    const memset = lib.func('uint64_t memset(void *p, int c, size_t n)') as (p: Uint8Array, c: number, n: number) => bigint | number;
    const madvise = lib.func('int madvise(uint64_t addr, size_t len, int advice)') as (addr: bigint, len: number, advice: number) => number;
    return {
      addressOf: (view) => BigInt(memset(view, 0, 0)),
      madvise,
    };
  } catch {
    return null;
  }
}
