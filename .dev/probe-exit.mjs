// Device probe (session 11): what leaving page locks to the process's exit costs, against unlocking
// them at close. 8 GiB locked and uploaded (pin.ts), then `close` (CudaContext.close: unlocks) and
// exit, or exit at once (`exit`: the driver and kernel release at process teardown). Time the whole
// process from outside.
import { createCudaBackend } from '../dist/backend/cuda/index.js';
import { uploadLarge } from '../dist/backend/cuda/pin.js';
import { hugeSharedBuffer } from '../dist/vectors/huge-pages.js';
const GiB = 2 ** 30, total = 8 * GiB, view = 2 * GiB;
const sab = hugeSharedBuffer(total);
for (let off = 0; off < total; off += view) new Uint8Array(sab, off, view).fill(5);
const b = await createCudaBackend(0, { stageCopies: false });
const dev = b.ctx.pool.alloc('probe', total);
let t = performance.now();
for (let off = 0; off < total; off += view) await uploadLarge(b.ctx, dev, new Uint8Array(sab, off, view), off);
console.log(`${process.argv[2]}: locked and uploaded in ${(performance.now() - t).toFixed(0)} ms`);
t = performance.now();
if (process.argv[2] === 'close') await b.close();
console.log(`${process.argv[2]}: ${(performance.now() - t).toFixed(0)} ms to close; exiting at ${(performance.timeOrigin + performance.now()).toFixed(0)}`);
process.exit(0);
