// Peak memory of the input readers on a large file: for each format, write an n×d f32 file under
// the OS temp dir, read it with readDataset() in a child process run by `/usr/bin/time -v`, report
// its maximum RSS against the vectors' size (n·d·4 bytes; the target is under 2×), delete the file.
// Usage: npx tsc -p . && node bench/read_memory.mjs [n=1000000] [d=384] [formats=npz,npz-deflated,hdf5,csv,arrow-large,feather-zstd]
// Writers: numpy (npz, via python3), h5py (hdf5, via a python3 that has it), the zstd tool
// (feather-zstd); a format whose writer is missing is reported as skipped, with the reason.
import { execFileSync, spawnSync } from 'node:child_process';
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { CompressionType, compressionRegistry, Field, FixedSizeList, Float32, LargeList, makeData, RecordBatch, RecordBatchFileWriter, Schema, Struct } from 'apache-arrow';

const n = Number(process.argv[2] ?? 1_000_000);
const d = Number(process.argv[3] ?? 384);
const formats = (process.argv[4] ?? 'npz,npz-deflated,hdf5,csv,arrow-large,feather-zstd').split(',');
const tmp = fs.mkdtempSync(path.join(os.tmpdir(), 'vlc-read-memory-'));
const vectorBytes = n * d * 4;
const ROWS = 65_536; // pyarrow's default record batch / a comfortable slab

/** Row block [r0, r0 + k) of the test matrix (deterministic, every value distinct enough). */
function block(r0, k) {
  const x = new Float32Array(k * d);
  for (let q = 0; q < k * d; q++) x[q] = Math.sin((r0 * d + q) * 0.618);
  return x;
}

function pythonWith(module) {
  for (const py of ['python3', '/usr/bin/python3']) if (spawnSync(py, ['-c', `import ${module}`], { stdio: 'ignore' }).status === 0) return py;
  return undefined;
}

/** A raw f32 file numpy can memory-map (np.memmap) to write the npz / HDF5 files from. */
function rawFile() {
  const raw = path.join(tmp, 'x.f32');
  const fd = fs.openSync(raw, 'w');
  for (let r0 = 0; r0 < n; r0 += ROWS) fs.writeSync(fd, new Uint8Array(block(r0, Math.min(ROWS, n - r0)).buffer));
  fs.closeSync(fd);
  return raw;
}

function arrowFile(file, zstd) {
  const type = zstd ? new FixedSizeList(d, new Field('item', new Float32(), false)) : new LargeList(new Field('item', new Float32(), false));
  const schema = new Schema([new Field('embedding', type, false)]);
  if (zstd) compressionRegistry.set(CompressionType.ZSTD, { encode: (b) => new Uint8Array(execFileSync('zstd', ['-q', '-c', '-1', `--stream-size=${b.length}`], { input: b, maxBuffer: 1 << 30 })) });
  const writer = new RecordBatchFileWriter({ compressionType: zstd ? CompressionType.ZSTD : null });
  for (let r0 = 0; r0 < n; r0 += ROWS) {
    const k = Math.min(ROWS, n - r0);
    const child = makeData({ type: new Float32(), length: k * d, nullCount: 0, data: block(r0, k) });
    const list = zstd
      ? makeData({ type, length: k, nullCount: 0, child })
      : makeData({ type, length: k, nullCount: 0, valueOffsets: BigInt64Array.from({ length: k + 1 }, (_, i) => BigInt(i * d)), child });
    writer.write(new RecordBatch(schema, makeData({ type: new Struct(schema.fields), length: k, nullCount: 0, children: [list] })));
  }
  writer.finish();
  fs.writeFileSync(file, writer.toUint8Array(true)); // the writer process holds it all; the reader is what is measured
}

const MAKERS = {
  npz: (file) => {
    const py = pythonWith('numpy');
    if (!py) return 'numpy missing';
    execFileSync(py, ['-c', `import numpy as np; np.savez('${file}', train=np.memmap('${rawFile()}', dtype='<f4', mode='r', shape=(${n}, ${d})))`]);
  },
  'npz-deflated': (file) => {
    const py = pythonWith('numpy');
    if (!py) return 'numpy missing';
    execFileSync(py, ['-c', `import numpy as np; np.savez_compressed('${file}', train=np.memmap('${rawFile()}', dtype='<f4', mode='r', shape=(${n}, ${d})))`]);
  },
  hdf5: (file) => {
    const py = pythonWith('h5py');
    if (!py) return 'h5py missing (Debian: python3-h5py)';
    execFileSync(py, ['-c', `import numpy as np, h5py
x = np.memmap('${rawFile()}', dtype='<f4', mode='r', shape=(${n}, ${d}))
with h5py.File('${file}', 'w') as f:
    f.create_dataset('train', data=x)
    f.create_dataset('test', data=x[:100])`]);
  },
  csv: (file) => {
    // 9 significant digits of each f32 (np.savetxt's '%.9g' round-trips f32 too). Formatting 384M
    // numbers takes long on a shared machine, so 4,096 rows are formatted once and written over
    // and over: the reader still parses every number.
    const x = block(0, 4096);
    const text = Array.from({ length: 4096 }, (_, i) => Array.from(x.subarray(i * d, (i + 1) * d), (v) => v.toPrecision(9)).join(',')).join('\n') + '\n';
    const lines = text.split('\n');
    const fd = fs.openSync(file, 'w');
    for (let r0 = 0; r0 < n; r0 += 4096) {
      const k = Math.min(4096, n - r0);
      fs.writeSync(fd, k === 4096 ? text : lines.slice(0, k).join('\n') + '\n');
    }
    fs.closeSync(fd);
  },
  'arrow-large': (file) => arrowFile(file, false),
  'feather-zstd': (file) => {
    if (spawnSync('zstd', ['--version'], { stdio: 'ignore' }).status !== 0) return 'the zstd tool is missing';
    arrowFile(file, true);
  },
};

const READ = `import { readDataset } from '${path.resolve(process.env.VLC_DIST ?? 'dist', 'io/read.js')}'; const ds = await readDataset(process.argv[1]); console.log(ds.n, ds.d, ds.format);`;

for (const format of formats) {
  // Named as users name them (np.savez adds .npz to any other name).
  const file = path.join(tmp, { npz: 'x.npz', 'npz-deflated': 'x-deflated.npz', hdf5: 'x.h5', csv: 'x.csv', 'arrow-large': 'x.arrow', 'feather-zstd': 'x.feather' }[format]);
  const t0 = performance.now();
  const skipped = MAKERS[format](file);
  for (const f of fs.readdirSync(tmp)) if (f.endsWith('.f32')) fs.rmSync(path.join(tmp, f));
  if (skipped) {
    console.log(JSON.stringify({ bench: 'read_memory', format, skipped }));
    continue;
  }
  const writeSeconds = (performance.now() - t0) / 1000;
  const t1 = performance.now();
  const r = spawnSync('/usr/bin/time', ['-v', process.execPath, '--input-type=module', '-e', READ, file], { encoding: 'utf8' });
  const seconds = (performance.now() - t1) / 1000;
  const peak = Number(/Maximum resident set size \(kbytes\): (\d+)/.exec(r.stderr)?.[1]) * 1024;
  console.log(JSON.stringify({
    bench: 'read_memory', format, n, d, file_bytes: fs.statSync(file).size, vector_bytes: vectorBytes,
    ok: r.status === 0, read: r.stdout.trim() || r.stderr.split('\n')[0], read_seconds: +seconds.toFixed(1), write_seconds: +writeSeconds.toFixed(1),
    peak_rss_bytes: peak, rss_over_vectors: +(peak / vectorBytes).toFixed(3),
  }));
  fs.rmSync(file, { force: true });
}
fs.rmSync(tmp, { recursive: true, force: true });
