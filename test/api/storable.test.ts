// Residual codes live in one typed array per codec (n·d for int8/int4, n·M for pq), which holds at
// most 2^32 − 1 elements: compress leaves such a codec out before training (or refuses it when it
// was asked for), rather than failing after it. Sizes only: no vectors are allocated here.
import { describe, expect, it } from 'vitest';
import { storable as storableCodec } from '../../dist/codecs/registry/index.js';

describe('codecs whose codes fit one array', () => {
  it('int8/int4 up to 2^32 − 1 values, pq up to 2^32 − 1 codes', () => {
    const limit = 2 ** 32 - 1;
    expect(storableCodec({ mode: 'none' }, 1e9, 768, 65536)).toBe(true);
    expect(storableCodec({ mode: 'int8' }, 10_000_000, 384, 4096)).toBe(true); // 3.84e9 values
    expect(storableCodec({ mode: 'int8' }, 10_000_000, 768, 4096)).toBe(false); // 7.68e9
    expect(storableCodec({ mode: 'int4' }, 10_000_000, 768, 4096)).toBe(false); // one code a byte in memory
    expect(storableCodec({ mode: 'int8' }, Math.floor(limit / 128), 128, 1024)).toBe(false); // the payload adds 4d bytes of scales
    expect(storableCodec({ mode: 'int8' }, Math.floor((limit - 4 * 128) / 128), 128, 1024)).toBe(true);
    expect(storableCodec({ mode: 'pq', subspaces: 96, bits: 8 }, 10_000_000, 768, 4096)).toBe(true);
    expect(storableCodec({ mode: 'pq', subspaces: 192, bits: 8 }, 30_000_000, 768, 4096)).toBe(false);
  });
});
