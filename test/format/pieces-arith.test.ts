// Past 2^32: codes, payloads and file offsets are numbers, never 32-bit integers. A real file of
// 2^32 codes is not made here; a SharedArrayBuffer of 4 GiB is (its pages are mapped only where
// touched: a few MB of memory), and the codes at its end are written and read through pieces — with
// the default piece size and a shrunk one — and encoded into a section whose length, padding and
// offsets are checked against the size formulas.
import { afterEach, describe, expect, it } from 'vitest';
import { ScalarResiduals, scalarPayloadBytes } from '../../dist/codecs/scalar.js';
import { UsageError } from '../../dist/errors.js';
import { crc32c } from '../../dist/io/vlc/crc32c.js';
import { encodeVlc, expectedVlcBytes, SECTION_HEADER_BYTES } from '../../dist/io/vlc/format.js';
import { Payload, up8 } from '../../dist/io/vlc/payload.js';
import { reconstruct } from '../../dist/io/vlc/reconstruct.js';
import { fileBytes } from '../../dist/io/vlc/size.js';
import { allocCodes, Codes } from '../../dist/vectors/codes.js';
import { setMaxViewBytesForTests } from '../../dist/vectors/dataset.js';

const GiB = 2 ** 30;
afterEach(() => setMaxViewBytesForTests());

describe('codes and offsets past 2^32', () => {
  it.each([undefined, 2 ** 26])('2^32 + 5 one-byte codes (views of %s bytes): the last rows are written and read where they are', (limit) => {
    setMaxViewBytesForTests(limit);
    const rows = 2 ** 32 + 5;
    const codes = allocCodes<Uint8Array>('u8', rows, 1);
    expect(codes.pieces.length).toBe(Math.ceil(rows / (limit ?? GiB)));
    expect(codes.pieces.every((p) => p.length <= (limit ?? GiB))).toBe(true);
    for (const [i, v] of [[2 ** 32 + 4, 7], [2 ** 32, 9], [2 ** 32 - 1, 11], [2 ** 31, 13]]) codes.set(i, 0, v);
    // Each code is at its own byte of the one buffer.
    expect(new Uint8Array(codes.buffer, 2 ** 32 + 4, 1)[0]).toBe(7);
    expect(new Uint8Array(codes.buffer, 2 ** 31, 1)[0]).toBe(13);
    expect(codes.get(2 ** 32 + 4, 0)).toBe(7);
    expect(codes.get(2 ** 32 - 1, 0)).toBe(11);
    expect(codes.pieceStart(2 ** 32 + 4)).toBe((2 ** 32 + 4) % (limit ?? GiB));
    const run = new Uint8Array(6);
    codes.copyRows(2 ** 32 - 1, 2 ** 32 + 5, run);
    expect(Array.from(run)).toEqual([11, 9, 0, 0, 0, 7]);
    // A worker's copy of the codes (its buffer and offsets) finds the same rows.
    const there = new Codes<Uint8Array>('u8', rows, 1, codes.buffer, 0, codes.per);
    expect(there.get(2 ** 32 + 4, 0)).toBe(7);
  });

  it('int8 residuals of 2^25 + 3 vectors of 128 dims (2^32 + 384 codes): decoded, and their section sized and framed, past 2^32', () => {
    const n = 2 ** 25 + 3, d = 128, m = 4;
    const codes = allocCodes<Int8Array>('i8', n, d);
    codes.set(n - 1, 0, -5);
    codes.set(n - 1, d - 1, 127);
    const scales = new Float32Array(d).fill(0.5);
    // The payload's checksum given (as the encoders give it), so the 4 GiB of codes are not read here.
    const res = new ScalarResiduals('int8', n, d, scales, codes, 0x1234abcd);
    const out = new Float32Array(d);
    res.addTo(n - 1, out);
    expect(out[0]).toBe(-2.5);
    expect(out[d - 1]).toBe(63.5);
    const pieces = res.payload();
    const total = pieces.reduce((s, p) => s + p.length, 0);
    expect(total).toBe(4 * d + n * d);
    expect(total).toBe(scalarPayloadBytes('int8', n, d));
    expect(total).toBeGreaterThan(2 ** 32);
    expect(pieces.every((p) => p.length <= GiB)).toBe(true);

    const manifest = {
      n, d, m, metric: 'l2', anchorDtype: 'f32', residual: 'int8', residualEnergy: 0.5,
      input: { dtype: 'f32', dropped: 0 }, training: { energy: 1, iterations: 3, converged: true, init: 'kmeans++' },
      config: {}, seed: 1, tool: { name: 'vlc', version: 'test' }, device: 'cpu',
    } as const;
    const assignments = new Uint8Array(n); // every vector on anchor 0
    const chunks = encodeVlc({ manifest, anchors: new Float32Array(m * d), assignments, residuals: res });
    const fileLength = chunks.reduce((s, c) => s + c.length, 0);
    const manifestBytes = new DataView(chunks[0].buffer).getUint32(12, true);
    expect(fileLength).toBe(fileBytes({ n, d, m, anchorDtype: 'f32', residualPayloadBytes: total, manifestBytes }));
    expect(fileLength).toBeGreaterThan(2 ** 32);
    // The residual section's header: its u64 length and the checksum handed over, then the pieces, then the padding to 8.
    const header = chunks.find((c) => c.length === SECTION_HEADER_BYTES && String.fromCharCode(...c.subarray(0, 4)) === 'RSD8')!;
    const hv = new DataView(header.buffer, header.byteOffset, SECTION_HEADER_BYTES);
    expect(hv.getBigUint64(8, true)).toBe(BigInt(total));
    expect(hv.getUint32(16, true)).toBe(0x1234abcd);
    // After its header: the payload's pieces and padding, the section last in the file.
    expect(chunks.slice(chunks.indexOf(header) + 1).reduce((s, c) => s + c.length, 0)).toBe(up8(total));
    const mf = { ...manifest, assignmentWidth: 'u8', sections: ['anchors', 'assignments', 'residuals'] } as const;
    expect(expectedVlcBytes(mf as never, manifestBytes + 24)).toBe(fileLength);
  });

  it('a payload of 4 GiB and more: views, sub-payloads and checksums at offsets past 2^32', () => {
    setMaxViewBytesForTests(2 ** 26);
    const buf = new SharedArrayBuffer(2 ** 32 + 64);
    const file = new Payload(buf, 0, buf.byteLength);
    const at = 2 ** 32 - 8; // a run across the 2^32 boundary
    const bytes = Uint8Array.from({ length: 40 }, (_, i) => i * 7 + 1);
    new Uint8Array(buf, at, 40).set(bytes);
    const part = file.sub(at, 40);
    expect(part.byteOffset).toBe(at);
    expect(Array.from(part.view(8, 4))).toEqual(Array.from(bytes.subarray(8, 12)));
    expect(part.crc(0, 40, undefined, 3)).toBe(crc32c(bytes));
    expect(file.crc(at, at + 40, undefined, 16)).toBe(crc32c(bytes));
    expect(file.zero(2 ** 32 + 40, 2 ** 32 + 64)).toBe(true);
    expect(file.zero(at, at + 40)).toBe(false);
    expect(up8(2 ** 32 + 1)).toBe(2 ** 32 + 8);
    expect(up8(2 ** 31 + 3)).toBe(2 ** 31 + 8); // `(x + 7) & ~7` gives a negative number here
    expect(() => file.view(2 ** 32 + 60, 8)).toThrow(RangeError);
  });

  it('sizes of 50,000,000 x 128 int8 files are exact', () => {
    const n = 50_000_000, d = 128, m = 65536;
    const payload = scalarPayloadBytes('int8', n, d);
    expect(payload).toBe(6_400_000_512);
    const size = fileBytes({ n, d, m, anchorDtype: 'f16', residualPayloadBytes: payload, manifestBytes: 600 });
    expect(size).toBe(up8(24 + 600) + (24 + m * d * 2) + (24 + n * 2) + (24 + payload));
  });

  it('reconstruct() of a file larger than one array names the block-wise way instead', () => {
    const huge = { manifest: { n: 2 ** 26, d: 128 } } as never;
    expect(() => reconstruct(huge)).toThrow(UsageError);
    expect(() => reconstruct(huge)).toThrow(/rows\(r0, r1\).*reconstructRange.*vlc decompress/);
  });
});
