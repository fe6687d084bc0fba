// Each committed build/<name>.wasm must come from the committed wasm/<name>.c (npm run build:wasm).
import { createHash } from 'node:crypto';
import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
// @ts-expect-error: a plain .mjs build script, no type declarations
import { KERNELS, sourceHash } from '../../wasm/build.mjs';

describe('build/*.wasm', () => {
  it('lists the CPU kernel and the ec decoder', () => {
    expect(KERNELS).toEqual(['kernel', 'ec-decode']);
  });
  for (const name of KERNELS as string[]) {
    it(`build/${name}.wasm is built from the current wasm/${name}.c (else run npm run build:wasm and commit)`, () => {
      const manifest = JSON.parse(readFileSync(`build/${name}.wasm.json`, 'utf8'));
      expect(manifest.sourceSha256).toBe(sourceHash(`wasm/${name}.c`));
      expect(createHash('sha256').update(readFileSync(`build/${name}.wasm`)).digest('hex')).toBe(manifest.wasmSha256);
    });
  }
});
