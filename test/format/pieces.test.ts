// Codes and sections held in pieces (vectors/codes.ts, io/vlc/payload.ts): with the piece size
// shrunk to a few rows, a few-hundred-row file has its codes, its payloads and its checksums in
// dozens of pieces, and every piece boundary is crossed — the file bytes, the codes, the decoded
// vectors, search and decompress must be those of one piece, and every damage still refused.
// (A real 2^32-code file is not made here: pieces.arith.test.ts checks the arithmetic past 2^32.)
import * as fs from 'node:fs';
import * as path from 'node:path';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { compress } from '../../dist/api/compress.js';
import { decompress } from '../../dist/api/decompress.js';
import { openVlc } from '../../dist/api/vectors.js';
import { cpuKnn, createCpuBackend } from '../../dist/backend/cpu/index.js';
import { encodeBits } from '../../dist/codecs/bits-train.js';
import { encodeScalar } from '../../dist/codecs/scalar.js';
import { encodePq } from '../../dist/codec-train/pq.js';
import { parallelPayloadCrcs } from '../../dist/io/vlc/checksums.js';
import { crc32c } from '../../dist/io/vlc/crc32c.js';
import { decodeVlc, decodeVlcHeader, encodeVlcBytes, type VlcFile } from '../../dist/io/vlc/format.js';
import { Payload } from '../../dist/io/vlc/payload.js';
import { reconstruct } from '../../dist/io/vlc/reconstruct.js';
import { rowsOf } from '../../dist/io/rows.js';
import { writeVectors } from '../../dist/io/write.js';
import { searchCompressed, vlcSearchIndex } from '../../dist/search/index.js';
import { setMaxViewBytesForTests } from '../../dist/vectors/dataset.js';
import { clustered, tempDir } from '../cli/helpers.js';
import { rng } from '../rng.js';
import { expectEveryCutFails, expectEveryFlipFails } from './damage.js';

const n = 301, d = 10;
/** Views of 41 bytes (one f32 row of the vectors, the least a view may be): 4 rows of int8 codes a piece, payloads checked 41 bytes at a time. */
const SMALL = 4 * d + 1;
const x = clustered(n, d, 4, 6);
const dir = tempDir('pieces');
const input = path.join(dir, 'x.npy');
/** The file of each codec, written with the default (one-piece) views. */
const files: Record<string, string> = {};
const CODECS: Array<[string, Record<string, unknown>]> = [
  ['int8', { residual: 'int8' }],
  ['int4', { residual: 'int4' }],
  ['pq', { residual: 'pq', pq: 3 }],
  ['pq4', { residual: 'pq', pq: 3, pqBits: 4 }],
  ['bits', { residual: 'bits', bytes: 9 }],
];

beforeAll(async () => {
  await writeVectors(input, rowsOf(x, n, d), { format: 'npy' });
  for (const [name, o] of CODECS) {
    files[name] = path.join(dir, `${name}.vlc`);
    await compress(input, { output: files[name], anchors: 7, device: 'cpu', iters: 5, ...o });
  }
}, 120_000);
afterAll(() => fs.rmSync(dir, { recursive: true, force: true }));
afterEach(() => setMaxViewBytesForTests());

/** The file decoded with pieces of `SMALL` bytes (its codes then in many pieces). */
function decodeSmall(bytes: Uint8Array): VlcFile {
  setMaxViewBytesForTests(SMALL);
  try {
    return decodeVlc(bytes, 'x.vlc');
  } finally {
    setMaxViewBytesForTests();
  }
}

describe('codes and sections in many pieces', () => {
  it.each(CODECS.map(([c]) => c))('%s: decoded in pieces, written again from its pieces, the same bytes, codes and vectors', (codec) => {
    const bytes = new Uint8Array(fs.readFileSync(files[codec]));
    const one = decodeVlc(bytes, 'x.vlc');
    const many = decodeSmall(bytes);
    const codes = many.residuals as unknown as { codes: { pieces: unknown[] } };
    expect(codes.codes.pieces.length).toBeGreaterThan(5);
    expect([...(many.residuals as unknown as { codes: Iterable<number> }).codes]).toEqual([...(one.residuals as unknown as { codes: Iterable<number> }).codes]);
    setMaxViewBytesForTests(SMALL);
    const again = encodeVlcBytes({ manifest: many.manifest, anchors: many.anchors, assignments: many.assignments, residuals: many.residuals });
    expect(Buffer.from(again).equals(Buffer.from(bytes))).toBe(true);
    expect(reconstruct(many)).toEqual(reconstruct(one));
  });

  it.each(['int8', 'int4', 'pq4', 'bits'])('%s: every flipped byte and every cut is still refused with pieces of a few rows', (codec) => {
    const bytes = new Uint8Array(fs.readFileSync(files[codec]));
    setMaxViewBytesForTests(SMALL);
    expectEveryFlipFails(bytes, 0x80);
    expectEveryCutFails(bytes);
  });

  it('the checksum threads agree with the pieces', async () => {
    const bytes = fs.readFileSync(files.int8);
    const shared = new Uint8Array(new SharedArrayBuffer(bytes.length));
    shared.set(bytes);
    setMaxViewBytesForTests(SMALL);
    const file = Payload.of(shared);
    const { manifestEnd } = decodeVlcHeader(file);
    const crcs = await parallelPayloadCrcs(file, manifestEnd, undefined, { threads: 2, minBytes: 1, slice: 40 });
    expect(crcs.length).toBe(3);
    expect(decodeVlc(file, 'x.vlc', undefined, crcs).manifest.n).toBe(n);
  });

  it.each(['int8', 'int4', 'bits'] as const)('%s: the encoder on 2 threads writes the same codes into pieces (their buffer and offsets posted) as one thread into one', async (codec) => {
    // Two blocks of rows at least (scalar-rows.ts BLOCK_ROWS), so that both threads code some.
    const big = 2 * 16384 + 5, m = 7;
    const r = rng(11);
    const xs = Float32Array.from({ length: big * d }, () => r() * 4);
    const inp = { x: xs, n: big, d, anchors: Float32Array.from({ length: m * d }, () => r() * 4), assign: Uint32Array.from({ length: big }, (_, i) => (i * 5) % m) };
    const encode = (threads: number) => (codec === 'bits' ? encodeBits(inp, 4, threads) : encodeScalar(codec, inp, threads));
    const one = await encode(1);
    setMaxViewBytesForTests(SMALL);
    const many = await encode(2);
    setMaxViewBytesForTests();
    expect((many.residuals.codes as unknown as { pieces: unknown[] }).pieces.length).toBeGreaterThan(1000);
    expect(many.residualEnergy).toBe(one.residualEnergy);
    expect(Buffer.from([...many.residuals.codes]).equals(Buffer.from([...one.residuals.codes]))).toBe(true);
    if (codec === 'int8') expect(many.residuals.payloadCrc).toBe(crc32c(Buffer.concat(one.residuals.payload())));
  });

  it('pq: the trainer writes the same codes into pieces as into one', async () => {
    const backend = createCpuBackend({ threads: 1 });
    try {
      const file = decodeVlc(new Uint8Array(fs.readFileSync(files.pq)), 'x.vlc');
      const inp = { x, n, d, anchors: file.anchors, assign: file.assignments };
      const o = { subspaces: 3, bits: 8 as const, seed: 3, maxIters: 5 };
      const one = await encodePq(inp, backend, o);
      setMaxViewBytesForTests(SMALL);
      const many = await encodePq(inp, backend, o);
      expect(many.codes.pieces.length).toBeGreaterThan(5);
      expect([...many.codes]).toEqual([...one.codes]);
      expect(Buffer.concat(many.payload()).equals(Buffer.concat(one.payload()))).toBe(true);
    } finally {
      await backend.close();
    }
  });

  it.each(CODECS.map(([c]) => c))('%s: search gives the same neighbours and distances from pieces (1 and 2 threads)', async (codec) => {
    const bytes = new Uint8Array(fs.readFileSync(files[codec]));
    const one = decodeVlc(bytes, 'x.vlc');
    const many = decodeSmall(bytes);
    const r = rng(5);
    const nq = 2000;
    const q = Float32Array.from({ length: nq * d }, () => r() * 10);
    for (const threads of [1, 2]) {
      const a = await searchCompressed(vlcSearchIndex(one), q, nq, { k: 5, nprobe: 3, threads }, cpuKnn);
      setMaxViewBytesForTests(SMALL);
      const b = await searchCompressed(vlcSearchIndex(many), q, nq, { k: 5, nprobe: 3, threads }, cpuKnn);
      setMaxViewBytesForTests();
      expect(Array.from(b.ids)).toEqual(Array.from(a.ids));
      expect(Array.from(b.dists)).toEqual(Array.from(a.dists));
    }
  });

  it.each(['int8', 'pq4', 'bits'])('%s: decompress writes the same bytes, and openVlc rows() the same vectors, from pieces', async (codec) => {
    const outOne = path.join(dir, `${codec}-one.npy`), outMany = path.join(dir, `${codec}-many.npy`);
    await decompress(files[codec], { output: outOne });
    setMaxViewBytesForTests(SMALL);
    await decompress(files[codec], { output: outMany });
    expect(fs.readFileSync(outMany).equals(fs.readFileSync(outOne))).toBe(true);
    const opened = await openVlc(files[codec]);
    const all = opened.reconstruct();
    for (const [r0, r1] of [[0, 1], [2, 7], [290, 301], [0, 301]]) expect(opened.rows(r0, r1)).toEqual(all.subarray(r0 * d, r1 * d));
    expect(() => opened.rows(300, 302)).toThrow(RangeError);
  });
});
