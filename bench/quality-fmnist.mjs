// Issue 30 item 2 on real images: does `--quality R` write a file no larger than the smallest codec
// (any mode, any size) that reaches R? Fashion-MNIST (Debian's dataset-fashion-mnist), its first
// N training images (default 20,000: the recall sample is then every vector, and the 2-core CPU
// runs it in minutes), raw pixel values as f32.
//   1. `vlc compress --device cpu --quality R --json` for each R: the codec, its bytes per vector,
//      the measurements it made, its time;
//   2. over the same anchors (read from the first file: training does not depend on R), every
//      codec measured as compress measures it (quality/choose.ts, the same queries): int4,
//      int8, bits at every size found by bisection for each R, and pq at the sizes given
//      (--pq 98,196; each is M codebook trainings, minutes), each R's smallest reaching file —
//      "reaching" as the knob decides it (its point estimate of recall@10 >= R) and, for
//      reference, by the rule before 2026-11-28 (less two standard errors).
// Usage: node bench/quality-fmnist.mjs [--rows 20000] [--goals 0.9,0.95,0.99] [--pq 98,196] [--out FILE]
import { spawnSync } from 'node:child_process';
import { existsSync, mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { cpus, loadavg, tmpdir } from 'node:os';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';

const ROOT = resolve(dirname(fileURLToPath(import.meta.url)), '..');
const arg = (name, dflt) => {
  const i = process.argv.indexOf(name);
  return i > 0 ? process.argv[i + 1] : dflt;
};
const ROWS = Number(arg('--rows', '20000'));
const GOALS = arg('--goals', '0.9,0.95,0.99').split(',').map(Number);
const PQ = arg('--pq', '').split(',').filter(Boolean).map(Number);
const OUT = arg('--out', join(ROOT, `bench/results/${new Date().toISOString().slice(0, 10)}-quality-fmnist.json`));
const FASHION = '/usr/share/datasets/fashion-mnist/train-images-idx3-ubyte.gz';
const DATA = join(ROOT, 'bench/.data', `fashion${ROWS}.npy`);

if (!existsSync(DATA)) {
  if (!existsSync(FASHION)) throw new Error(`${FASHION} is missing: apt-get install dataset-fashion-mnist`);
  mkdirSync(dirname(DATA), { recursive: true });
  const py = `import gzip, numpy as np\na = np.frombuffer(gzip.open('${FASHION}').read(), dtype=np.uint8, offset=16).reshape(-1, 784)[:${ROWS}]\nnp.save('${DATA}', a.astype(np.float32))`;
  const r = spawnSync('python3', ['-c', py], { stdio: 'inherit' });
  if (r.status !== 0) throw new Error('python3 with numpy is needed to write the subset');
}

const dist = (p) => import(join(ROOT, 'dist', p));
const { readVlc } = await dist('io/vlc/file.js');
const { readInputs } = await dist('io/shards.js');
const { createCpuBackend, cpuKnn } = await dist('backend/cpu/index.js');
const { choose } = await dist('quality/choose.js');
const { encoderOn, sizer } = await dist('api/compress-codec.js');
const { DEFAULT_CONFIG } = await dist('anneal/config.js');

const tmp = mkdtempSync(join(tmpdir(), 'vlc-fmnist-'));
const knob = [];
let first;
try {
  for (const R of GOALS) {
    const out = join(tmp, `q${R}.vlc`);
    const t0 = performance.now();
    const r = spawnSync(process.execPath, [join(ROOT, 'bin/vlc.js'), 'compress', DATA, '-o', out, '--device', 'cpu', '--json', '-q', '--quality', String(R)], { encoding: 'utf8', maxBuffer: 1 << 26 });
    if (r.status !== 0) throw new Error(`compress --quality ${R}: ${r.stderr}`);
    const c = JSON.parse(r.stdout);
    const chosen = c.choice.measured.find((m) => m.residual === c.residual && (m.bits_code_bytes ?? null) === c.bits_code_bytes && (m.pq_subspaces ?? null) === c.pq_subspaces);
    knob.push({
      quality: R, codec: c.codec, file_bytes_per_vector: c.bytes_per_vector, chosen_bytes_per_vector: chosen?.bytes_per_vector,
      recall_at_10: c.recall_at_10, met: c.choice.met, wall_seconds: +((performance.now() - t0) / 1000).toFixed(1), choose_seconds: +c.choose_seconds.toFixed(1),
      measured: c.choice.measured.map((m) => ({ codec: `${m.residual}${m.bits_code_bytes ? ` ${m.bits_code_bytes}B` : m.pq_subspaces ? ` ${m.pq_subspaces}x${m.pq_bits}` : ''}`, bytes_per_vector: m.bytes_per_vector, recall: m.recall_at_10_all, se: m.recall_at_10_all_se })),
    });
    console.error(`--quality ${R}: ${c.codec} ${c.bytes_per_vector.toFixed(1)} B/vector, ${knob.at(-1).wall_seconds} s (choose ${knob.at(-1).choose_seconds} s)`);
    first ??= out;
  }

  // The same anchors, every codec measured as compress measures it.
  const file = await readVlc(first);
  const ds = await readInputs(DATA);
  const { n, d } = ds;
  const m = file.manifest.m;
  const trained = { x: ds, n, d, anchors: file.anchors, assignments: Uint32Array.from(file.assignments) };
  const size = sizer({ ds, anchorDtype: file.manifest.anchorDtype, cfg: { ...DEFAULT_CONFIG, m }, sampleRows: n, seed: DEFAULT_CONFIG.seed, device: 'cuda' });
  const perVector = (c) => size.perVector(c, m);
  const backend = createCpuBackend({});
  const rows = [];
  const seen = new Map();
  const measure = async (c) => {
    const key = JSON.stringify(c);
    if (seen.has(key)) return seen.get(key);
    const t0 = performance.now();
    const got = await choose({ kind: 'bytes', perVector: Infinity }, { m, options: [c] }, trained, encoderOn(backend, DEFAULT_CONFIG.seed, {}), cpuKnn, perVector);
    const r = got.measured[0];
    const row = { codec: c.mode === 'bits' ? `bits ${c.codeBytes}B` : c.mode === 'pq' ? `pq ${c.subspaces}x8` : c.mode, bytes_per_vector: r.bytes_per_vector, recall: r.recall_at_10_all, se: r.recall_at_10_all_se, lower: r.recall_at_10_all - 2 * r.recall_at_10_all_se, seconds: +((performance.now() - t0) / 1000).toFixed(1) };
    seen.set(key, row);
    rows.push(row);
    console.error(`  ${row.codec}: ${row.bytes_per_vector.toFixed(1)} B/vector, recall ${row.recall.toFixed(3)} ± ${row.se.toFixed(3)} (${row.seconds} s, load ${loadavg()[0].toFixed(1)})`);
    return row;
  };
  await measure({ mode: 'int4' });
  await measure({ mode: 'int8' });
  // bits: for each goal and each rule, the least code bytes reaching it (recall grows with R)
  const smallestBits = async (ok) => {
    let lo = 0, hi = d; // bits hi reaches, lo does not (or is none)
    if (!ok(await measure({ mode: 'bits', codeBytes: hi }))) return null;
    while (hi - lo > 1) {
      const mid = (lo + hi) >> 1;
      if (ok(await measure({ mode: 'bits', codeBytes: mid }))) hi = mid;
      else lo = mid;
    }
    return seen.get(JSON.stringify({ mode: 'bits', codeBytes: hi }));
  };
  for (const M of PQ) await measure({ mode: 'pq', subspaces: M, bits: 8 });
  const smallest = [];
  for (const R of GOALS) {
    const lowerOk = (r) => r.lower >= R;
    const pointOk = (r) => r.recall >= R;
    const bitsLower = await smallestBits(lowerOk);
    const bitsPoint = await smallestBits(pointOk);
    const best = (ok) => rows.filter(ok).reduce((a, b) => (!a || b.bytes_per_vector < a.bytes_per_vector ? b : a), null);
    const k = knob.find((x) => x.quality === R);
    const sm = { quality: R, smallest_by_lower_bound: best(lowerOk), smallest_by_point_estimate: best(pointOk), bits_by_lower_bound: bitsLower, bits_by_point_estimate: bitsPoint, knob_codec: k.codec, knob_bytes_per_vector: k.chosen_bytes_per_vector };
    sm.knob_over_smallest = sm.smallest_by_point_estimate ? +(k.chosen_bytes_per_vector / sm.smallest_by_point_estimate.bytes_per_vector).toFixed(4) : null;
    smallest.push(sm);
    console.error(`R ${R}: knob ${k.codec} ${k.chosen_bytes_per_vector.toFixed(1)}; smallest reaching (point estimate) ${sm.smallest_by_point_estimate?.codec} ${sm.smallest_by_point_estimate?.bytes_per_vector.toFixed(1)} -> ratio ${sm.knob_over_smallest}`);
  }
  await backend.close();
  const git = (a) => spawnSync('git', a, { cwd: ROOT, encoding: 'utf8' }).stdout.trim();
  writeFileSync(OUT, JSON.stringify({
    what: `issue 30 item 2: Fashion-MNIST's first ${ROWS} training images (d = 784, f32 pixel values), vlc compress --device cpu --quality R, against every codec measured over the same anchors as compress measures them (200 queries among all ${ROWS} vectors; sizes per vector as compress computes them, the manifest at its longest)`,
    date: new Date().toISOString(), machine: `${cpus().length}-core ${cpus()[0]?.model ?? 'cpu'}, shared with other sessions' jobs`,
    commit: git(['rev-parse', 'HEAD']), dirty: git(['status', '--porcelain', '--untracked-files=no']) !== '', node: process.version,
    n, d, m, knob, smallest, measured: rows.sort((a, b) => a.bytes_per_vector - b.bytes_per_vector),
  }, null, 1) + '\n');
  console.error(`wrote ${OUT}`);
} finally {
  rmSync(tmp, { recursive: true, force: true });
}
process.exit(0);
