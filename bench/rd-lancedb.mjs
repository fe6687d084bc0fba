// The LanceDB half of bench/rd-peers.py: LanceDB's IVF_RQ index (RaBitQ codes of each vector's
// residual from its IVF partition centroid) at several bits a dimension, as the RaBitQ peer.
//
// For each --bits b: a fresh table of the n vectors (column `vector`, FixedSizeList<f32>, and the
// row number `id`), an IVF_RQ index (numPartitions P, numBits b, l2), then each query searched with
// every partition probed (nprobes = P) and no refine (distances from the RaBitQ codes alone; the
// raw vectors are never read back), top 11. Bytes: the index's files on disk (the table's
// _indices folder: centroids, codes, row ids, metadata) / n. RaBitQ codes are not decoded to
// vectors by LanceDB, so there is no MSE: the row says null.
//
// LanceDB is not a dependency of vlc (CI must not download it): bench/rd-peers.py installs nothing;
// install it by hand into the git-ignored bench/.peers (see bench/README or README's Benchmarks):
//   npm install --prefix bench/.peers @lancedb/lancedb@0.39.0 apache-arrow@18
// Without it this script prints {"absent": "..."} and exits 0, so the Python driver goes on.
//
// Usage: node bench/rd-lancedb.mjs DATA.f32 N D QUERIES.json --bits 1,2,4 [--partitions P] > out.json
// DATA.f32: n × d raw little-endian f32; QUERIES.json: row numbers (the query vectors are those rows).
// Output: {"version", "rows": [{bits, partitions, index_bytes, bytes_per_vector, found: [[id × 11] per query],
// build_seconds, search_seconds}]}; the caller scores `found` against its own exact truth.
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { createRequire } from 'node:module';
import { fileURLToPath } from 'node:url';

const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..');
const peers = path.join(root, 'bench', '.peers');
const args = process.argv.slice(2);
const flag = (name, fallback) => {
  const i = args.indexOf(name);
  return i < 0 ? fallback : args[i + 1];
};

let lancedb, arrow;
try {
  const req = createRequire(path.join(peers, 'package.json'));
  lancedb = req('@lancedb/lancedb');
  arrow = req('apache-arrow');
} catch (e) {
  process.stdout.write(JSON.stringify({ absent: `@lancedb/lancedb or apache-arrow not found under ${peers} (${e.code ?? e.message})` }) + '\n');
  process.exit(0);
}
const version = JSON.parse(fs.readFileSync(path.join(peers, 'node_modules', '@lancedb', 'lancedb', 'package.json'), 'utf8')).version;
if (typeof lancedb.Index.ivfRq !== 'function') {
  process.stdout.write(JSON.stringify({ absent: `@lancedb/lancedb ${version} has no Index.ivfRq (IVF_RQ)` }) + '\n');
  process.exit(0);
}

const [dataPath, nArg, dArg, queryPath] = args;
const n = Number(nArg);
const d = Number(dArg);
const bitsList = flag('--bits', '1').split(',').map(Number);
const partitions = Number(flag('--partitions', String(Math.round(Math.sqrt(n)))));
const buf = fs.readFileSync(dataPath);
const x = new Float32Array(buf.buffer, buf.byteOffset, n * d);
const queries = JSON.parse(fs.readFileSync(queryPath, 'utf8'));

// One Arrow table of the n rows, built column-wise (no per-row JS objects).
const item = new arrow.Field('item', new arrow.Float32(), true);
const vectorType = new arrow.FixedSizeList(d, item);
const values = arrow.makeData({ type: new arrow.Float32(), length: n * d, data: x });
const vectors = arrow.makeVector(arrow.makeData({ type: vectorType, length: n, nullCount: 0, child: values }));
const ids = arrow.makeVector(Int32Array.from({ length: n }, (_, i) => i));
const table = new arrow.Table({ id: ids, vector: vectors });

const dirBytes = (dir) =>
  fs.existsSync(dir)
    ? fs.readdirSync(dir, { withFileTypes: true }).reduce((s, e) => s + (e.isDirectory() ? dirBytes(path.join(dir, e.name)) : fs.statSync(path.join(dir, e.name)).size), 0)
    : 0;

const rows = [];
for (const bits of bitsList) {
  const tmp = fs.mkdtempSync(path.join(os.tmpdir(), 'vlc-lance-'));
  try {
    const db = await lancedb.connect(tmp);
    const tbl = await db.createTable('t', table);
    const t0 = performance.now();
    await tbl.createIndex('vector', { config: lancedb.Index.ivfRq({ numPartitions: partitions, numBits: bits, distanceType: 'l2' }) });
    const buildSeconds = (performance.now() - t0) / 1000;
    const indexBytes = dirBytes(path.join(tmp, 't.lance', '_indices'));
    const t1 = performance.now();
    const found = [];
    for (const qi of queries) {
      const q = Array.from(x.subarray(qi * d, (qi + 1) * d));
      const res = await tbl.vectorSearch(q).distanceType('l2').nprobes(partitions).limit(11).select(['id', '_distance']).toArray();
      found.push(res.map((r) => r.id));
    }
    const searchSeconds = (performance.now() - t1) / 1000;
    const indices = await tbl.listIndices();
    rows.push({ bits, partitions, index_type: indices.map((i) => i.indexType).join(','), index_bytes: indexBytes, bytes_per_vector: indexBytes / n, build_seconds: buildSeconds, search_seconds: searchSeconds, found });
    process.stderr.write(`lancedb IVF_RQ bits ${bits}: ${(indexBytes / n).toFixed(2)} B/vector, build ${buildSeconds.toFixed(1)} s\n`);
  } catch (e) {
    rows.push({ bits, error: e.message.split('\n')[0] }); // e.g. a numBits this version refuses: the others still run
  } finally {
    fs.rmSync(tmp, { recursive: true, force: true });
  }
}
process.stdout.write(JSON.stringify({ version, rows }) + '\n');
