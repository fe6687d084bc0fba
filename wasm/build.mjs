// npm run build:wasm — compiles each kernel of wasm/ (kernel.c: the CPU backend's distances;
// ec-decode.c: the 'ec' codec's decoder loops) to build/<name>.wasm (committed, loaded at run time)
// and writes build/<name>.wasm.json tying it to its source, so a test can tell when a committed
// binary is stale. Needs clang with the wasm32 target and lld (wasm-ld); CI never runs it.
import { execFileSync } from 'node:child_process';
import { createHash } from 'node:crypto';
import { readFileSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';

const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..');
/** The kernels: wasm/<name>.c -> build/<name>.wasm. */
export const KERNELS = ['kernel', 'ec-decode'];
const flags = [
  '--target=wasm32', '-msimd128', '-O3', '-nostdlib', '-fno-builtin',
  '-Wl,--no-entry', '-Wl,--export-dynamic', '-Wl,--export=__heap_base',
];

/** sha256 of the source with line endings normalised (a CRLF checkout is not "stale"). */
export function sourceHash(file) {
  return createHash('sha256').update(readFileSync(file, 'utf8').replace(/\r\n/g, '\n')).digest('hex');
}

if (process.argv[1] === fileURLToPath(import.meta.url)) {
  for (const name of KERNELS) {
    const src = path.join(root, 'wasm', `${name}.c`), out = path.join(root, 'build', `${name}.wasm`);
    execFileSync('clang', [...flags, '-o', out, src], { stdio: 'inherit' });
    const manifest = {
      source: `wasm/${name}.c`,
      sourceSha256: sourceHash(src),
      wasmSha256: createHash('sha256').update(readFileSync(out)).digest('hex'),
      clang: execFileSync('clang', ['--version'], { encoding: 'utf8' }).split('\n')[0],
      flags,
    };
    writeFileSync(out + '.json', JSON.stringify(manifest, null, 2) + '\n');
    console.log(`build/${name}.wasm: ${readFileSync(out).length} bytes`);
  }
}
