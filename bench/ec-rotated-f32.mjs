// The rotated layout's rows in WebAssembly SIMD128, f64 (the format's arithmetic) against f32 (an
// experiment: it would change the decoded bits), dense rows of D = d coordinates, one thread; MB/s
// of f32 rows per CPU-second, best of the rounds, the two kernels interleaved. Compiles
// bench/kernels/ec-rotated-f32.c with clang into a temporary file (the package never loads it).
// Usage: node bench/ec-rotated-f32.mjs [rows] [d] [rounds]
import { execFileSync } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';

const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..');
const rows = Number(process.argv[2] ?? 8192), d = Number(process.argv[3] ?? 128), rounds = Number(process.argv[4] ?? 7), D = d;
const dir = mkdtempSync(path.join(tmpdir(), 'vlc-rot-'));
const wasmFile = path.join(dir, 'rot.wasm');
execFileSync('clang', ['--target=wasm32', '-msimd128', '-O3', '-nostdlib', '-fno-builtin', '-Wl,--no-entry', '-Wl,--export-dynamic', '-Wl,--export=__heap_base', '-o', wasmFile, path.join(root, 'bench/kernels/ec-rotated-f32.c')]);
const ex = new WebAssembly.Instance(new WebAssembly.Module(readFileSync(wasmFile)), {}).exports;
rmSync(dir, { recursive: true });
const bytes = 8 * rows * D + 8 * D * d + 4 * rows * d;
ex.memory.grow(Math.ceil((ex.__heap_base.value + 2 * bytes + (1 << 20)) / 65536));
let at = (ex.__heap_base.value + 15) & ~15;
const take = (n) => ((at = (at + 15) & ~15), (at += n), at - n);
const y64 = take(8 * rows * D), P64 = take(8 * D * d), y32 = take(4 * rows * D), P32 = take(4 * D * d), out = take(4 * rows * d);
let seed = 5;
const rnd = () => ((seed = (Math.imul(seed, 1103515245) + 12345) >>> 0) / 2 ** 32 - 0.5);
const buf = ex.memory.buffer;
const fill = (Arr, off, n) => { const a = new Arr(buf, off, n); for (let i = 0; i < n; i++) a[i] = rnd(); return a; };
const ya = fill(Float64Array, y64, rows * D), Pa = fill(Float64Array, P64, D * d);
new Float32Array(buf, y32, rows * D).set(ya);
new Float32Array(buf, P32, D * d).set(Pa);
const mb = (4 * rows * d) / 1e6, best = { f64: Infinity, f32: Infinity };
for (let r = 0; r < rounds; r++)
  for (const k of ['f64', 'f32']) {
    const c0 = process.cpuUsage();
    if (k === 'f64') ex.rot_f64(rows, D, d, y64, P64, out);
    else ex.rot_f32(rows, D, d, y32, P32, out);
    const c = process.cpuUsage(c0);
    best[k] = Math.min(best[k], (c.user + c.system) / 1e6);
  }
console.log(JSON.stringify({ rows, d, coordinates: D, f64_MBps: mb / best.f64, f32_MBps: mb / best.f32, f32_over_f64: best.f64 / best.f32, load: (await import('node:os')).loadavg() }));
