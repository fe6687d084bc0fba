// The vlc half of bench/rate-distortion.py: on one data set, learn the anchors once (CPU backend,
// the quantizer's defaults), then write a .vlc file with each residual codec — none, pq at each
// byte budget (`--bytes B`: the largest M whose whole file fits), bits at each of its budgets
// (`--residual bits --bytes B`), ec at each of its budgets (`--residual ec --bytes B`), int4, int8 — read it back and
// measure what a user gets: true bytes per vector (the file size / n, every section and header),
// MSE of the decoded vectors, and recall@10 of the exact top-10 (squared L2 on the originals, the
// query left out) among the decoded vectors, for the queries given.
//
// The codecs are the ones `vlc compress --residual ...` runs (the same functions); only the anchors
// are shared between them, as the same seed would give the same anchors in every run.
//
// Usage: node bench/rate-distortion.mjs DATA.npy --m M --queries Q.json --budgets 8,16,34 [--bits 8,4]
//          [--bits-budgets 34,400] [--ec-budgets 30,60] [--dims-budgets 34:144,66:192] [--iters N] [--save DIR]
//          [--residual-out R.f32] > out.json
// --residual-out writes x − anchor (n × d raw f32) for bench/ec-rd.py's bound.
// --dims-budgets B:k runs pq on k principal directions (`--residual pq --pq-dims k --bytes B`).
// --ec-axes codes ec on the plain axes only (no principal directions: their plan, an eigendecomposition
// of the d × d covariance, is rejected at these budgets on some sets and costs minutes a file).
// --iters caps the anchors' annealing iterations (default: the quantizer's); --save keeps each
// .vlc file in DIR (e.g. for bench/search-speed.py).
// Needs: npx tsc -p . (dist/).
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { fileURLToPath } from 'node:url';

const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..');
const lib = (p) => import(path.join(root, 'dist', p));
const { readDataset } = await lib('io/read.js');
const { smallF32 } = await lib('vectors/dataset.js');
const { createCpuBackend, knn } = await lib('backend/cpu/index.js');
const { anneal } = await lib('anneal/index.js');
const { DEFAULT_CONFIG } = await lib('anneal/config.js');
const { storedAnchors } = await lib('io/vlc/format.js');
const { writeVlc, readVlc } = await lib('io/vlc/file.js');
const { reconstruct } = await lib('io/vlc/reconstruct.js');
const { fixedPlan, encodeWith } = await lib('codec-registry/index.js');
const { fileBytes } = await lib('io/vlc/size.js');
const { VERSION } = await lib('version.js');

const args = process.argv.slice(2);
const flag = (name, fallback) => {
  const i = args.indexOf(name);
  return i < 0 ? fallback : args[i + 1];
};
const dataPath = args[0];
const m = Number(flag('--m'));
const queries = JSON.parse(fs.readFileSync(flag('--queries'), 'utf8'));
const budgets = flag('--budgets', '').split(',').filter(Boolean).map(Number);
const bitsList = flag('--bits', '8').split(',');
const bitsBudgets = flag('--bits-budgets', '').split(',').filter(Boolean).map(Number);
const ecBudgets = flag('--ec-budgets', '').split(',').filter(Boolean).map(Number);
const residualOut = flag('--residual-out');
const dimsBudgets = flag('--dims-budgets', '').split(',').filter(Boolean).map((s) => s.split(':').map(Number));
const iters = flag('--iters');
const saveDir = flag('--save');
const ecAxes = args.includes('--ec-axes');
const { encodeEc } = await lib('codecs/ec/encode.js');

/** --ec-axes: the codec's byte-target coding (codec-registry/ec.ts), the principal directions left out. */
async function ecOnAxes(plan) {
  let target = plan.payload;
  for (let attempt = 0; ; attempt++) {
    const out = await encodeEc(input, { payloadBytes: target }, { rotate: false });
    const got = out.residuals.payloadBytes();
    if (got <= plan.payload || attempt === 4) return out;
    target -= got - plan.payload + 64;
  }
}

const { setMaxViewBytesForTests } = await lib('vectors/dataset.js');
// This bench holds the whole set as one f32 array (x, the decoded rows): past vlc's 1 GiB view
// limit (gm1m384 is 1.5 GB) it raises the limit to what one V8 typed array holds.
setMaxViewBytesForTests(2 ** 32 - 4);
const ds = await readDataset(dataPath);
const x = smallF32(ds);
const { n, d } = ds;
const backend = createCpuBackend({});
const cfg = { ...DEFAULT_CONFIG, m, ...(iters ? { maxIters: Number(iters) } : {}) };
const t0 = performance.now();
const engine = await backend.open(ds, m);
// Progress on stderr (seconds since the anchors began): a long run can be estimated from its first iterations.
const since = () => ((performance.now() - t0) / 1000).toFixed(1);
const trained = await anneal(engine, cfg, {
  onInitTry: (i, tries) => process.stderr.write(`anchors: init try ${i + 1}/${tries} at ${since()} s\n`),
  onIter: (rec, max) => process.stderr.write(`anchors: iteration ${rec.iter}/${max} at ${since()} s\n`),
  onFinalPass: () => process.stderr.write(`anchors: final pass at ${since()} s\n`),
});
await engine.dispose();
const anchorSeconds = (performance.now() - t0) / 1000;
process.stderr.write(`anchors: done in ${anchorSeconds.toFixed(1)} s\n`);
const anchors = storedAnchors(trained.anchors, 'f16');
const input = { x, n, d, anchors, assign: trained.assignments };

// Exact top-10 of every query among the originals, the query left out.
const nq = queries.length;
const q = new Float32Array(nq * d);
queries.forEach((i, r) => q.set(x.subarray(i * d, (i + 1) * d), r * d));
const truth = await topTen(x);

async function topTen(base) {
  const res = await knn(base, n, q, nq, d, 11);
  return queries.map((self, r) => Array.from(res.ids.subarray(r * 11, r * 11 + 11)).filter((j) => j !== self).slice(0, 10));
}

const manifest = {
  n, d, m, metric: 'l2', anchorDtype: 'f16', residual: 'none',
  input: { dtype: ds.dtype, dropped: 0 },
  training: { energy: trained.energy, iterations: trained.iterations, converged: trained.converged, init: 'kmeans++' },
  config: { ...cfg }, seed: cfg.seed, tool: { name: 'vlc', version: VERSION }, device: 'cpu',
};
const tmp = fs.mkdtempSync(path.join(os.tmpdir(), 'vlc-rd-'));
const rows = [];
const plans = [
  { method: 'vlc none', flags: { residual: 'none' } },
  ...bitsList.flatMap((bits) =>
    budgets.map((B) => ({ method: `vlc pq${bits === '4' ? ' 4-bit' : ''} --bytes ${B}`, flags: { residual: 'pq', pqBits: Number(bits), bytes: B } })),
  ),
  ...dimsBudgets.map(([B, k]) => ({ method: `vlc pq --pq-dims ${k} --bytes ${B}`, flags: { residual: 'pq', pqDims: k, bytes: B } })),
  ...bitsBudgets.map((B) => ({ method: `vlc bits --bytes ${B}`, flags: { residual: 'bits', bytes: B } })),
  // int4 and int8 before ec: they take seconds, ec minutes on a large set (a run stopped midway keeps them).
  { method: 'vlc int4', flags: { residual: 'int4' } },
  { method: 'vlc int8', flags: { residual: 'int8' } },
  ...ecBudgets.map((B) => ({ method: `vlc ec --bytes ${B}`, flags: { residual: 'ec', bytes: B } })),
];
for (const { method, flags } of plans) {
  let plan;
  try {
    // The file's size from its shape (io/vlc/size.ts); the manifest as written holds a little more
    // than this one (its quality figures): 1 KiB of room for them. The bytes reported are the file's.
    const manifestBytes = Buffer.byteLength(JSON.stringify({ ...manifest, residual: 'pq' })) + 1024;
    plan = fixedPlan(flags, { n, d, m, fileBytes: (payload) => fileBytes({ n, d, m, anchorDtype: 'f16', residualPayloadBytes: payload, manifestBytes }) });
  } catch (e) {
    process.stderr.write(`${method}: ${e.message}\n`);
    continue;
  }
  const t = performance.now();
  const coded = plan.mode === 'none' ? undefined : ecAxes && plan.mode === 'ec' ? await ecOnAxes(plan) : await encodeWith(plan, input, { backend, seed: cfg.seed, hooks: {} });
  const seconds = (performance.now() - t) / 1000;
  const file = path.join(tmp, 'x.vlc');
  const bytes = await writeVlc(file, {
    manifest: { ...manifest, residual: plan.mode, ...(coded ? { residualEnergy: coded.residualEnergy } : {}) },
    anchors: trained.anchors,
    assignments: trained.assignments,
    residuals: coded?.residuals,
  });
  const decoded = reconstruct(await readVlc(file));
  if (saveDir) fs.copyFileSync(file, path.join(saveDir, `${method.replace(/^vlc /, '').replace(/[^a-z0-9]+/gi, '-')}.vlc`));
  fs.rmSync(file);
  let sq = 0;
  for (let i = 0; i < decoded.length; i++) sq += (x[i] - decoded[i]) ** 2;
  // The residual left by the anchors (x − anchor as stored), for a bound computed elsewhere.
  // (A loop, not Float32Array.from(x, f): that lists every value in a JS array first, past V8's
  // array limit at 1,000,000 x 384.)
  if (residualOut && plan.mode === 'none') {
    const r = new Float32Array(x.length);
    for (let i = 0; i < x.length; i++) r[i] = x[i] - decoded[i];
    fs.writeFileSync(residualOut, r);
  }
  const found = await topTen(decoded);
  let hits = 0;
  found.forEach((ids, r) => {
    const want = new Set(truth[r]);
    for (const id of ids) if (want.has(id)) hits++;
  });
  const row = {
    method, bytes_per_vector: bytes / n, mse: sq / n, recall_at_10: hits / (nq * 10), encode_seconds: seconds,
    ...(plan.mode === 'ec' ? ecFacts(coded.residuals.layout) : {}),
    ...(plan.mode === 'pq' ? { pq_subspaces: plan.subspaces, pq_bits: plan.bits, ...(plan.dims ? { pq_dims: plan.dims } : {}) } : {}),
  };
  rows.push(row);
  process.stderr.write(`${JSON.stringify(row)}\n`);
}
fs.rmSync(tmp, { recursive: true, force: true });

/** An ec row's layout: coded coordinates, along k principal directions or the axes, its step. */
function ecFacts(L) {
  return { ec_coded: L.dims.length, ec_rotated_k: L.rotation ? L.rotation.k : 0, ec_step: L.dims.length ? L.steps[L.dims[0]] : 0 };
}
await backend.close();
process.stdout.write(
  JSON.stringify({
    n, d, m, anchor_energy: trained.energy, anchor_seconds: anchorSeconds, iterations: trained.iterations, converged: trained.converged,
    max_iterations: cfg.maxIters, rows,
  }) + '\n',
);
