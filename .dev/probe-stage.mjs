// Device probe (session 11; needs .dev/tried/staged-upload.diff applied): staged uploads (backend/cuda/staged.ts) of 8 GiB from a huge-page host
// buffer to one GPU, by staging-buffer size and lanes, against memcpy alone on libuv's threads and
// against page-locking the buffer (pin.ts). Some windows of the device copy are checked.
import { createCudaBackend } from '../dist/backend/cuda/index.js';
import { uploadStaged, staged } from '../dist/backend/cuda/staged.js';
import { uploadLarge } from '../dist/backend/cuda/pin.js';
import { hugeSharedBuffer } from '../dist/vectors/huge-pages.js';
import { libc } from '../dist/vectors/libc.js';
const GiB = 2 ** 30, total = 8 * GiB, view = 2 * GiB;
const sab = hugeSharedBuffer(total);
// Typed arrays stop at 4 GiB here: the buffer is handled in views of 2 GiB.
const host = { subarray: (a, b) => new Uint8Array(sab, a, b - a) };
for (let off = 0; off < total; off += view) {
  const v = host.subarray(off, off + view);
  for (let k = 0; k < view; k += 1 << 20) v[k] = ((off + k) >> 20) & 255, v[k + 777] = 3;
}
const c = libc();
for (const lanes of [1, 4, 8, 16]) {
  const dsts = Array.from({ length: lanes }, () => new Uint8Array(32 * 2 ** 20).fill(1));
  const da = dsts.map((d) => c.addressOf(d)), sa = c.addressOf(host.subarray(0, view));
  const t = performance.now();
  await Promise.all(da.map(async (d, k) => { for (let i = k; i < (2 * GiB) / 2 ** 25; i += lanes) await c.copyOnThread(d, sa + BigInt(i * 2 ** 25), 2 ** 25); }));
  console.log(`memcpy alone, ${lanes} lanes of 32 MiB: ${((2 * GiB) / (performance.now() - t) / 1e6).toFixed(1)} GB/s`);
}
const b = await createCudaBackend(0, {});
const dev = b.ctx.pool.alloc('probe', total);
const check = () => {
  for (const at of [0, 3 * GiB + 12345, total - (1 << 20)]) {
    const back = new Uint8Array(1 << 20);
    b.ctx.download(back, dev, at);
    if (Buffer.compare(back, host.subarray(at, at + (1 << 20))) !== 0) return ' WRONG BYTES';
  }
  return '';
};
for (const [slot, lanes] of [[32, 8], [32, 16], [16, 16], [8, 16], [16, 12], [64, 16]]) {
  b.ctx.fill(dev, 0);
  const s0 = { ...staged }, t = performance.now();
  for (let off = 0; off < total; off += view) await uploadStaged(b.ctx, dev, host.subarray(off, off + view), off, slot * 2 ** 20, lanes);
  const ms = performance.now() - t;
  console.log(`staged ${lanes} x ${slot} MiB: ${(total / ms / 1e6).toFixed(1)} GB/s (memcpy ${(staged.copyMs - s0.copyMs).toFixed(0)} ms, waits ${(staged.waitMs - s0.waitMs).toFixed(0)} ms over lanes)${check()}`);
}
b.ctx.stageCopies = false;
for (let r = 0; r < 2; r++) {
  const t = performance.now();
  for (let off = 0; off < total; off += view) await uploadLarge(b.ctx, dev, host.subarray(off, off + view), off);
  console.log(`page-locked${r ? ' (already locked)' : ''}: ${(total / (performance.now() - t) / 1e6).toFixed(1)} GB/s${check()}`);
}
const t = performance.now();
await b.close();
console.log(`close (unlocking): ${(performance.now() - t).toFixed(0)} ms`);
