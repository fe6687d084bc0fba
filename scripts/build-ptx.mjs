#!/usr/bin/env node
// npm run build:ptx — compile every cuda/*.cu to build/<name>.ptx for the virtual architecture
// compute_80 (the driver JITs it for any GPU since Ampere), and record in build/ptx-manifest.json
// a hash of the sources each PTX was built from. test/cuda-host/ptx-fresh.test.ts recomputes the
// hashes (CI has no nvcc) and fails when a .cu or .cuh changed without a rebuild. Each PTX is then
// compiled by ptxas to Hopper machine code (build/sm_90/<name>.cubin, its PTX's hash recorded), which
// the context loads on compute capability 9.0 instead of JIT-compiling the PTX (docs/cuda.md).
import { execFileSync } from 'node:child_process';
import { mkdirSync, readFileSync, readdirSync, writeFileSync, renameSync } from 'node:fs';
import { join, dirname } from 'node:path';
import { fileURLToPath } from 'node:url';
import { sourceHash, archOf, ARCH, CUBIN_DIR, cubinArchOf, bytesHash } from './ptx-hash.mjs';

const root = join(dirname(fileURLToPath(import.meta.url)), '..');
const cudaDir = join(root, 'cuda');
const buildDir = join(root, 'build');

let nvccVersion;
try {
  nvccVersion = execFileSync('nvcc', ['--version'], { encoding: 'utf8' }).trim().split('\n').pop();
} catch {
  console.error('build:ptx needs nvcc (the CUDA toolkit) on PATH; the committed build/*.ptx works without it');
  process.exit(1);
}

const manifest = { arch: ARCH, nvcc: nvccVersion, kernels: {} };
for (const file of readdirSync(cudaDir).filter((f) => f.endsWith('.cu')).sort()) {
  const name = file.slice(0, -3);
  const out = join(buildDir, `${name}.ptx`);
  execFileSync('nvcc', ['-ptx', `-arch=${archOf(name)}`, '-O3', '-I', cudaDir, join(cudaDir, file), '-o', `${out}.tmp`], {
    stdio: 'inherit',
  });
  renameSync(`${out}.tmp`, out);
  const ptx = readFileSync(out, 'utf8');
  const isa = /^\.version\s+(\d+\.\d+)/m.exec(ptx)?.[1] ?? 'unknown';
  const cubinDir = join(buildDir, CUBIN_DIR);
  mkdirSync(cubinDir, { recursive: true });
  const cubin = join(cubinDir, `${name}.cubin`);
  execFileSync('ptxas', [`-arch=${cubinArchOf(name)}`, '-O3', out, '-o', `${cubin}.tmp`], { stdio: 'inherit' });
  renameSync(`${cubin}.tmp`, cubin);
  manifest.kernels[name] = {
    source: sourceHash(cudaDir, file),
    ptxIsa: isa,
    ...(archOf(name) !== ARCH && { arch: archOf(name) }),
    cubin: { arch: cubinArchOf(name), ptx: bytesHash(readFileSync(out)) },
  };
  console.log(`build/${name}.ptx  (${archOf(name)}, PTX ISA ${isa}) and build/${CUBIN_DIR}/${name}.cubin (${cubinArchOf(name)})`);
}
writeFileSync(join(buildDir, 'ptx-manifest.json'), JSON.stringify(manifest, null, 2) + '\n');
