// Residual codes are held in pieces (vectors/codes.ts), not in one typed array of at most 2^32 − 1
// elements: every codec is storable at any n (memory is the only bound), so compress no longer
// leaves int8/int4 out of a 50,000,000 × 128 input. Sizes only: no vectors are allocated here.
import { describe, expect, it } from 'vitest';
import { storable as storableCodec } from '../../dist/codec-registry/index.js';

describe('codecs whose codes pass one array', () => {
  it('int8/int4, pq and bits at more than 2^32 − 1 codes', () => {
    expect(storableCodec({ mode: 'none' }, 1e9, 768, 65536)).toBe(true);
    expect(storableCodec({ mode: 'int8' }, 50_000_000, 128, 65536)).toBe(true); // 6.4e9 codes: left out before
    expect(storableCodec({ mode: 'int4' }, 10_000_000, 768, 4096)).toBe(true);
    expect(storableCodec({ mode: 'pq', subspaces: 192, bits: 8 }, 30_000_000, 768, 4096)).toBe(true);
    // ec: a 6.4e9-byte section (past 4 GiB) is written as its head and blocks, and read through views.
    expect(storableCodec({ mode: 'ec', payload: 6_400_000_000, n: 50_000_000 }, 50_000_000, 128, 65536)).toBe(true);
    expect(storableCodec({ mode: 'bits', codeBytes: 384 }, 30_000_000, 768, 4096)).toBe(true);
  });
});
