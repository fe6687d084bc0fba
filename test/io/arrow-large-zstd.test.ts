// Arrow LargeList<Float> columns (int64 offsets: what HF datasets and polars often write) and
// Feather/IPC files whose buffers are ZSTD frames (pyarrow's `compression="zstd"`). The ZSTD
// frames are made by the reference `zstd` tool, i.e. libzstd, the library Arrow C++ writes with.
import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { Float16, Float32, Float64 } from 'apache-arrow';
import { readDataset } from '../../dist/io/read.js';
import { f16ToF32, viewAll } from '../../dist/vectors/dataset.js';
import { zstdDecode } from '../../dist/io/readers/arrow-codecs.js';
import { asNumbers, expectUsage, matrix, scratchDir, writeFile } from './helpers.js';
import { hasZstd, largeListFile, zstdFrame } from './arrow-writers.js';

const dir = scratchDir('arrow-large');

describe('Arrow LargeList<Float>', () => {
  it.each([
    ['Float32 file, one batch', 'l32.arrow', new Float32(), {}],
    ['Float32 stream, 3 batches', 'l32.arrows', new Float32(), { stream: true, batchRows: 3 }],
    ['Float64 file', 'l64.arrow', new Float64(), {}],
    ['Float16 file, 2 batches', 'l16.feather', new Float16(), { batchRows: 4 }],
  ] as const)('reads %s', async (_label, name, elem, o) => {
    const p = largeListFile(dir, name, matrix(7, 13), 7, 13, { elem, ...o });
    const ds = await readDataset(p);
    expect([ds.n, ds.d, ds.dtype]).toEqual([7, 13, elem instanceof Float16 ? 'f16' : 'f32']);
    expect(asNumbers(ds, f16ToF32)).toEqual(Array.from(matrix(7, 13)));
    expect(ds.format).toMatch(/LargeList/);
  });

  it('names a ragged row and a null row', async () => {
    const rows: (number[] | null)[] = Array.from({ length: 7 }, (_, i) => Array.from(matrix(7, 13).subarray(i * 13, (i + 1) * 13)));
    rows[5] = rows[5]!.slice(0, 12);
    await expectUsage(readDataset(largeListFile(dir, 'ragged.arrow', matrix(7, 13), 7, 13, { rows })), "row 5 of column 'vec' has 12 values but row 0 has 13");
    rows[5] = null;
    await expectUsage(readDataset(largeListFile(dir, 'null.arrow', matrix(7, 13), 7, 13, { rows })), "row 5 of column 'vec' is null");
    const ds = await readDataset(largeListFile(dir, 'null2.arrow', matrix(7, 13), 7, 13, { rows }), { dropInvalid: true });
    expect([ds.n, ds.dropped]).toEqual([6, 1]);
  });
});

describe.skipIf(!hasZstd)('Arrow with ZSTD-compressed buffers (needs the zstd tool to write them)', () => {
  it.each([
    ['Feather FixedSizeList<Float32>, 3 batches', 'z1.feather', { fixed: true, batchRows: 3 }],
    ['LargeList<Float32> stream', 'z2.arrows', { stream: true }],
    ['LargeList<Float16> file', 'z3.feather', { elem: new Float16() }],
  ] as const)('reads %s', async (_label, name, o) => {
    const p = largeListFile(dir, name, matrix(7, 13), 7, 13, { zstd: true, ...o });
    const ds = await readDataset(p);
    expect(asNumbers(ds, f16ToF32)).toEqual(Array.from(matrix(7, 13)));
  });

  it('decodes multi-block frames of the size one 64K-row batch makes, with and without a content size', () => {
    // libzstd cuts frames into 128 KiB blocks; a pyarrow Feather batch of 65,536 rows x 32 f32 is 8 MiB.
    const bytes = new Uint8Array(new Float32Array(Array.from({ length: 1 << 21 }, (_, i) => Math.sin(i) * 1e3)).buffer);
    for (const withSize of [true, false]) {
      const frame = zstdFrame(bytes, withSize);
      expect(frame.length).toBeLessThan(bytes.length);
      expect(Buffer.compare(Buffer.from(zstdDecode(frame)), Buffer.from(bytes))).toBe(0);
    }
  });

  it('a damaged frame is one clear error', async () => {
    const p = largeListFile(dir, 'zbad.feather', matrix(50, 13), 50, 13, { zstd: true, fixed: true });
    const bytes = new Uint8Array(readFileSync(p));
    // Find the first ZSTD magic after the schema and damage the frame right after its header.
    let at = -1;
    for (let i = 0; i + 4 < bytes.length && at < 0; i++) if (bytes[i] === 0x28 && bytes[i + 1] === 0xb5 && bytes[i + 2] === 0x2f && bytes[i + 3] === 0xfd) at = i;
    expect(at).toBeGreaterThan(0);
    bytes.fill(0xff, at + 6, at + 40);
    const bad = writeFile(dir, 'zbad2.feather', bytes);
    await expectUsage(readDataset(bad), /corrupt Arrow data|cannot decode/);
  });
});

describe('Arrow LargeList fast path', () => {
  it('an uncompressed LargeList<Float32> column is read straight from the file', async () => {
    const { RecordBatchReader } = await import('apache-arrow');
    const { readArrowDirect } = await import('../../dist/io/readers/arrow-direct.js');
    const { openFileSource } = await import('../../dist/io/readers/source.js');
    const p = largeListFile(dir, 'direct.arrow', matrix(7, 13), 7, 13, { batchRows: 3 });
    const src = openFileSource(p);
    try {
      const reader = RecordBatchReader.from(readFileSync(p));
      reader.open();
      const fast = await readArrowDirect(src, reader, 1);
      expect(fast, 'fast path taken').toBeDefined();
      expect(Array.from(viewAll(fast!))).toEqual(Array.from(matrix(7, 13)));
    } finally {
      src.close();
    }
  });
});
