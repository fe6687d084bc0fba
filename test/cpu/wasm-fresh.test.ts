// The committed build/kernel.wasm must come from the committed wasm/kernel.c (npm run build:wasm).
import { createHash } from 'node:crypto';
import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
// @ts-expect-error: a plain .mjs build script, no type declarations
import { sourceHash } from '../../wasm/build.mjs';

describe('build/kernel.wasm', () => {
  it('is built from the current wasm/kernel.c (else run npm run build:wasm and commit)', () => {
    const manifest = JSON.parse(readFileSync('build/kernel.wasm.json', 'utf8'));
    expect(manifest.sourceSha256).toBe(sourceHash('wasm/kernel.c'));
    expect(createHash('sha256').update(readFileSync('build/kernel.wasm')).digest('hex')).toBe(manifest.wasmSha256);
  });
});
