// The read phase against the reader's thread cap (io/readers/parallel-read.ts, 8 by default): reads
// a large .npy with at most THREADS threads and prints one line (wall and CPU seconds, GB/s).
// Usage (repository root, dist built): node .dev/read-threads.mjs FILE THREADS
import { setParallelReadForTests } from '../dist/io/readers/parallel-read.js';
import { readDataset } from '../dist/io/read.js';

const [file, threads] = [process.argv[2], Number(process.argv[3])];
setParallelReadForTests(undefined, undefined, threads);
const c0 = process.cpuUsage();
const t0 = performance.now();
const ds = await readDataset(file);
const s = (performance.now() - t0) / 1000;
const c = process.cpuUsage(c0);
const bytes = ds.n * ds.d * (ds.dtype === 'f16' ? 2 : 4);
console.log(`read ${ds.n} x ${ds.d} ${ds.dtype} with at most ${threads} threads: ${s.toFixed(3)} s, ${(bytes / 1e9 / s).toFixed(2)} GB/s, cpu ${((c.user + c.system) / 1e6).toFixed(2)} s`);
process.exit(0); // the store's pages are the system's to free
