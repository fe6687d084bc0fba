// Files whose lengths and counts lie: every length and offset is checked against the bytes present
// before anything is allocated from it, so a small file claiming 2^28 rows fails at once with one
// line instead of spinning or allocating gigabytes (issue 16, class 3), and a record that is not
// what its extension says is named as such (class 6).
import * as fs from 'node:fs';
import { describe, expect, it } from 'vitest';
import { parquetMetadata } from 'hyparquet';
import { readDataset } from '../../dist/io/read.js';
import { writeArrow } from '../../dist/io/writers/arrow.js';
import { rowsOf } from '../../dist/io/rows.js';
import { expectUsage, matrix, scratchDir, writeFile } from './helpers.js';

const dir = scratchDir('lying');
const fixture = (name: string) => new URL(`./fixtures/${name}`, import.meta.url).pathname;

async function arrowBytes(o: { ipc?: 'file' | 'stream'; lz4?: boolean }, n = 7, d = 13): Promise<Buffer> {
  const chunks: Uint8Array[] = [];
  await writeArrow({ write: async (c) => void chunks.push(Buffer.from(c)) }, rowsOf(matrix(n, d), n, d), { dtype: 'f32', ...o });
  return Buffer.concat(chunks);
}

/** Every little-endian int64 equal to `from` (in the metadata, before the first `limit` bytes) becomes `to`. */
function replaceInt64(bytes: Buffer, from: bigint, to: bigint, start = 0, end = bytes.length): Buffer {
  const out = Buffer.from(bytes);
  for (let i = start; i + 8 <= end; i++) {
    if (out.readBigInt64LE(i) === from) {
      out.writeBigInt64LE(to, i);
      i += 7;
    }
  }
  return out;
}

/** Thrift compact i64: zigzag varint. */
function varint(v: bigint): number[] {
  let z = (v << 1n) ^ (v >> 63n);
  const out: number[] = [];
  do {
    let b = Number(z & 0x7fn);
    z >>= 7n;
    if (z) b |= 0x80;
    out.push(b);
  } while (z);
  return out;
}

/** Replace, inside the Parquet footer, i64 fields (header byte 0x16) holding `from` by `to` (same varint length). */
function forgeParquet(file: string, from: bigint, to: bigint, only?: 'first' | 'last'): Buffer {
  const b = Buffer.from(fs.readFileSync(file));
  const footer = b.length - 8 - b.readUInt32LE(b.length - 8);
  const [a, z] = [varint(from), varint(to)];
  expect(z.length).toBe(a.length);
  const hits: number[] = [];
  for (let i = footer; i < b.length - 8 - a.length; i++) if (b[i] === 0x16 && a.every((x, k) => b[i + 1 + k] === x)) hits.push(i + 1);
  expect(hits.length).toBeGreaterThan(0);
  for (const h of only === 'first' ? hits.slice(0, 1) : only === 'last' ? hits.slice(-1) : hits) b.set(z, h);
  return b;
}

describe('Arrow with lying lengths', () => {
  it.each(['file', 'stream'] as const)('a 1 KB %s whose batch claims 2^28 rows fails at once', async (ipc) => {
    const bytes = replaceInt64(replaceInt64(await arrowBytes({ ipc }), 7n, 1n << 28n), 91n, 13n << 28n);
    expect(bytes.length).toBeLessThan(1024);
    const p = writeFile(dir, `rows-2e28.${ipc === 'file' ? 'arrow' : 'arrows'}`, bytes);
    const t0 = performance.now();
    await expectUsage(readDataset(p), 'Arrow record batch 0 claims', 'values buffer can hold at most', 'corrupt');
    expect(performance.now() - t0).toBeLessThan(3000);
  });

  it('an LZ4 file whose batch claims more than LZ4 can expand to', async () => {
    const bytes = replaceInt64(replaceInt64(await arrowBytes({ lz4: true }), 7n, 1n << 28n), 91n, 13n << 28n);
    const p = writeFile(dir, 'lz4-rows.arrow', bytes);
    await expectUsage(readDataset(p), 'Arrow record batch 0 claims', 'can hold at most');
  });

  it('a buffer that lies outside its batch body', async () => {
    const good = await arrowBytes({});
    // The values buffer (and the body) are 368 bytes long: claim 100000.
    const p = writeFile(dir, 'buffer-outside.arrow', replaceInt64(good, 368n, 100000n));
    await expectUsage(readDataset(p), 'record batch 0', /outside its 368-byte body|past the end of the/);
  });

  it('a stream cut inside a batch body', async () => {
    const good = await arrowBytes({ ipc: 'stream' });
    const p = writeFile(dir, 'cut.arrows', good.subarray(0, good.length - 200));
    const t0 = performance.now();
    await expectUsage(readDataset(p), /past the end|corrupt|truncated/);
    expect(performance.now() - t0).toBeLessThan(3000);
  });

  it('a batch claiming a negative row count', async () => {
    const p = writeFile(dir, 'negative-rows.arrow', replaceInt64(await arrowBytes({}), 7n, -5n));
    await expectUsage(readDataset(p), /record batch 0|corrupt/);
  });
});

describe('Parquet with lying lengths', () => {
  it('a footer claiming more rows than its row groups hold', async () => {
    const p = writeFile(dir, 'rows-footer.parquet', forgeParquet(fixture('null_row.parquet'), 7n, 63n, 'first'));
    await expectUsage(readDataset(p, { dropInvalid: true }), 'footer claims 63 rows but its row groups hold 7');
  });
  it('a row group claiming more rows than its pages hold', async () => {
    const p = writeFile(dir, 'rows-group.parquet', forgeParquet(fixture('null_row.parquet'), 7n, 63n));
    await expectUsage(readDataset(p, { dropInvalid: true }), 'holds 7 rows, not the 63 its footer claims');
    await expectUsage(readDataset(p), 'holds 7 rows, not the 63 its footer claims');
  });
  it('a column chunk claiming bytes past the end of the file', async () => {
    const file = fixture('paged.parquet');
    const b = fs.readFileSync(file);
    const meta = parquetMetadata(b.buffer.slice(b.byteOffset, b.byteOffset + b.length));
    const size = meta.row_groups[0].columns[0].meta_data!.total_compressed_size;
    const p = writeFile(dir, 'chunk-past-end.parquet', forgeParquet(file, size, size + 3000n, 'first'));
    await expectUsage(readDataset(p), 'claims bytes', 'outside the file', 'corrupt');
  });
});

describe('records that are not what they claim', () => {
  const fvecs = (dim: number, records = 3) => {
    const b = Buffer.alloc(records * (4 + 4 * 4));
    for (let r = 0; r < records; r++) b.writeInt32LE(dim, r * 20);
    return b;
  };
  it('an fvecs file with dimension -1 is named as such, not taken for an Arrow stream', async () => {
    await expectUsage(readDataset(writeFile(dir, 'minus1.fvecs', fvecs(-1))), 'negative dimension (-1)', '.fvecs');
  });
  it('an fvecs file with an absurd dimension', async () => {
    await expectUsage(readDataset(writeFile(dir, 'absurd.fvecs', fvecs(1 << 30))), 'dimension 1073741824, more than any embedding');
  });
  it('a bvecs file with a negative dimension', async () => {
    await expectUsage(readDataset(writeFile(dir, 'neg.bvecs', fvecs(-7))), 'negative dimension (-7)', '.bvecs');
  });
  it('JSONL whose vectors are ragged', async () => {
    const p = writeFile(dir, 'ragged.jsonl', '{"embedding": [1, 2, 3]}\n{"embedding": [1, 2]}\n');
    await expectUsage(readDataset(p), 'line 2', 'has 2 values but the first vector has 3');
  });
  it('JSONL with a null vector', async () => {
    const p = writeFile(dir, 'null.jsonl', '{"embedding": [1, 2, 3]}\n{"embedding": null}\n');
    await expectUsage(readDataset(p), "line 2 has no array field 'embedding'");
  });
});
