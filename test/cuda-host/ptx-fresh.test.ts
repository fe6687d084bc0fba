// The committed PTX (build/*.ptx) must be built from the current cuda/*.cu sources: CI has no
// nvcc, so this compares the source hashes recorded by `npm run build:ptx` with the sources.
import { describe, expect, it } from 'vitest';
import { existsSync, readFileSync, readdirSync } from 'node:fs';
import { join } from 'node:path';
// @ts-expect-error — a plain .mjs helper shared with scripts/build-ptx.mjs
import { sourceHash, archOf, ARCH, CUBIN_DIR, cubinArchOf, bytesHash } from '../../scripts/ptx-hash.mjs';

const root = join(__dirname, '..', '..');
const manifest = JSON.parse(readFileSync(join(root, 'build', 'ptx-manifest.json'), 'utf8'));
const sources = readdirSync(join(root, 'cuda')).filter((f) => f.endsWith('.cu')).sort();

describe('committed PTX is fresh', () => {
  it('every cuda/*.cu has a PTX and a manifest entry, and nothing else does', () => {
    expect(Object.keys(manifest.kernels).sort()).toEqual(sources.map((f) => f.slice(0, -3)));
    for (const f of sources) expect(existsSync(join(root, 'build', f.replace(/\.cu$/, '.ptx')))).toBe(true);
    expect(manifest.arch).toBe(ARCH);
  });

  for (const f of sources) {
    it(`build/${f.replace(/\.cu$/, '.ptx')} matches cuda/${f} (else run npm run build:ptx)`, () => {
      expect(sourceHash(join(root, 'cuda'), f)).toBe(manifest.kernels[f.slice(0, -3)].source);
      const ptx = readFileSync(join(root, 'build', f.replace(/\.cu$/, '.ptx')), 'utf8');
      const arch: string = archOf(f.slice(0, -3));
      expect(manifest.kernels[f.slice(0, -3)].arch ?? ARCH).toBe(arch);
      expect(ptx).toMatch(new RegExp(`^\\.target sm_${arch.replace('compute_', '')}$`, 'm'));
    });
    it(`build/${CUBIN_DIR}/${f.replace(/\.cu$/, '.cubin')} was compiled from build/${f.replace(/\.cu$/, '.ptx')} (else run npm run build:ptx)`, () => {
      const name = f.slice(0, -3);
      const ptx = readFileSync(join(root, 'build', `${name}.ptx`));
      expect(manifest.kernels[name].cubin).toEqual({ arch: cubinArchOf(name), ptx: bytesHash(ptx) });
      const cubin = readFileSync(join(root, 'build', CUBIN_DIR, `${name}.cubin`));
      expect([...cubin.subarray(0, 4)]).toEqual([0x7f, 0x45, 0x4c, 0x46]); // an ELF image
    });
  }
});
