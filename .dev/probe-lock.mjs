// Device probe (session 10): can cuMemHostRegister / cuMemHostUnregister run on libuv's threads
// (koffi .async, no current context there), and do they then run in parallel? A 3 GiB buffer on
// touched 4 KiB pages (and madvised huge pages: HUGE=1), 12 pieces of 256 MiB: locked and unlocked
// one after another on the JS thread (context current), then all at once on threads. Prints JSON.
// Usage: UV_THREADPOOL_SIZE=16 node .dev/probe-lock.mjs
import { createRequire } from 'node:module';
const koffi = createRequire(import.meta.url)('koffi');
const cu = koffi.load('libcuda.so.1');
const libc = koffi.load('libc.so.6');
const f = (p) => cu.func(p);
const cuInit = f('int cuInit(unsigned int flags)');
const cuDeviceGet = f('int cuDeviceGet(_Out_ int *dev, int ordinal)');
const retain = f('int cuDevicePrimaryCtxRetain(_Out_ uint64_t *ctx, int dev)');
const setCurrent = f('int cuCtxSetCurrent(uint64_t ctx)');
const reg = f('int cuMemHostRegister_v2(uint64_t p, size_t bytes, unsigned int flags)');
const unreg = f('int cuMemHostUnregister(uint64_t p)');
const addressOf = libc.func('uint64_t memset(void *p, int c, size_t n)');
const madvise = libc.func('int madvise(uint64_t addr, size_t len, int advice)');
const out = {};
cuInit(0);
const dev = [0], ctx = [0n];
cuDeviceGet(dev, 0);
retain(ctx, dev[0]);
setCurrent(ctx[0]);
const PIECE = 256 * 2 ** 20, PIECES = 12, GAP = 2 * 2 ** 20;
const sab = new SharedArrayBuffer(PIECES * (PIECE + GAP) + GAP);
const base = BigInt(addressOf(new Uint8Array(sab, 0, 1), 0, 0));
if (process.env.HUGE === '1') {
  const H = 2n * 2n ** 20n, lo = (base + H - 1n) & ~(H - 1n);
  out.madvise = madvise(lo, Number(BigInt(sab.byteLength) - (lo - base)) & ~(2 ** 21 - 1), 14);
}
new Uint8Array(sab).fill(1);
const align = (a) => (a + 4095n) & ~4095n;
const pieces = Array.from({ length: PIECES }, (_, k) => align(base + BigInt(k * (PIECE + GAP))));
const ms = (t) => +(performance.now() - t).toFixed(1);
for (const round of [1, 2]) {
  let t = performance.now();
  const s1 = pieces.map((p) => reg(p, PIECE, 1));
  const lockSync = ms(t);
  t = performance.now();
  const s2 = pieces.map((p) => unreg(p));
  const unlockSync = ms(t);
  t = performance.now();
  const s3 = await Promise.all(pieces.map((p) => new Promise((res) => reg.async(p, PIECE, 1, (e, st) => res(e ? String(e) : st)))));
  const lockThreads = ms(t);
  t = performance.now();
  const s4 = await Promise.all(pieces.map((p) => new Promise((res) => unreg.async(p, (e, st) => res(e ? String(e) : st)))));
  const unlockThreads = ms(t);
  const st = (a) => [...new Set(a)].join(',');
  out[`round${round}`] = { gib: (PIECES * PIECE) / 2 ** 30, lockSync, unlockSync, lockThreads, unlockThreads, status: { lockSync: st(s1), unlockSync: st(s2), lockThreads: st(s3), unlockThreads: st(s4) } };
}
out.threadpool = process.env.UV_THREADPOOL_SIZE;
console.log(JSON.stringify(out));
