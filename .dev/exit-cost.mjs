// How long a process lives after its last line, by how it leaves: natural (Node tears down), process.exit,
// terminating the workers first, or libc _exit (koffi). It holds GB shared GiB of touched buffers, W idle
// unref'd workers and a 2M-object heap, like a compress near its end. Driven by .dev/exit-cost.py.
// Usage: node .dev/exit-cost.mjs natural|exit|term|_exit W GB
import { Worker } from 'node:worker_threads';
import { createRequire } from 'node:module';
const mode = process.argv[2], W = Number(process.argv[3] ?? 8), GB = Number(process.argv[4] ?? 1);
const bufs = [];
for (let g = 0; g < GB; g++) { const b = new SharedArrayBuffer(2 ** 30); const u = new Int32Array(b); for (let i = 0; i < u.length; i += 1024) u[i] = 1; bufs.push(b); }
const heap = []; for (let i = 0; i < 2e6; i++) heap.push({ a: i, b: [i] });
const ws = [];
for (let i = 0; i < W; i++) { const w = new Worker(`const a=[]; for(let i=0;i<3e5;i++) a.push({i}); globalThis.a=a; require('node:worker_threads').parentPort.postMessage(1)`, { eval: true }); await new Promise(r => w.once('message', r)); w.unref(); ws.push(w); }
console.log(JSON.stringify({ ready: true }));
if (mode === 'exit') process.exit(0);
if (mode === '_exit') { const koffi = createRequire(import.meta.url)('koffi'); koffi.load('libc.so.6').func('void _exit(int)')(0); }
if (mode === 'term') { await Promise.all(ws.map(w => w.terminate())); process.exit(0); }
