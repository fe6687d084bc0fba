// Large payloads are checksummed on worker threads (io/vlc/checksums.ts) before decodeVlc compares:
// the threads' CRC equals the in-line one over any slicing, a damaged payload still fails, and an
// int8 code of -128 (outside -127..127) is refused even when its checksum is right.
import { describe, expect, it } from 'vitest';
import { crc32c } from '../../dist/io/vlc/crc32c.js';
import { parallelFileCrcs, parallelPayloadCrcs, parallelPiecesCrc, payloadSpans, PARALLEL_CHECK_MIN_BYTES } from '../../dist/io/vlc/checksums.js';
import { FilePayload } from '../../dist/io/vlc/payload.js';
import { openVlcOnDisk, openVlcOnDiskThreaded } from '../../dist/io/vlc/on-disk.js';
import { decodeVlc, decodeVlcHeader, encodeVlcBytes, SECTION_HEADER_BYTES, type VlcContent } from '../../dist/io/vlc/format.js';
import { encodeScalar, type ScalarResiduals } from '../../dist/codecs/scalar.js';
import { reconstruct } from '../../dist/io/vlc/reconstruct.js';
import { UsageError } from '../../dist/errors.js';
import { rng } from '../rng.js';
import { BitsResiduals } from '../../dist/codecs/bits.js';
import { readVlc, writeVlc } from '../../dist/io/vlc/file.js';
import { planOutput } from '../../dist/io/output.js';
import { execFileSync } from 'node:child_process';
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';

/** An int8 .vlc file of n × d random vectors around m anchors, its bytes in shared memory. */
async function int8File(n: number, d: number, m: number): Promise<Uint8Array> {
  const r = rng(n + d);
  const anchors = Float32Array.from({ length: m * d }, () => r() * 4 - 2);
  const assignments = Uint32Array.from({ length: n }, () => Math.floor(r() * m));
  const x = Float32Array.from({ length: n * d }, (_, e) => anchors[assignments[Math.floor(e / d)] * d + (e % d)] + r() - 0.5);
  const { residuals, residualEnergy } = await encodeScalar('int8', { x, n, d, anchors, assign: assignments });
  const content: VlcContent = {
    manifest: {
      n, d, m, metric: 'l2', anchorDtype: 'f32', residual: 'int8', residualEnergy,
      input: { dtype: 'f32', dropped: 0 },
      training: { energy: 1, iterations: 1, converged: true, init: 'kmeans++' },
      config: { maxIters: 1, t0: 1, cooling: 0.05 },
      seed: 1, tool: { name: 'vlc', version: '0.1.0' }, device: 'cpu',
    },
    anchors, assignments, residuals,
  };
  return shared(encodeVlcBytes(content));
}

const shared = (bytes: Uint8Array) => {
  const out = new Uint8Array(new SharedArrayBuffer(bytes.length));
  out.set(bytes);
  return out;
};

/** Decode with the payload checksums computed on 3 threads in slices of `slice` bytes. */
async function decodeThreaded(bytes: Uint8Array, slice: number) {
  const { manifestEnd } = decodeVlcHeader(bytes);
  const seen: number[] = [];
  const computed = await parallelPayloadCrcs(bytes, manifestEnd, (b) => seen.push(b), { threads: 3, minBytes: 1000, slice });
  return { computed, seen, file: () => decodeVlc(bytes, 'x.vlc', undefined, computed) };
}

describe('payload checksums on worker threads', () => {
  it('equal the in-line checksum of every large payload, over odd slice sizes, and decode the same file', async () => {
    const bytes = await int8File(1_237, 29, 11);
    const spans = payloadSpans(bytes, decodeVlcHeader(bytes).manifestEnd);
    expect(spans.length).toBe(3); // anchors, assignments, residuals
    for (const slice of [16, 1_000, 4_099, 1 << 20]) {
      const { computed, seen, file } = await decodeThreaded(bytes, slice);
      const big = spans.filter((s) => s.size >= 1000);
      expect(computed.map((c) => [c.start, c.size])).toEqual(big.map((s) => [s.start, s.size]));
      for (const c of computed) expect(c.crc).toBe(crc32c(bytes.subarray(c.start, c.start + c.size)));
      expect(Math.max(...seen)).toBe(big[big.length - 1].start + big[big.length - 1].size); // progress reaches the end
      expect(Array.from(reconstruct(file()))).toEqual(Array.from(reconstruct(decodeVlc(bytes.slice(), 'x.vlc'))));
    }
  });

  it('a flipped byte anywhere in a threaded payload is still a checksum mismatch', async () => {
    const good = await int8File(501, 17, 5);
    const spans = payloadSpans(good, decodeVlcHeader(good).manifestEnd).filter((s) => s.size >= 1000);
    const r = rng(3);
    for (const s of spans)
      for (let t = 0; t < 6; t++) {
        const bad = shared(good);
        bad[s.start + Math.floor(r() * s.size)] ^= 1 << Math.floor(r() * 8);
        const { file } = await decodeThreaded(bad, 777);
        expect(file).toThrow(UsageError);
        expect(file).toThrow(/checksum mismatch/);
      }
  });

  it('an int8 code of -128 is refused although its checksums are right', async () => {
    const bytes = await int8File(300, 7, 3);
    const f = decodeVlc(bytes.slice(), 'x.vlc');
    const rsd = f.sections.find((s) => s.name === 'residuals')!;
    const codesAt = rsd.offset + 4 * 7;
    const bad = shared(bytes);
    bad[codesAt + 1_000] = 0x80;
    // Mend the payload's checksum, then the section header's own, so only the code range is wrong.
    const view = new DataView(bad.buffer);
    const header = rsd.offset - SECTION_HEADER_BYTES;
    view.setUint32(header + 16, crc32c(bad.subarray(rsd.offset, rsd.offset + rsd.bytes)), true);
    view.setUint32(header + 20, crc32c(bad.subarray(header, header + 20)), true);
    expect(() => decodeVlc(bad.slice(), 'x.vlc')).toThrow(/a code is outside -127\.\.127/);
    const { file } = await decodeThreaded(bad, 4096);
    expect(file).toThrow(/a code is outside -127\.\.127/);
    expect(Array.from((f.residuals as ScalarResiduals).codes).includes(-128)).toBe(false);
  });
});

describe('a payload in pieces, checksummed on threads for writing (parallelPiecesCrc)', () => {
  it('equals the in-line CRC of the joined pieces: shared and not, large and small, any slicing', async () => {
    const r = rng(11);
    const fill = (p: Uint8Array) => {
      for (let i = 0; i < p.length; i++) p[i] = Math.floor(r() * 256);
      return p;
    };
    const pieces = [
      fill(new Uint8Array(37)), // a section header-like head, not shared
      fill(new Uint8Array(new SharedArrayBuffer(100_003))),
      fill(new Uint8Array(new SharedArrayBuffer(5_000))), // shared but below minBytes: in line
      fill(new Uint8Array(new SharedArrayBuffer(70_001), 1_001, 60_000)), // a view inside its buffer
    ];
    const joined = new Uint8Array(pieces.reduce((s, p) => s + p.length, 0));
    let at = 0;
    for (const p of pieces) joined.set(p, (at += p.length) - p.length);
    for (const slice of [4_096, 9_999, 1 << 20]) {
      expect(await parallelPiecesCrc(pieces, { threads: 3, minBytes: 10_000, slice })).toBe(crc32c(joined));
    }
    expect(await parallelPiecesCrc(pieces, { threads: 3, minBytes: joined.length + 1, slice: 4_096 })).toBeUndefined(); // small: the caller's
    expect(await parallelPiecesCrc(pieces, { threads: 1, minBytes: 10, slice: 4_096 })).toBeUndefined(); // one core: the caller's
  });
});


describe('writeVlc checksums a large residual payload while it writes', () => {
  it('a regular file gets the bytes of the in-line encoder (header sealed after the payload); stdout-like targets too', async () => {
    // 40 MB of bits codes without a checksum (over PARALLEL_CHECK_MIN_BYTES): threads checksum them during the write.
    const n = 700_001, d = 80, R = 60, m = 5;
    const r = rng(12);
    const codes = new Uint8Array(new SharedArrayBuffer(n * R));
    for (let i = 0; i < codes.length; i += 7) codes[i] = Math.floor(r() * 256);
    const bits = new Uint8Array(d).fill(6); // 480 bits: R bytes exactly
    const residuals = new BitsResiduals(n, d, R, bits, Float32Array.from({ length: d }, (_, k) => 0.01 * (k + 1)), codes);
    expect(residuals.payloadCrc).toBeUndefined();
    const content: VlcContent = {
      manifest: {
        n, d, m, metric: 'l2', anchorDtype: 'f32', residual: 'bits', residualEnergy: 0.5,
        input: { dtype: 'f32', dropped: 0 },
        training: { energy: 1, iterations: 1, converged: true, init: 'kmeans++' },
        config: { maxIters: 1, t0: 1, cooling: 0.05 },
        seed: 1, tool: { name: 'vlc', version: '0.1.0' }, device: 'cpu',
      },
      anchors: Float32Array.from({ length: m * d }, () => r()),
      assignments: Uint8Array.from({ length: n }, () => Math.floor(r() * m)),
      residuals,
    };
    const expected = Buffer.from(encodeVlcBytes(content)); // every checksum in line
    const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'vlc-write-crc-'));
    try {
      const file = path.join(dir, 'a.vlc');
      expect(await writeVlc(file, content)).toBe(expected.length);
      expect(fs.readFileSync(file).equals(expected)).toBe(true);
      expect((await readVlc(file)).manifest.n).toBe(n); // and every checksum reads back
      // A FIFO is streamed: the checksum comes before the header, the same bytes.
      const fifo = path.join(dir, 'p');
      execFileSync('mkfifo', [fifo]);
      const got: Buffer[] = [];
      const reader = fs.createReadStream(fifo).on('data', (c) => got.push(c as Buffer));
      const closed = new Promise((resolve) => reader.on('close', resolve));
      await writeVlc(planOutput(fifo), content);
      await closed;
      expect(Buffer.concat(got).equals(expected)).toBe(true);
    } finally {
      fs.rmSync(dir, { recursive: true, force: true });
    }
  }, 120_000);
});

describe('payload checksums on worker threads that read the file themselves (a file read where it lies)', () => {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'vlc-filecrc-'));
  const put = (name: string, bytes: Uint8Array) => {
    const f = path.join(dir, name);
    fs.writeFileSync(f, bytes);
    return f;
  };
  const fileCrcs = async (file: string, slice: number) => {
    const fd = fs.openSync(file, 'r');
    try {
      const whole = new FilePayload(fd, 0, fs.statSync(file).size);
      const seen: number[] = [];
      const computed = await parallelFileCrcs(file, whole, decodeVlcHeader(whole).manifestEnd, (b) => seen.push(b), { threads: 3, minBytes: 1000, slice });
      return { computed, seen };
    } finally {
      fs.closeSync(fd);
    }
  };

  it('equal the in-line checksums over odd slice sizes; a flipped byte is still a checksum mismatch', async () => {
    const bytes = await int8File(1_237, 29, 11);
    const file = put('good.vlc', bytes);
    const big = payloadSpans(bytes, decodeVlcHeader(bytes).manifestEnd).filter((s) => s.size >= 1000);
    for (const slice of [16, 4_099, 1 << 20]) {
      const { computed, seen } = await fileCrcs(file, slice);
      expect(computed.map((c) => [c.start, c.size, c.crc])).toEqual(big.map((s) => [s.start, s.size, crc32c(bytes.subarray(s.start, s.start + s.size))]));
      expect(Math.max(...seen)).toBe(big[big.length - 1].start + big[big.length - 1].size);
      const opened = openVlcOnDisk(file, undefined, undefined, computed)!;
      expect(Array.from(reconstruct(opened.file))).toEqual(Array.from(reconstruct(decodeVlc(bytes.slice(), 'x.vlc'))));
      opened.close();
    }
    const r = rng(5);
    for (const s of big) {
      const bad = bytes.slice();
      bad[s.start + Math.floor(r() * s.size)] ^= 1 << Math.floor(r() * 8);
      const f = put('bad.vlc', bad);
      const { computed } = await fileCrcs(f, 777);
      expect(() => openVlcOnDisk(f, undefined, undefined, computed)).toThrow(/checksum mismatch/);
    }
  });

  it('a file past the threads\' threshold is checked on them by openVlcOnDiskThreaded, damage included', async () => {
    const bytes = await int8File(280_000, 121, 7);
    const big = payloadSpans(bytes, decodeVlcHeader(bytes).manifestEnd).filter((s) => s.size >= PARALLEL_CHECK_MIN_BYTES);
    expect(big.length).toBe(1); // the residual codes
    const file = put('large.vlc', bytes);
    const seen: number[] = [];
    const opened = (await openVlcOnDiskThreaded(file, (b) => seen.push(b)))!;
    expect(opened.file.manifest.n).toBe(280_000);
    opened.close();
    expect(seen.length).toBeGreaterThan(2); // the threads' slices, each heard
    const bad = bytes.slice();
    bad[big[0].start + 12_345_678] ^= 4;
    await expect(openVlcOnDiskThreaded(put('large-bad.vlc', bad))).rejects.toThrow(/checksum mismatch/);
    fs.rmSync(dir, { recursive: true, force: true });
  }, 60_000);
});
