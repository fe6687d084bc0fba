// Streamed compress (api/compress-stream.ts): an input read a block of rows at a time writes the
// same bytes as the in-memory path, on odd sizes spanning several blocks, for every codec with a
// block encoder and every fixed-layout format, over a sharded input (shard edges inside blocks),
// with several blocks in flight in the final pass, reads and encoders on threads, and the codes
// kept in memory or in a temp file; a bad value in a late block (or shard) and a failure while
// writing leave no output and no temp file.
import * as fs from 'node:fs';
import * as path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { compress } from '../../dist/index.js';
import { setStreamBlockRowsForTests, setStreamMinBytesForTests } from '../../dist/api/compress-stream.js';
import { setCodesInMemoryForTests } from '../../dist/api/stream-blocks.js';
import { setShardsForTests } from '../../dist/backend/select.js';
import { setParallelReadForTests } from '../../dist/io/readers/parallel-read.js';
import { f32ToF16 } from '../../dist/vectors/dataset.js';
import { clustered, npyBytes, tempDir, writeNpy } from '../cli/helpers.js';

const dir = tempDir('stream');
const common = { device: 'cpu' as const, anchors: 8, iters: 12, sample: { rows: 1500 }, seed: 3 };

/** The file of one compress, streamed or read whole. */
async function bytesOf(input: string, tag: string, stream: boolean, o: Record<string, unknown>): Promise<{ bytes: Buffer; stats: Awaited<ReturnType<typeof compress>> }> {
  setStreamMinBytesForTests(stream ? 0 : Number.POSITIVE_INFINITY);
  const output = path.join(dir, `${tag}-${stream ? 'stream' : 'memory'}.vlc`);
  // The streamed path reads in rows ('vectors'), the whole-file readers in bytes.
  let streamed = false;
  const progress = { step: (label: string, unit: string) => ((streamed ||= label.startsWith('reading') && unit === 'vectors'), { update() {}, end() {} }) };
  const stats = await compress(input, { ...common, ...o, output, progress } as Parameters<typeof compress>[1]);
  expect(streamed).toBe(stream);
  return { bytes: fs.readFileSync(output), stats };
}

function writeFvecs(file: string, x: Float32Array, n: number, d: number): string {
  const buf = Buffer.alloc(n * (4 + 4 * d));
  for (let i = 0; i < n; i++) {
    buf.writeInt32LE(d, i * (4 + 4 * d));
    for (let k = 0; k < d; k++) buf.writeFloatLE(x[i * d + k], i * (4 + 4 * d) + 4 + 4 * k);
  }
  fs.writeFileSync(file, buf);
  return file;
}

describe('streamed compress', () => {
  beforeAll(() => setStreamBlockRowsForTests(16384));
  afterAll(() => {
    setCodesInMemoryForTests();
    setStreamBlockRowsForTests();
    setStreamMinBytesForTests();
    fs.rmSync(dir, { recursive: true, force: true });
  });

  // 3 blocks of 16,384 rows and a short one: every block boundary, an odd d.
  const n = 3 * 16384 + 37;
  const d = 7;
  const x = clustered(n, d, 5, 9);
  const npy = writeNpy(path.join(dir, 'x.npy'), x, n, d);

  for (const residual of ['int8', 'int4', 'none']) {
    it(`writes the in-memory path's bytes (${residual}, .npy f32, ${n} × ${d})`, async () => {
      const a = await bytesOf(npy, residual, true, { residual });
      const b = await bytesOf(npy, residual, false, { residual });
      expect(a.bytes.length).toBe(b.bytes.length);
      expect(a.bytes.equals(b.bytes)).toBe(true);
      expect(a.stats.n).toBe(n);
      expect(a.stats.bytes).toBe(b.stats.bytes);
    }, 120_000);
  }

  it('writes the same bytes from .npy f16 and .fvecs', async () => {
    const h = new Uint16Array(n * d);
    for (let i = 0; i < h.length; i++) h[i] = f32ToF16(x[i]);
    const f16 = path.join(dir, 'h.npy');
    fs.writeFileSync(f16, npyBytes('<f2', [n, d], new Uint8Array(h.buffer)));
    const fvecs = writeFvecs(path.join(dir, 'x.fvecs'), x, n, d);
    for (const [input, tag] of [[f16, 'f16'], [fvecs, 'fvecs']]) {
      const a = await bytesOf(input, tag, true, { residual: 'int8' });
      const b = await bytesOf(input, tag, false, { residual: 'int8' });
      expect(a.bytes.equals(b.bytes), tag).toBe(true);
    }
  }, 120_000);

  it('measures the quality on the rows it reads past 100,000 vectors: the same bytes', async () => {
    const N = 100_003, D = 3;
    const big = writeNpy(path.join(dir, 'big.npy'), clustered(N, D, 7, 6), N, D);
    const a = await bytesOf(big, 'big', true, { residual: 'int8' });
    const b = await bytesOf(big, 'big', false, { residual: 'int8' });
    expect(a.bytes.equals(b.bytes)).toBe(true);
  }, 120_000);

  it('refuses a NaN in the last block, naming its row, and leaves nothing behind', async () => {
    const bad = Float32Array.from(x);
    bad[(n - 2) * d + 3] = NaN;
    const input = writeNpy(path.join(dir, 'nan.npy'), bad, n, d);
    setStreamMinBytesForTests(0);
    const output = path.join(dir, 'nan.vlc');
    const before = fs.readdirSync(dir).sort();
    await expect(compress(input, { ...common, residual: 'int8', output })).rejects.toThrow(`row ${n - 2} has a non-finite value`);
    expect(fs.existsSync(output)).toBe(false);
    expect(fs.readdirSync(dir).sort()).toEqual(before);
  }, 120_000);

  it('with --drop-invalid, a bad row sends the run to the whole-file path, which drops it', async () => {
    const bad = Float32Array.from(x);
    bad[20000 * d] = Number.POSITIVE_INFINITY;
    const input = writeNpy(path.join(dir, 'inf.npy'), bad, n, d);
    setStreamMinBytesForTests(0);
    let units = '';
    const progress = { step: (label: string, unit: string) => ((units ||= label.startsWith('reading') ? unit : ''), { update() {}, end() {} }) };
    const stats = await compress(input, { ...common, residual: 'int8', dropInvalid: true, output: path.join(dir, 'inf.vlc'), progress });
    expect([stats.n, stats.dropped, stats.dropped_rows]).toEqual([n - 1, 1, [20000]]);
    expect(units).toBe('vectors'); // the streamed path looked first, then handed over
  }, 120_000);

  // Three shards whose edges fall inside blocks (and one of a single row).
  const cuts = [0, 20000, 20001, n];
  const shards = path.join(dir, 'shards');
  fs.mkdirSync(shards);
  cuts.slice(0, -1).forEach((c, k) => writeNpy(path.join(shards, `part-${k}.npy`), x.subarray(c * d, cuts[k + 1] * d), cuts[k + 1] - c, d));
  const glob = path.join(shards, 'part-*.npy');

  it('reads a sharded input (a glob) as its rows concatenated: the in-memory bytes', async () => {
    const a = await bytesOf(glob, 'glob', true, { residual: 'int8' });
    const b = await bytesOf(glob, 'glob', false, { residual: 'int8' });
    const whole = await bytesOf(npy, 'glob-whole', false, { residual: 'int8' });
    expect(a.stats.n).toBe(n);
    expect(a.bytes.equals(b.bytes)).toBe(true);
    expect(a.bytes.equals(whole.bytes)).toBe(true); // the shards' rows are x's rows
    expect(a.stats.input_format).toBe(b.stats.input_format);
  }, 120_000);

  it('several blocks in flight in the final pass (3 engines), codes in a temp file: the same bytes', async () => {
    const want = await bytesOf(glob, 'lanes-memory', false, { residual: 'int4' });
    setShardsForTests(3);
    setCodesInMemoryForTests(false);
    try {
      const got = await bytesOf(glob, 'lanes', true, { residual: 'int4' });
      expect(got.bytes.equals(want.bytes)).toBe(true);
    } finally {
      setShardsForTests();
      setCodesInMemoryForTests();
    }
  }, 120_000);

  it('reads on threads and encodes on the encoder threads (blocks of 32,768 x 128): the same bytes', async () => {
    const N = 2 * 32768 + 5, D = 128; // a block of two encoder blocks: 2^22 values, the encoder's threads
    const wide = writeNpy(path.join(dir, 'wide.npy'), clustered(N, D, 4, 3), N, D);
    const o = { residual: 'int8', anchors: 4, iters: 4, sample: { rows: 600 } };
    const b = await bytesOf(wide, 'wide', false, o);
    setParallelReadForTests(0, 1 << 20);
    setStreamBlockRowsForTests(32768);
    try {
      const a = await bytesOf(wide, 'wide', true, o);
      expect(a.bytes.equals(b.bytes)).toBe(true);
    } finally {
      setParallelReadForTests();
      setStreamBlockRowsForTests(16384);
    }
  }, 180_000);

  it('names the shard and its row of a bad value, as the whole-file path does', async () => {
    const bad = path.join(dir, 'bad-shards');
    fs.mkdirSync(bad);
    const y = Float32Array.from(x);
    y[(20001 + 7) * d + 1] = NaN; // row 7 of the third shard
    cuts.slice(0, -1).forEach((c, k) => writeNpy(path.join(bad, `part-${k}.npy`), y.subarray(c * d, cuts[k + 1] * d), cuts[k + 1] - c, d));
    const input = path.join(bad, 'part-*.npy');
    const before = fs.readdirSync(dir).sort();
    const messages: string[] = [];
    for (const stream of [true, false]) {
      setStreamMinBytesForTests(stream ? 0 : Number.POSITIVE_INFINITY);
      const output = path.join(dir, `bad-${stream}.vlc`);
      const e = await compress(input, { ...common, residual: 'int8', output }).then(() => undefined, (err: Error) => err);
      expect(e?.message).toContain('part-2.npy');
      expect(e?.message).toContain('row 7 has a non-finite value');
      messages.push(e!.message);
    }
    expect(messages[0]).toBe(messages[1]);
    expect(fs.readdirSync(dir).sort()).toEqual(before);
  }, 120_000);

  it('leaves no output and no temp file when writing fails', async () => {
    setStreamMinBytesForTests(0);
    const output = path.join(dir, 'fail.vlc');
    const before = fs.readdirSync(dir).sort();
    const progress = {
      step: (label: string) => ({
        update() {
          if (label.startsWith('writing')) throw new Error('disk gone');
        },
        end() {},
      }),
    };
    for (const memory of [true, false]) {
      setCodesInMemoryForTests(memory);
      await expect(compress(npy, { ...common, residual: 'int8', output, progress })).rejects.toThrow('disk gone');
      expect(fs.existsSync(output)).toBe(false);
      expect(fs.readdirSync(dir).sort()).toEqual(before);
    }
    setCodesInMemoryForTests();
  }, 120_000);
});
