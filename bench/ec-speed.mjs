// Speed of the 'ec' codec on one CPU thread (src/codecs/ec/): encode (step search for a byte
// budget, count pass, code pass) and decode (every block's rANS stream to codes: the section reader;
// then codes to f32 rows), on a Gaussian-mixture residual, reported as MB/s of f32 rows (n·d·4
// bytes) of CPU time on one core, with the coded size against the codes' empirical entropy; and
// the section reader's wall time on its default threads (decode_threads).
// The decoder's loops run in WebAssembly unless VLC_EC_WASM=0 (the JS loops, for a before/after in one build).
// Usage: node bench/ec-speed.mjs [n] [d] [bytes-per-vector] [--rotate auto|axis|rot] [--dist DIR] [--compare] [--against DIR] [--rounds R]
//   --compare: the JS and the WebAssembly loops of one build on the same payload, rounds interleaved.
//   --against DIR: another build's decoder (DIR: its dist/, beside its build/) on the same payload,
//   rounds interleaved with this one's in one process (a before/after under the same load);
//   --rounds: how many (default 4), each the best of two runs.
//   --rotate: the layout (default auto: the encoder's choice); --dist: the build whose decoder is
//   timed (another checkout's dist/, for a before/after on the same input; encoded by this one's).
// (needs npx tsc -p . first)
import * as path from 'node:path';
import { fileURLToPath } from 'node:url';

const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..');
const flag = (name, dflt) => {
  const i = process.argv.indexOf(name);
  return i < 0 ? dflt : process.argv.splice(i, 2)[1];
};
const compareAt = process.argv.indexOf('--compare'), compare = compareAt >= 0;
if (compare) process.argv.splice(compareAt, 1);
const compareRounds = 3;
const rotateFlag = flag('--rotate', 'auto'), dist = path.resolve(flag('--dist', path.join(root, 'dist')));
const againstFlag = flag('--against', undefined), against = againstFlag && path.resolve(againstFlag);
const againstRounds = Number(flag('--rounds', 4));
const { encodeEc } = await import(path.join(root, 'dist/codecs/ec/encode.js'));
/** A build's section reader and block decoder (dir: its dist/). */
const build = async (dir) => ({ decoder: await import(path.join(dir, 'codecs/ec/residuals.js')), readSection: (await import(path.join(dir, 'codecs/ec/blocks.js'))).readSection });
const mine = await build(dist), theirs = against ? await build(against) : undefined;

const n = Number(process.argv[2] ?? 100000), d = Number(process.argv[3] ?? 128), B = Number(process.argv[4] ?? d / 2);
let seed = 7;
const rnd = () => ((seed = (Math.imul(seed, 1103515245) + 12345) >>> 0) / 2 ** 32);
const gauss = () => Math.sqrt(-2 * Math.log(1 - rnd())) * Math.cos(2 * Math.PI * rnd());
const m = 1024;
const anchors = Float32Array.from({ length: m * d }, gauss);
const sig = Float64Array.from({ length: d }, (_, k) => 0.3 * Math.exp(-k / (d / 3)));
const x = new Float32Array(n * d), assign = new Uint32Array(n);
for (let i = 0; i < n; i++) {
  const a = (assign[i] = Math.floor(rnd() * m));
  for (let k = 0; k < d; k++) x[i * d + k] = anchors[a * d + k] + sig[k] * gauss();
}
const input = { x, n, d, anchors, assign };
// CPU time of this process (user + system), best of `runs`: on a shared machine wall time counts
// the time other processes held the cores; CPU time is what the work took on one core.
const best = (f, runs) => {
  let t = Infinity, out;
  for (let r = 0; r < runs; r++) {
    const c0 = process.cpuUsage();
    out = f();
    const c = process.cpuUsage(c0);
    t = Math.min(t, (c.user + c.system) / 1000);
  }
  return [t / 1000, out];
};
const rotate = { auto: 'auto', axis: false, rot: true }[rotateFlag];
// Encoded on this thread alone (threads: 1): CPU time of one core.
const c0 = process.cpuUsage();
const enc = await encodeEc(input, { payloadBytes: B * n }, { rotate, threads: 1 });
const encS = ((c => (c.user + c.system) / 1e6)(process.cpuUsage(c0)));
const parts = enc.residuals.payload();
const payload = new Uint8Array(parts.reduce((s, p) => s + p.length, 0));
let o = 0;
for (const p of parts) (payload.set(p, o), (o += p.length));
const context = { n, d, m, assignments: assign, version: 5 }, fail = (w) => new Error(w);
const mb = (n * d * 4) / 1e6;
const wasmSwitch = await import(path.join(dist, 'codecs/ec/wasm-decode.js')).catch(() => undefined);
// Codes to rows as decompress makes them (io/vlc/reconstruct.ts reconstructRange): addRange over
// chunks of rows where the build has it, else addTo row by row; and addTo row by row (random access).
const CHUNK = 65536;
/** The decode figures of the build's decoder as it stands (WebAssembly on or off), best of `runs`. */
function measure(runs, { decoder, readSection } = mine) {
  const { ecSection } = decoder;
  const [readS] = decoder.decodeBlocks
    ? best(() => decoder.decodeBlocks(payload, readSection(payload, n, d, fail), n, 1, fail), runs) // one thread
    : best(() => ecSection.read(payload, context, fail), runs); // a build whose reader has one thread only
  let wallS = Infinity, res;
  for (let r = 0; r < runs; r++) {
    const t0 = performance.now();
    res = ecSection.read(payload, context, fail);
    wallS = Math.min(wallS, (performance.now() - t0) / 1000);
  }
  const rows = new Float32Array(n * d);
  const addRows = res.addRange
    ? () => { for (let i = 0; i < n; i += CHUNK) res.addRange(i, Math.min(n, i + CHUNK), rows, i * d); }
    : () => { for (let i = 0; i < n; i++) res.addTo(i, rows, i * d); };
  const [rowsS] = best(addRows, runs);
  const [rowByRowS] = best(() => {
    for (let i = 0; i < n; i++) res.addTo(i, rows, i * d);
  }, Math.min(runs, 3));
  // The residuals' bits (added to 0 once), to check that two builds or decoders decode the same.
  rows.fill(0);
  addRows();
  const check = new Float32Array(n * d);
  for (let i = 0; i < n; i++) res.addTo(i, check, i * d);
  if (Buffer.compare(Buffer.from(rows.buffer), Buffer.from(check.buffer)) !== 0) throw new Error('addRange and addTo differ');
  const bits = new Int32Array(rows.buffer);
  let rowsHash = 0;
  for (let i = 0; i < bits.length; i++) rowsHash = (Math.imul(rowsHash, 31) + bits[i]) | 0;
  return {
    res,
    figures: {
      decode_codes_s: readS, decode_codes_MBps: mb / readS, codes_to_rows_MBps: mb / rowsS, codes_to_rows_addTo_MBps: mb / rowByRowS,
      decode_MBps: mb / (readS + rowsS), symbols_per_s: (n * res.layout.dims.length) / readS, decode_threads_wall_MBps: mb / wallS, rows_hash: rowsHash,
    },
  };
}
/** Two runs' figures, each the better of the two (time: the least; rates: the most). */
const bestOf = (a, b) => (a ? Object.fromEntries(Object.entries(b).map(([k, v]) => [k, k === 'decode_codes_s' ? Math.min(a[k], v) : k === 'rows_hash' ? v : Math.max(a[k], v)])) : b);
let res, figures;
if (compare) {
  // The JS loops and the WebAssembly ones on the same payload, rounds interleaved (a shared machine's
  // load changes by the minute), each figure the best of its rounds.
  if (!wasmSwitch) throw new Error('--compare: this build has no WebAssembly decoder');
  const got = { js: undefined, wasm: undefined };
  for (let r = 0; r < compareRounds; r++)
    for (const which of ['js', 'wasm']) {
      wasmSwitch.setEcWasm(which === 'wasm');
      const m = measure(2);
      got[which] = bestOf(got[which], m.figures);
      res = m.res;
    }
  if (got.js.rows_hash !== got.wasm.rows_hash) throw new Error('the JS and WebAssembly decoders give different rows');
  figures = { js: got.js, wasm: got.wasm, same_rows: true };
} else if (theirs) {
  // This build and another on the same payload, rounds interleaved, each figure the best of its rounds.
  const got = { mine: undefined, theirs: undefined };
  for (let r = 0; r < againstRounds; r++)
    for (const which of ['theirs', 'mine']) {
      const m = measure(2, which === 'mine' ? mine : theirs);
      got[which] = bestOf(got[which], m.figures);
      if (which === 'mine') res = m.res;
    }
  if (got.mine.rows_hash !== got.theirs.rows_hash) throw new Error('the two builds decode different rows');
  figures = { against, before: got.theirs, after: got.mine, same_rows: true };
} else ({ res, figures } = measure(5));
// The codes' empirical entropy, per coded dimension.
const D = res.layout.dims.length, maps = Array.from({ length: D }, () => new Map());
for (let b = 0; b < res.blockCount; b++) {
  const q = res.decodeBlock(b);
  for (let t = 0; t < q.length; t++) maps[t % D].set(q[t], (maps[t % D].get(q[t]) ?? 0) + 1);
}
let h = 0;
for (const mp of maps) for (const c of mp.values()) h -= c * Math.log2(c / n);
console.log(JSON.stringify({
  n, d, layout: res.layout.rotation ? 'rotated' : 'axes', dist, scale_bits: res.layout.scaleBits, payload_bytes: payload.length, bytes_per_vector: payload.length / n, coded_dimensions: D, entropy_bytes: Math.round(h / 8),
  over_entropy: payload.length / (h / 8) - 1, mse: enc.residualEnergy,
  encode_s: encS, encode_MBps: mb / encS, decoder: compare ? 'both' : wasmSwitch?.ecWasmEnabled() ? 'wasm' : 'js', ...figures,
  load: (await import('node:os')).loadavg(),
}));
