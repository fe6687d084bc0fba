// Cross-format behaviour: JSONL, stdin, sniffing, file-system errors, NaN/Inf handling.
import { spawnSync } from 'node:child_process';
import * as fs from 'node:fs';
import * as path from 'node:path';
import { describe, expect, it } from 'vitest';
import { readDataset } from '../../dist/io/read.js';
import { asNumbers, expectUsage, halfBits, matrix, npyBytes, scratchDir, writeFile } from './helpers.js';
import { f16ToF32, viewAll } from '../../dist/vectors/dataset.js';

const dir = scratchDir('inputs');
const want = Array.from(matrix(7, 13));
const jsonl = (rows: unknown[]) => rows.map((r) => JSON.stringify(r)).join('\n') + '\n';
const rows = Array.from({ length: 7 }, (_, i) => want.slice(i * 13, (i + 1) * 13));

describe('JSONL', () => {
  it('reads the "embedding" field', async () => {
    const p = writeFile(dir, 'a.jsonl', jsonl(rows.map((v, i) => ({ id: i, embedding: v, tags: ['x'] }))));
    const ds = await readDataset(p);
    expect([ds.n, ds.d, ds.format]).toEqual([7, 13, "jsonl 'embedding'"]);
    expect(Array.from(viewAll(ds))).toEqual(want);
  });
  it('else the only array field; --field picks one; blank lines and CRLF are fine', async () => {
    const text = rows.map((v) => JSON.stringify({ text: 'hi', vec: v })).join('\r\n\n');
    const ds = await readDataset(writeFile(dir, 'b.ndjson', text));
    expect(Array.from(viewAll(ds))).toEqual(want);
    const two = writeFile(dir, 'c.jsonl', jsonl(rows.map((v) => ({ a: v, b: v.slice(0, 3) }))));
    await expectUsage(readDataset(two), 'several array fields (a, b)', '--field NAME');
    expect((await readDataset(two, { field: 'b' })).d).toBe(3);
  });
  it('bad JSON, missing field, ragged rows, non-numbers are named by line', async () => {
    await expectUsage(readDataset(writeFile(dir, 'd.jsonl', '{"embedding": [1, 2]}\n{"embedding": [1,\n')), 'line 2 is not valid JSON');
    await expectUsage(readDataset(writeFile(dir, 'e.jsonl', '{"embedding": [1, 2]}\n{"other": [1, 2]}\n')), "line 2 has no array field 'embedding'", 'fields: other');
    await expectUsage(readDataset(writeFile(dir, 'f.jsonl', '{"embedding": [1, 2]}\n{"embedding": [1, 2, 3]}\n')), "line 2: field 'embedding' has 3 values but the first vector has 2");
    await expectUsage(readDataset(writeFile(dir, 'g.jsonl', '{"embedding": [1, "2"]}\n')), 'value 1 is not a number');
  });
});

describe('stdin', () => {
  const script = `
    import { readDataset } from ${JSON.stringify(path.resolve('dist/io/read.js'))};
    import { viewAll } from ${JSON.stringify(path.resolve('dist/vectors/dataset.js'))};
    try { const ds = await readDataset('-'); console.log(JSON.stringify([ds.n, ds.d, ds.dtype, ds.format, viewAll(ds)[14], viewAll(ds)[viewAll(ds).length - 1]])); }
    catch (e) { console.log(e.name + ': ' + e.message); }`;
  /** Bytes through a pipe. */
  const readViaStdin = (input: Uint8Array) =>
    spawnSync(process.execPath, ['--input-type=module', '-e', script], { input, encoding: 'utf8', maxBuffer: 1 << 26 }).stdout.trim();
  /** stdin redirected from a file (`vlc ... - < file`): read by position, not buffered. */
  const readViaRedirect = (file: string) => {
    const fd = fs.openSync(file, 'r');
    try {
      return spawnSync(process.execPath, ['--input-type=module', '-e', script], { stdio: [fd, 'pipe', 'pipe'], encoding: 'utf8' }).stdout.trim();
    } finally {
      fs.closeSync(fd);
    }
  };

  it('reads a pipe larger than one 16 MiB buffer block, and a redirected file', () => {
    const [n, d] = [20_000, 300]; // 24 MB
    const bytes = npyBytes({ descr: '<f4', shape: [n, d] });
    const last = matrix(n, d)[n * d - 1];
    expect(JSON.parse(readViaStdin(bytes))).toEqual([n, d, 'f32', 'npy f32', want[14], last]);
    const file = writeFile(dir, 'redirect.npy', bytes);
    expect(JSON.parse(readViaRedirect(file))).toEqual([n, d, 'f32', 'npy f32', want[14], last]);
  });

  it('reads an .npy piped on stdin (sniffed from the bytes)', () => {
    expect(JSON.parse(readViaStdin(npyBytes({ descr: '<f2', shape: [7, 13] })))).toEqual([7, 13, 'f16', 'npy f16', expect.any(Number), expect.any(Number)]);
  });
  it('reads JSONL on stdin', () => {
    expect(JSON.parse(readViaStdin(Buffer.from(jsonl(rows.map((embedding) => ({ embedding }))))))).toEqual([7, 13, 'f32', "jsonl 'embedding'", want[14], want[90]]);
  });
  it('reads Arrow IPC file and stream bytes on stdin', async () => {
    const { writeArrow } = await import('../../dist/io/writers/arrow.js');
    for (const ipc of ['file', 'stream'] as const) {
      const chunks: Uint8Array[] = [];
      await writeArrow({ write: async (c: Uint8Array) => void chunks.push(c.slice()) }, (await import('../../dist/io/rows.js')).rowsOf(matrix(7, 13), 7, 13), { dtype: 'f32', ipc, batchRows: 3 });
      const [n, d, dtype, format, v14] = JSON.parse(readViaStdin(Buffer.concat(chunks)));
      expect(JSON.parse(readViaRedirect(writeFile(dir, `stdin-${ipc}.arrow`, Buffer.concat(chunks))))[3]).toBe(format);
      expect([n, d, dtype, v14]).toEqual([7, 13, 'f32', want[14]]);
      expect(format).toMatch(ipc === 'file' ? /^arrow FixedSizeList/ : /^arrow stream/);
    }
  });
  it('empty stdin', () => {
    expect(readViaStdin(new Uint8Array(0))).toBe('UsageError: stdin: is empty (0 bytes)');
  });
});

describe('file-system and format errors', () => {
  it('missing file', async () => {
    await expectUsage(readDataset(path.join(dir, 'nope.npy')), 'nope.npy: no such file');
  });
  it('a directory', async () => {
    await expectUsage(readDataset(dir), 'is a directory');
  });
  it('empty file', async () => {
    await expectUsage(readDataset(writeFile(dir, 'empty.npy', '')), 'is empty (0 bytes)');
  });
  it('unknown magic lists the supported formats', async () => {
    const p = writeFile(dir, 'mystery.xyz', '<!DOCTYPE html><html></html>');
    await expectUsage(readDataset(p), 'unrecognized format (first bytes: 3c 21 44 4f', 'supported: .npy, .npz, .fvecs', 'Parquet', '--format');
  });
  it('an extension whose magic is missing', async () => {
    await expectUsage(readDataset(writeFile(dir, 'fake.parquet', 'not parquet at all, just text')), 'not a valid parquet file (wrong magic bytes');
  });
  it('unknown --format value', async () => {
    await expectUsage(readDataset(writeFile(dir, 'x.npy', npyBytes({ descr: '<f4', shape: [7, 13] })), { format: 'xlsx' }), '--format must be one of npy, npz, fvecs');
  });
  it('--format forces a reader over the magic', async () => {
    // An .npy read as raw f32: its 128-byte header becomes two 16-dim rows before the 4 real ones.
    const p = writeFile(dir, 'forced.npy', npyBytes({ descr: '<f4', shape: [4, 16] }));
    // Header text read as floats holds values far too large to compute with: --drop-invalid skips them.
    const ds = await readDataset(p, { format: 'raw', dim: 16, dropInvalid: true });
    expect([ds.n + ds.dropped, ds.d, ds.format]).toEqual([6, 16, 'raw f32']);
    expect(Array.from(viewAll(ds).subarray((ds.n - 4) * 16))).toEqual(Array.from(matrix(4, 16)));
  });
});

describe('NaN and Inf', () => {
  it('names the first bad row and suggests --drop-invalid (f32)', async () => {
    const x = matrix(7, 13);
    x[3 * 13 + 5] = NaN;
    x[5 * 13] = Infinity;
    const p = writeFile(dir, 'nan.npy', npyBytes({ descr: '<f4', shape: [7, 13], body: new Uint8Array(x.buffer) }));
    await expectUsage(readDataset(p), 'row 3 has a non-finite value (NaN in dimension 5)', '--drop-invalid');
    const ds = await readDataset(p, { dropInvalid: true });
    expect([ds.n, ds.dropped]).toEqual([5, 2]);
    expect(ds.buffer).toBeInstanceOf(SharedArrayBuffer);
    expect(Array.from(viewAll(ds).subarray(3 * 13, 4 * 13))).toEqual(want.slice(4 * 13, 5 * 13));
  });
  it('f16 Inf rows are found and dropped', async () => {
    const u16 = Uint16Array.from(matrix(7, 13), halfBits);
    u16[6 * 13 + 12] = 0xfc00; // -Inf in the last row
    const p = writeFile(dir, 'inf16.npy', npyBytes({ descr: '<f2', shape: [7, 13], body: new Uint8Array(u16.buffer) }));
    await expectUsage(readDataset(p), 'row 6 has a non-finite value (Inf in dimension 12)');
    const ds = await readDataset(p, { dropInvalid: true });
    expect([ds.n, ds.dropped, ds.dtype]).toEqual([6, 1, 'f16']);
    expect(asNumbers(ds, f16ToF32)).toEqual(want.slice(0, 6 * 13));
  });
  it('JSON null counts as NaN', async () => {
    const text = jsonl([{ embedding: [1, 2] }, { embedding: [null, 2] }]);
    await expectUsage(readDataset(writeFile(dir, 'null.jsonl', text)), 'row 1 has a non-finite value');
  });
  it('every row bad', async () => {
    const p = writeFile(dir, 'allnan.npy', npyBytes({ descr: '<f4', shape: [2, 3], body: new Uint8Array(new Float32Array(6).fill(NaN).buffer) }));
    await expectUsage(readDataset(p, { dropInvalid: true }), 'all 2 rows have NaN or Inf');
  });
});
