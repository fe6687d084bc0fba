// The ec section decoded on the GPU (src/backend/cuda/ec.ts, cuda/ec.cu) timed on a Gaussian-mixture
// residual coded by the real encoder (both layouts): GB/s of f32 rows written (n·d·4 bytes over the
// GPU time of one whole-file decode, events around the launches: ec_decode, then ec_axis or
// ec_rotated), the ec_decode kernel alone, and the host's single-threaded rebuild of the same rows
// from the reader's codes for scale; every run's output compared with the host's bit for bit.
// Usage (on the GPU machine): npx tsc -p . && node bench/ec-gpu.mjs [--n N] [--d D] [--layout axis|rotated|both]
//   [--step S (the quantizer's step, default 0.05; the bytes per vector it gives are reported)] [--out bench/results/FILE.json]
//   [--repeat R: the coded blocks (and their rows' assignments) taken R times over, so a GPU larger than
//   n/4,096 warps is filled without R times the single-threaded encoding; n is then rounded down to whole
//   blocks, and every copy is compared with the host's rows of the one coded copy]
// The encoder runs on one CPU thread first (about a minute per million rows of 128 along the axes,
// three times that along principal directions, on a 2-core shared machine).
import { execFileSync } from 'node:child_process';
import { writeFileSync } from 'node:fs';

const { createCudaBackend, probeCuda } = await import('../dist/backend/cuda/index.js');
const { decodeOnDevice } = await import('../dist/backend/cuda/decode.js');
const { encodeEc } = await import('../dist/codecs/ec/encode.js');
const { ecSection } = await import('../dist/codecs/ec/residuals.js');
const { reconstructRange } = await import('../dist/io/vlc/reconstruct.js');
const { EcResiduals } = await import('../dist/codecs/ec/residuals.js');

const arg = (name, def) => {
  const i = process.argv.indexOf(`--${name}`);
  return i > 0 ? process.argv[i + 1] : def;
};
const repeat = Number(arg('repeat', 1));
const n = repeat > 1 ? Math.floor(Number(arg('n', 1_000_000)) / 4096) * 4096 : Number(arg('n', 1_000_000)), d = Number(arg('d', 128)), step = Number(arg('step', 0.05));
const layouts = arg('layout', 'both') === 'both' ? ['axis', 'rotated'] : [arg('layout')];
const RUNS = 5;

const probe = probeCuda();
if (!probe.ok) {
  console.error(`ec-gpu: no usable GPU (${probe.reason})`);
  process.exit(3);
}

let seed = 7;
const rnd = () => ((seed = (Math.imul(seed, 1103515245) + 12345) >>> 0) / 2 ** 32);
const gauss = () => Math.sqrt(-2 * Math.log(1 - rnd())) * Math.cos(2 * Math.PI * rnd());

/** n × d mixture of m anchors, residual spreads falling with the dimension; rotated: the spreads on random directions. */
async function problem(layout) {
  const m = 1024;
  const anchors = Float32Array.from({ length: m * d }, gauss);
  const sig = Float64Array.from({ length: d }, (_, k) => 0.3 * Math.exp(-k / (d / 3)));
  const mix = layout === 'rotated' ? Float64Array.from({ length: 8 * d }, gauss) : undefined;
  const x = new Float32Array(n * d), assign = new Uint32Array(n), z = new Float64Array(8);
  for (let i = 0; i < n; i++) {
    const a = (assign[i] = Math.floor(rnd() * m));
    if (mix) for (let f = 0; f < 8; f++) z[f] = 0.15 * gauss();
    for (let k = 0; k < d; k++) {
      let e = sig[k] * gauss();
      if (mix) for (let f = 0; f < 8; f++) e += z[f] * mix[f * d + k];
      x[i * d + k] = anchors[a * d + k] + e;
    }
  }
  const input = { x, n, d, anchors, assign };
  const { residuals } = await encodeEc(input, { step }, { rotate: layout === 'rotated' });
  const parts = residuals.payload();
  const payload = new Uint8Array(parts.reduce((s, p) => s + p.length, 0));
  let o = 0;
  for (const p of parts) (payload.set(p, o), (o += p.length));
  const read = ecSection.read(payload, { n, d, m, assignments: assign, version: 5 }, (w) => new Error(w));
  return { file: { anchors, assignments: assign, manifest: { d }, residuals: read }, payloadBytes: payload.length };
}

/** The file with its blocks (and their rows' assignments) `repeat` times over: every copy decodes to the same rows. */
function repeated(file) {
  if (repeat === 1) return file;
  const r = file.residuals, B = r.blockCount;
  if (n !== B * r.layout.blockRows) throw new Error(`--repeat needs whole blocks of ${r.layout.blockRows} rows`);
  const blockAt = new Float64Array(B * repeat + 1);
  for (let b = 0; b < B * repeat; b++) blockAt[b + 1] = blockAt[b] + r.blocks(b % B).size;
  const codes = Array.from({ length: B * repeat }, (_, b) => r.codes[b % B]);
  const residuals = new EcResiduals(n * repeat, d, { ...r.layout, blockAt }, (b) => r.blocks(b % B), codes);
  const assignments = new Uint32Array(n * repeat);
  for (let c = 0; c < repeat; c++) assignments.set(file.assignments, c * n);
  return { ...file, assignments, residuals };
}

const backend = await createCudaBackend(0);
const { ctx } = backend;
const cases = [];
try {
  for (const layout of layouts) {
    const t0 = performance.now();
    const { file, payloadBytes } = await problem(layout);
    const encodeS = (performance.now() - t0) / 1000;
    const h0 = performance.now();
    const want = reconstructRange(file, 0, n, new Float32Array(n * d));
    const hostS = (performance.now() - h0) / 1000;
    const u0 = performance.now();
    const N = n * repeat;
    const rows = await decodeOnDevice(ctx, repeated(file), N);
    const uploadMs = performance.now() - u0;
    const out = ctx.pool.alloc('bench rows', N * d * 4);
    const ms = [];
    let identical = true;
    try {
      for (let r = 0; r <= RUNS; r++) {
        ctx.upload(out, new Float32Array(N * d).fill(NaN));
        const start = ctx.event(), end = ctx.event();
        ctx.record(start);
        rows.fill(out, 0, N);
        ctx.record(end);
        await ctx.wait(end);
        if (r > 0) ms.push(ctx.elapsedMs(start, end)); // run 0: warm-up
        ctx.destroyEvent(start);
        ctx.destroyEvent(end);
        const got = new Float32Array(N * d);
        ctx.download(got, out);
        for (let c = 0; c < repeat; c++)
          if (!Buffer.from(got.buffer, c * n * d * 4, n * d * 4).equals(Buffer.from(want.buffer))) identical = false;
      }
    } finally {
      ctx.pool.free(out);
      rows.free();
    }
    const best = Math.min(...ms);
    const c = {
      layout, n: N, coded_rows: n, repeat, d, bytes_per_vector: payloadBytes / n, coded_dims: file.residuals.layout.dims.length,
      gpu_ms: best, gpu_ms_runs: ms, gb_per_s: (N * d * 4) / (best / 1000) / 1e9,
      upload_ms: uploadMs, host_rebuild_s_one_thread: hostS, host_gb_per_s: (n * d * 4) / hostS / 1e9,
      bit_identical_to_host: identical, encode_s: encodeS,
    };
    cases.push(c);
    console.log(JSON.stringify(c));
  }
} finally {
  await backend.close();
}
const commit = (() => {
  try {
    return process.env.VLC_COMMIT ?? execFileSync('git', ['rev-parse', 'HEAD'], { encoding: 'utf8' }).trim();
  } catch {
    return 'unknown';
  }
})();
const outPath = arg('out');
if (outPath) writeFileSync(outPath, JSON.stringify({ what: 'ec decode on the GPU', device: backend.label, date: new Date().toISOString(), commit, cases }, null, 2) + '\n');
