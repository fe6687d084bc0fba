// Re-encode a .vlc file's pq residuals a different way over the SAME anchors and assignments, and
// measure what a reader would get: MSE of the decoded vectors and recall@10 (the exact top-10 on the
// originals, the query left out, found among the decoded vectors), as bench/rate-distortion.mjs
// does. It tries ideas for a better residual code without retraining anchors (minutes per run).
//
// Variants (the codecs' own encodePq, src/codec-train/pq.ts, in each):
//   plain   M subspaces of `bits` bits, as `vlc compress --residual pq` codes them;
//   rotate  the same after a seeded random rotation of the whole space (Gram-Schmidt of a Gaussian
//           matrix): x and the anchors rotated alike, so residuals are rotated and distances kept;
//           a random rotation spreads a residual's variance evenly over PQ's subspaces.
//
// Usage: node bench/pq-reencode.mjs DATA.npy FILE.vlc QUERIES.json plain|rotate M BITS [ITERS]
//   DATA.npy the originals FILE.vlc was made from; QUERIES.json a JSON list of row numbers
//   (bench/rate-distortion.py's: numpy default_rng(1).choice(n, 500, replace=False)); ITERS caps
//   each codebook's annealing (default: the codec's). Prints one JSON line. Needs: npx tsc -p . (dist/).
import * as fs from 'node:fs';
import * as path from 'node:path';
import { fileURLToPath } from 'node:url';

const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..');
const lib = (p) => import(path.join(root, 'dist', p));
const { readDataset } = await lib('io/read.js');
const { smallF32 } = await lib('vectors/dataset.js');
const { createCpuBackend, knn } = await lib('backend/cpu/index.js');
const { readVlc } = await lib('io/vlc/file.js');
const { encodePq } = await lib('codec-train/pq.js');
const { Rng } = await lib('anneal/random.js');

const [dataPath, vlcPath, queriesPath, variant, subspaces, bits, iters] = process.argv.slice(2);
if (!['plain', 'rotate'].includes(variant)) throw new Error(`variant must be plain or rotate (got ${variant})`);
const ds = await readDataset(dataPath);
const { n, d } = ds;
const file = await readVlc(vlcPath);
const assign = Uint32Array.from({ length: n }, (_, i) => file.assignments[i]);
let x = smallF32(ds);
let anchors = file.anchors;
if (variant === 'rotate') {
  const R = randomRotation(d, new Rng(12345));
  x = rotateRows(R, x, n, d);
  anchors = rotateRows(R, anchors, anchors.length / d, d);
}

const backend = createCpuBackend({});
const started = performance.now();
const pq = await encodePq({ x, n, d, anchors, assign }, backend, {
  subspaces: Number(subspaces), bits: Number(bits), seed: file.manifest.seed ?? 1234, ...(iters ? { maxIters: Number(iters) } : {}),
});
const seconds = (performance.now() - started) / 1000;
const decoded = new Float32Array(n * d);
for (let i = 0; i < n; i++) {
  decoded.set(anchors.subarray(assign[i] * d, (assign[i] + 1) * d), i * d);
  pq.addTo(i, decoded, i * d);
}
let sq = 0;
for (let i = 0; i < n * d; i++) sq += (x[i] - decoded[i]) ** 2;

const queries = JSON.parse(fs.readFileSync(queriesPath, 'utf8'));
const q = new Float32Array(queries.length * d);
queries.forEach((row, r) => q.set(x.subarray(row * d, (row + 1) * d), r * d));
const topTen = async (base) => {
  const res = await knn(base, n, q, queries.length, d, 11);
  return queries.map((self, r) => Array.from(res.ids.subarray(r * 11, r * 11 + 11)).filter((j) => j !== self).slice(0, 10));
};
const truth = await topTen(x);
let hits = 0;
(await topTen(decoded)).forEach((ids, r) => {
  const want = new Set(truth[r]);
  for (const id of ids) if (want.has(id)) hits++;
});
await backend.close();
process.stdout.write(
  JSON.stringify({ variant, M: Number(subspaces), bits: Number(bits), iters: iters ? Number(iters) : 'default', mse: sq / n,
    recall_at_10: hits / (queries.length * 10), encode_seconds: seconds }) + '\n',
);

/** d×d orthogonal matrix (rows orthonormal): Gram-Schmidt of a seeded Gaussian matrix. */
function randomRotation(d, rng) {
  const R = new Float64Array(d * d);
  for (let i = 0; i < d * d; i++) R[i] = Math.sqrt(-2 * Math.log(1 - rng.next())) * Math.cos(2 * Math.PI * rng.next());
  for (let i = 0; i < d; i++) {
    const row = R.subarray(i * d, (i + 1) * d);
    for (let j = 0; j < i; j++) {
      const prev = R.subarray(j * d, (j + 1) * d);
      let dot = 0;
      for (let k = 0; k < d; k++) dot += row[k] * prev[k];
      for (let k = 0; k < d; k++) row[k] -= dot * prev[k];
    }
    let norm = 0;
    for (let k = 0; k < d; k++) norm += row[k] * row[k];
    norm = Math.sqrt(norm);
    for (let k = 0; k < d; k++) row[k] /= norm;
  }
  return R;
}

/** R applied to each of `count` rows of a (count×d). */
function rotateRows(R, a, count, d) {
  const out = new Float32Array(count * d);
  for (let r = 0; r < count; r++)
    for (let i = 0; i < d; i++) {
      let s = 0;
      for (let k = 0; k < d; k++) s += R[i * d + k] * a[r * d + k];
      out[r * d + i] = s;
    }
  return out;
}
