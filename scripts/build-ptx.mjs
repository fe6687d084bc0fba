#!/usr/bin/env node
// npm run build:ptx — compile every cuda/*.cu to build/<name>.ptx for the virtual architecture
// compute_80 (the driver JITs it for any GPU since Ampere), and record in build/ptx-manifest.json
// a hash of the sources each PTX was built from. test/cuda-host/ptx-fresh.test.ts recomputes the
// hashes (CI has no nvcc) and fails when a .cu or .cuh changed without a rebuild.
import { execFileSync } from 'node:child_process';
import { readFileSync, readdirSync, writeFileSync, renameSync } from 'node:fs';
import { join, dirname } from 'node:path';
import { fileURLToPath } from 'node:url';
import { sourceHash, archOf, ARCH } from './ptx-hash.mjs';

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
  manifest.kernels[name] = { source: sourceHash(cudaDir, file), ptxIsa: isa, ...(archOf(name) !== ARCH && { arch: archOf(name) }) };
  console.log(`build/${name}.ptx  (${archOf(name)}, PTX ISA ${isa})`);
}
writeFileSync(join(buildDir, 'ptx-manifest.json'), JSON.stringify(manifest, null, 2) + '\n');
