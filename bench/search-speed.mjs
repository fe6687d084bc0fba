// The vlc half of bench/search-speed.py: `vlc search`'s work, timed in parts, on one .vlc file —
// read the file, build the search index (inverted lists; pq: each vector's query-free term), read
// the queries, then search them at each nprobe (src/search/pq-search.ts on every core: anchors
// ranked on the SIMD kernel, wasm lookup tables, lists scanned with asymmetric distances, exact
// top-k; the worker threads are started before the index is built, as `vlc search` does, and
// kept between the searches). Writes
// each nprobe's ids (nq × k int32, little-endian) to OUTDIR/ids-<nprobe>.i32 and prints one JSON
// line of timings: wall-clock and CPU seconds (all threads; on a shared machine the wall clock
// mostly measures the other jobs).
//
// Usage: node bench/search-speed.mjs INDEX.vlc QUERIES.npy OUTDIR --nprobe 1,2,4 [-k 10] [--threads T]
// Needs: npx tsc -p . (dist/).
import * as fs from 'node:fs';
import * as path from 'node:path';
import { fileURLToPath } from 'node:url';

const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..');
const lib = (p) => import(path.join(root, 'dist', p));
const { readVlc } = await lib('io/vlc/file.js');
const { readDataset } = await lib('io/read.js');
const { smallF32 } = await lib('vectors/dataset.js');
const { cpuKnn, prewarmKnn } = await lib('backend/cpu/index.js');
const { searchCompressed, vlcSearchIndex } = await lib('search/index.js');

const [indexPath, queriesPath, outDir, ...rest] = process.argv.slice(2);
const flag = (name, fallback) => {
  const i = rest.indexOf(name);
  return i < 0 ? fallback : rest[i + 1];
};
const nprobes = flag('--nprobe', '1,2,4,8,16,32').split(',').map(Number);
const k = Number(flag('-k', '10'));
const threads = flag('--threads') === undefined ? undefined : Number(flag('--threads'));

const seconds = (t) => (performance.now() - t) / 1000;
let t = performance.now();
const file = await readVlc(indexPath);
const readSeconds = seconds(t);
t = performance.now();
const qs = await readDataset(queriesPath);
const q = smallF32(qs);
const queriesSeconds = seconds(t);
t = performance.now();
prewarmKnn(); // as `vlc search` does: the workers start while the index is built
const index = vlcSearchIndex(file);
const indexSeconds = seconds(t);
const runs = [];
for (const nprobe of nprobes) {
  t = performance.now();
  const cpu = process.cpuUsage(); // this process, every thread (the search's workers and the k-NN's)
  const res = await searchCompressed(index, q, qs.n, { k, nprobe, threads }, cpuKnn);
  const s = seconds(t);
  const used = process.cpuUsage(cpu);
  const cpuSeconds = (used.user + used.system) / 1e6;
  fs.writeFileSync(path.join(outDir, `ids-${nprobe}.i32`), new Uint8Array(res.ids.buffer, res.ids.byteOffset, res.ids.byteLength));
  runs.push({ nprobe, search_seconds: s, queries_per_second: qs.n / s, cpu_seconds: cpuSeconds, queries_per_cpu_second: qs.n / cpuSeconds });
  process.stderr.write(`vlc nprobe ${nprobe}: ${s.toFixed(3)} s\n`);
}
const { n, d, m, residual } = file.manifest;
process.stdout.write(
  JSON.stringify({
    n, d, m, residual, pq: file.residuals?.mode === 'pq' ? { M: file.residuals.M, bits: file.residuals.bits } : null,
    file_bytes: file.fileBytes, queries: qs.n, k, threads: threads ?? null,
    read_seconds: readSeconds, index_seconds: indexSeconds, queries_read_seconds: queriesSeconds, runs,
  }) + '\n',
);
