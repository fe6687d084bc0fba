// The .vlc container: round trips at every assignment width, byte-for-byte determinism, and
// detection (with the section named) of corruption, truncation, wrong magic and newer versions.
import { describe, expect, it } from 'vitest';
import { crc32c } from '../../dist/io/vlc/crc32c.js';
import {
  decodeVlc,
  encodeVlcBytes,
  FILE_HEADER_BYTES,
  FORMAT_VERSION,
  SECTION_HEADER_BYTES,
  type VlcContent,
} from '../../dist/io/vlc/format.js';
import { assignmentWidthFor } from '../../dist/io/vlc/manifest.js';
import { residualMse } from '../../dist/codecs/index.js';
import { encodeScalar, type ScalarResiduals } from '../../dist/codecs/scalar.js';
import { reconstruct } from '../../dist/io/vlc/reconstruct.js';
import { decodeError, expectEveryCutFails, expectEveryFlipFails } from './damage.js';

/** A deterministic little model: n vectors, m anchors, anchor values exactly representable in f16. */
function content(n: number, d: number, m: number, anchorDtype: 'f16' | 'f32' = 'f32'): VlcContent {
  const anchors = new Float32Array(m * d);
  for (let i = 0; i < anchors.length; i++) anchors[i] = ((i * 7919) % 2048) / 64 - 16; // multiples of 1/64
  const assignments = new Uint32Array(n);
  for (let i = 0; i < n; i++) assignments[i] = (i * 2654435761) % m;
  return {
    manifest: {
      n,
      d,
      m,
      metric: 'l2',
      anchorDtype,
      residual: 'none',
      input: { dtype: 'f32', dropped: 0 },
      training: { energy: 0.0123, iterations: 7, converged: true, init: 'kmeans++' },
      config: { maxIters: 10, t0: 1, cooling: 0.05 },
      seed: 42,
      tool: { name: 'vlc', version: '0.1.0' },
      device: 'cpu',
    },
    anchors,
    assignments,
  };
}


/** Offsets of the section payloads, found by walking the headers. */
function layout(bytes: Uint8Array) {
  const v = new DataView(bytes.buffer, bytes.byteOffset);
  let off = (FILE_HEADER_BYTES + v.getUint32(12, true) + 7) & ~7;
  const out: Array<{ header: number; payload: number; size: number }> = [];
  for (let s = 0; s < v.getUint32(16, true); s++) {
    const size = Number(v.getBigUint64(off + 8, true));
    out.push({ header: off, payload: off + SECTION_HEADER_BYTES, size });
    off = (off + SECTION_HEADER_BYTES + size + 7) & ~7;
  }
  return out;
}

describe('crc32c', () => {
  it('matches the standard check value and continues across pieces', () => {
    const s = new TextEncoder().encode('123456789');
    expect(crc32c(s)).toBe(0xe3069283);
    expect(crc32c(s.subarray(4), crc32c(s.subarray(0, 4)))).toBe(0xe3069283);
    expect(crc32c(new Uint8Array(0))).toBe(0);
    const big = new Uint8Array(1000).map((_, i) => (i * 31) & 0xff);
    let byByte = 0;
    for (let i = 0; i < big.length; i++) byByte = crc32c(big.subarray(i, i + 1), byByte);
    expect(crc32c(big)).toBe(byByte); // the 16-byte fast path equals the byte-at-a-time path
  });

  it('equals a bit-at-a-time reference at every alignment, length and starting value', () => {
    const bitwise = (b: Uint8Array, crc: number) => {
      let c = ~crc >>> 0;
      for (const x of b) {
        c ^= x;
        for (let k = 0; k < 8; k++) c = c & 1 ? (c >>> 1) ^ 0x82f63b78 : c >>> 1;
      }
      return ~c >>> 0;
    };
    let s = 12345;
    const rand = () => ((s = (Math.imul(s, 1103515245) + 12345) >>> 0) >>> 8);
    const buf = new Uint8Array(4096).map(() => rand() & 0xff);
    for (let k = 0; k < 400; k++) {
      const at = rand() % 37;
      const piece = buf.subarray(at, at + (k < 100 ? k : rand() % 4000));
      const start = k % 3 === 0 ? 0 : rand() * 256 + (rand() & 0xff);
      expect(crc32c(piece, start)).toBe(bitwise(piece, start));
    }
  });
});

describe('.vlc round trip', () => {
  it.each([
    [1, 10, 3],
    [256, 300, 2],
    [257, 300, 2],
    [65537, 65537, 1],
  ])('m = %i (n = %i, d = %i) picks the right width and round-trips', (m, n, d) => {
    const c = content(n, d, m);
    const bytes = encodeVlcBytes(c);
    const f = decodeVlc(bytes, 't.vlc');
    const width = assignmentWidthFor(m);
    expect(f.manifest.assignmentWidth).toBe(width);
    expect(f.assignments.BYTES_PER_ELEMENT).toBe({ u8: 1, u16: 2, u32: 4 }[width]);
    expect(Array.from(f.assignments)).toEqual(Array.from(c.assignments));
    expect(Array.from(f.anchors)).toEqual(Array.from(c.anchors));
    expect(f.manifest.n).toBe(n);
    expect(f.manifest.training.energy).toBe(0.0123);
    expect(f.fileBytes).toBe(bytes.length);
    expect(bytes.length % 8).toBe(0);
  });

  it('uses u8 up to 256 anchors, u16 up to 65536, then u32', () => {
    expect([1, 256, 257, 65536, 65537].map(assignmentWidthFor)).toEqual(['u8', 'u8', 'u16', 'u16', 'u32']);
  });

  it('stores f16 anchors in half the bytes, rounding to the nearest half', () => {
    const c = content(50, 8, 4, 'f16');
    c.anchors[0] = 0.1; // not exact in f16
    const f32 = encodeVlcBytes(content(50, 8, 4, 'f32'));
    const f16 = encodeVlcBytes(c);
    const f = decodeVlc(f16);
    expect(f.sections.find((s) => s.name === 'anchors')!.bytes).toBe(4 * 8 * 2);
    expect(f16.length).toBeLessThan(f32.length);
    expect(f.anchors[0]).toBeCloseTo(0.1, 3);
    expect(f.anchors[0]).not.toBe(Math.fround(0.1));
    expect(Array.from(f.anchors.subarray(1))).toEqual(Array.from(c.anchors.subarray(1)));
  });

  it('is deterministic: same content, same bytes; no times or paths inside', () => {
    const a = encodeVlcBytes(content(100, 4, 10));
    const b = encodeVlcBytes(content(100, 4, 10));
    expect(Buffer.from(a).equals(Buffer.from(b))).toBe(true);
    const text = Buffer.from(a).toString('latin1');
    expect(text).not.toMatch(/20\d\d-\d\d-\d\d|\/tmp|\/home|\/work/);
  });

  it('writes the manifest keys in one canonical order whatever order they came in', () => {
    const c = content(20, 3, 2);
    const shuffled = { ...c, manifest: Object.fromEntries(Object.entries(c.manifest).reverse()) as typeof c.manifest };
    expect(Buffer.from(encodeVlcBytes(shuffled)).equals(Buffer.from(encodeVlcBytes(c)))).toBe(true);
  });

  it('refuses to encode assignments outside 0..m-1', () => {
    const c = content(10, 2, 3);
    (c.assignments as Uint32Array)[4] = 3;
    expect(() => encodeVlcBytes(c)).toThrow(/assignment 4 is 3/);
  });
});

describe('.vlc damage is detected and named', () => {
  const good = encodeVlcBytes(content(40, 3, 5));
  const [anch, asgn] = layout(good);

  it('decodes the undamaged file', () => {
    expect(decodeVlc(good).manifest.m).toBe(5);
  });

  it('flipping any single byte anywhere is an error (never a silent wrong decode)', () => expectEveryFlipFails(good, 0x20));

  it('names the damaged section', () => {
    const flip = (at: number) => {
      const b = good.slice();
      b[at] ^= 1;
      return decodeError(b);
    };
    expect(flip(anch.payload + 3)).toBe("x.vlc: section 'anchors' checksum mismatch: file is corrupted");
    expect(flip(asgn.payload + 1)).toBe("x.vlc: section 'assignments' checksum mismatch: file is corrupted");
    expect(flip(asgn.header + 9)).toBe("x.vlc: section 'assignments' header checksum mismatch: file is corrupted");
    expect(flip(anch.header)).toBe("x.vlc: section 'anchors' header checksum mismatch: file is corrupted");
    expect(flip(FILE_HEADER_BYTES + 5)).toBe('x.vlc: header checksum mismatch: file is corrupted');
    expect(flip(13)).toMatch(/truncated in the manifest|header checksum mismatch/);
  });

  it('detects truncation at every length and says so', () => {
    expectEveryCutFails(good);
    expect(decodeError(good.subarray(0, asgn.header))).toBe(
      "x.vlc: file is truncated: section 'assignments' is missing (1 of 2 sections present)",
    );
    expect(decodeError(good.subarray(0, asgn.payload + 10))).toMatch(/truncated in section 'assignments'/);
  });

  it('rejects extra bytes after the last section', () => {
    const longer = new Uint8Array(good.length + 8);
    longer.set(good);
    longer[good.length] = 1;
    expect(decodeError(longer)).toMatch(/8 unexpected bytes after the last section/);
  });

  it('rejects an empty file and wrong magic, recognising common swapped inputs', () => {
    expect(decodeError(new Uint8Array(0))).toMatch(/file is empty/);
    expect(decodeError(new TextEncoder().encode('hello world, not a vlc file at all'))).toBe(
      'x.vlc: not a .vlc file (wrong magic bytes)',
    );
    const npy = new Uint8Array(64);
    npy.set([0x93, ...new TextEncoder().encode('NUMPY')]);
    expect(decodeError(npy)).toMatch(/this is a \.npy file/);
  });

  it('says a file from a newer format version needs a newer vlc', () => {
    const future = good.slice();
    new DataView(future.buffer).setUint32(8, FORMAT_VERSION + 1, true); // the version after this vlc's newest
    expect(decodeError(future)).toBe(
      `x.vlc: file format version ${FORMAT_VERSION + 1} is newer than this vlc reads (version ${FORMAT_VERSION}); upgrade vlc`,
    );
    // ... also when it re-checksums its header the new way:
    const v = new DataView(future.buffer);
    const manifestLen = v.getUint32(12, true);
    v.setUint32(20, crc32c(future.subarray(24, 24 + manifestLen), crc32c(future.subarray(8, 20))), true);
    expect(decodeError(future)).toMatch(new RegExp(`version ${FORMAT_VERSION + 1} is newer`));
  });

  it('detects values that checksum correctly but make no sense (assignment >= m)', () => {
    const b = good.slice();
    b[asgn.payload + 2] = 200; // m = 5
    const v = new DataView(b.buffer);
    v.setUint32(asgn.header + 16, crc32c(b.subarray(asgn.payload, asgn.payload + asgn.size)), true);
    v.setUint32(asgn.header + 20, crc32c(b.subarray(asgn.header, asgn.header + 20)), true);
    expect(decodeError(b)).toBe("x.vlc: section 'assignments': vector 2 names anchor 200 but m = 5: file is corrupted");
  });
});

describe('.vlc metrics (version 6): ip, and cosine with its norms section', () => {
  const rewrite = (bytes: Uint8Array, edit: (view: DataView, manifest: Record<string, unknown>) => void) => {
    const b = bytes.slice();
    const v = new DataView(b.buffer);
    const len = v.getUint32(12, true);
    const mf = JSON.parse(new TextDecoder().decode(b.subarray(24, 24 + len)));
    edit(v, mf);
    const json = new TextEncoder().encode(JSON.stringify(mf).padEnd(len, ' '));
    b.set(json.subarray(0, len), 24);
    v.setUint32(20, crc32c(b.subarray(24, 24 + len), crc32c(b.subarray(8, 20))), true);
    return b;
  };
  const norms = Float32Array.from({ length: 40 }, (_, i) => (i === 7 ? 0 : 0.5 + i / 8));
  const cosine = encodeVlcBytes({ ...content(40, 3, 5), manifest: { ...content(40, 3, 5).manifest, metric: 'cosine' }, norms });
  const ip = encodeVlcBytes({ ...content(40, 3, 5), manifest: { ...content(40, 3, 5).manifest, metric: 'ip' } });

  it('l2 files keep their version; ip and cosine are version 6; cosine decodes each vector at its norm', () => {
    expect(decodeVlc(encodeVlcBytes(content(40, 3, 5))).version).toBe(2);
    expect(decodeVlc(ip).version).toBe(6);
    expect(decodeVlc(ip).manifest.metric).toBe('ip');
    const f = decodeVlc(cosine);
    expect(f.version).toBe(6);
    expect(f.sections.map((s) => s.name)).toEqual(['anchors', 'assignments', 'norms']);
    expect(Array.from(f.norms!)).toEqual(Array.from(norms));
    const plain = reconstruct(decodeVlc(encodeVlcBytes(content(40, 3, 5))));
    const scaled = reconstruct(f);
    for (let i = 0; i < 40 * 3; i++) expect(scaled[i]).toBe(Math.fround(plain[i] * norms[Math.floor(i / 3)]));
  });

  it('every flipped byte and every cut of a cosine file is refused', () => {
    expectEveryFlipFails(cosine, 0x20);
    expectEveryCutFails(cosine);
  });

  it('names a metric its version cannot hold, a missing or stray norms section, a bad norm', () => {
    expect(decodeError(rewrite(ip, (v) => v.setUint32(8, 5, true)))).toBe(
      "x.vlc: metric 'ip' in a format version 5 file (it needs version 6): file is corrupted",
    );
    expect(decodeError(rewrite(cosine, (_, mf) => (mf.metric = 'ip')))).toMatch(/section 'norms' in a file of metric 'ip'/);
    // (the tool's version shortened so the manifest keeps its length)
    expect(decodeError(rewrite(ip, (_, mf) => Object.assign(mf, { metric: 'cosine', tool: { name: 'vlc', version: '0' } })))).toMatch(/section 'norms' is missing/);
    expect(decodeError(rewrite(ip, (_, mf) => Object.assign(mf, { metric: 'dot', tool: { name: 'vlc', version: '0' } })))).toMatch(/field 'metric' must be one of l2, ip, cosine \(got "dot"\)/);
    expect(() => encodeVlcBytes({ ...content(40, 3, 5), manifest: { ...content(40, 3, 5).manifest, metric: 'cosine' } })).toThrow(/without norms/);
    const bad = encodeVlcBytes({ ...content(40, 3, 5), manifest: { ...content(40, 3, 5).manifest, metric: 'cosine' }, norms: norms.map((v, i) => (i === 3 ? -1 : v)) });
    expect(decodeError(bad)).toBe("x.vlc: section 'norms': vector 3's norm is -1: file is corrupted");
  });
});

describe('.vlc sections this version does not know', () => {
  it('skips an unknown optional section with a warning', () => {
    const c = { ...content(30, 2, 4), extra: [{ tag: 'PQ16', name: 'product-codes', required: false, payload: Uint8Array.of(1, 2, 3) }] };
    const f = decodeVlc(encodeVlcBytes(c), 'x.vlc');
    expect(f.warnings).toEqual(["skipping unknown section 'product-codes' (type 'PQ16'), probably written by a newer vlc"]);
    expect(f.manifest.sections).toEqual(['anchors', 'assignments', 'product-codes']);
    expect(Array.from(f.assignments)).toEqual(Array.from(c.assignments));
  });

  it('refuses a file with an unknown required section', () => {
    const c = { ...content(30, 2, 4), extra: [{ tag: 'PQ16', name: 'product-codes', required: true, payload: Uint8Array.of(9) }] };
    expect(decodeError(encodeVlcBytes(c))).toBe(
      "x.vlc: section 'product-codes' (type 'PQ16') is required but this vlc does not know it; upgrade vlc",
    );
  });
});

describe('.vlc residual sections', () => {
  /** Vectors near their anchors, so the residuals are what is being tested. */
  async function withResiduals(mode: 'int8' | 'int4', n: number, d: number, m: number) {
    const c = content(n, d, m, 'f32');
    const x = new Float32Array(n * d);
    let s = 12345;
    for (let i = 0; i < n; i++)
      for (let k = 0; k < d; k++) {
        s = (s * 1103515245 + 12345) >>> 0;
        x[i * d + k] = c.anchors[(c.assignments as Uint32Array)[i] * d + k] + ((s >>> 8) / 2 ** 24 - 0.5) * (k + 1) * 0.1;
      }
    const input = { x, n, d, anchors: c.anchors, assign: c.assignments };
    const { residuals, residualEnergy } = await encodeScalar(mode, input);
    expect(Math.abs(residualMse(residuals, input) - residualEnergy)).toBeLessThan(1e-12 * residualEnergy);
    return { x, residualEnergy, content: { ...c, manifest: { ...c.manifest, residual: mode, residualEnergy }, residuals } };
  }

  it.each([
    ['int8', 9, 127],
    ['int4', 9, 7],
    ['int4', 8, 7],
  ] as const)('%s (d = %i) round-trips codes and scales and shrinks the error', async (mode, d, L) => {
    const n = 50;
    const { x, residualEnergy, content: c } = await withResiduals(mode, n, d, 6);
    const bytes = encodeVlcBytes(c);
    const f = decodeVlc(bytes, 'r.vlc');
    expect(f.manifest.residual).toBe(mode);
    expect(f.manifest.residualEnergy).toBe(residualEnergy);
    expect(f.sections.map((s) => s.name)).toEqual(['anchors', 'assignments', 'residuals']);
    expect(f.sections[2].bytes).toBe(4 * d + n * (mode === 'int8' ? d : Math.ceil(d / 2)));
    const got = f.residuals as ScalarResiduals;
    expect(Array.from(got.codes)).toEqual(Array.from(c.residuals.codes));
    expect(Array.from(got.scales)).toEqual(Array.from(c.residuals.scales));
    expect(Math.min(...got.codes)).toBeGreaterThanOrEqual(-L);
    expect(Math.max(...got.codes)).toBe(L); // the largest residual uses the top code
    // The decoded reconstruction has exactly the error measured at encode time, far below anchors alone.
    const rec = reconstruct(f);
    let err = 0;
    let anchorOnly = 0;
    for (let i = 0; i < n; i++)
      for (let k = 0; k < d; k++) {
        err += (x[i * d + k] - rec[i * d + k]) ** 2;
        anchorOnly += (x[i * d + k] - c.anchors[f.assignments[i] * d + k]) ** 2;
      }
    expect(Math.abs(err / n - residualEnergy) / residualEnergy).toBeLessThan(1e-12);
    expect(err).toBeLessThan(anchorOnly * (mode === 'int8' ? 1e-3 : 0.05));
  });

  it('the encoder writes the same codes, scales and error on 1 thread and on 3 (blocks of rows, summed in order)', async () => {
    const n = 40_001, d = 5, m = 7;
    const x = new Float32Array(new SharedArrayBuffer(n * d * 4)); // shared, as the readers leave vectors
    const anchors = Float32Array.from({ length: m * d }, (_, e) => Math.cos(e));
    const assign = Uint32Array.from({ length: n }, (_, i) => (i * 31) % m);
    for (let e = 0; e < n * d; e++) x[e] = anchors[assign[Math.floor(e / d)] * d + (e % d)] + Math.sin(e * 1.7) * 0.3;
    for (const mode of ['int8', 'int4'] as const) {
      const one = await encodeScalar(mode, { x, n, d, anchors, assign }, 1);
      const three = await encodeScalar(mode, { x, n, d, anchors, assign }, 3);
      expect(three.residualEnergy).toBe(one.residualEnergy);
      expect(Array.from(three.residuals.scales)).toEqual(Array.from(one.residuals.scales));
      expect(Buffer.compare(Buffer.from(three.residuals.codes.buffer), Buffer.from(one.residuals.codes.buffer))).toBe(0);
      expect(Math.abs(residualMse(one.residuals, { x, n, d, anchors, assign }) - one.residualEnergy)).toBeLessThan(1e-9 * one.residualEnergy);
    }
  });

  it('names damage in the residual section, and a residual section the manifest does not announce', async () => {
    const { content: c } = await withResiduals('int8', 40, 4, 5);
    const good = encodeVlcBytes(c);
    const [, , rsd] = layout(good);
    const b = good.slice();
    b[rsd.payload + 20] ^= 4;
    expect(decodeError(b)).toBe("x.vlc: section 'residuals' checksum mismatch: file is corrupted");
    expect(decodeError(good.subarray(0, rsd.payload + 8))).toMatch(/truncated in section 'residuals'/);
    expect(() => encodeVlcBytes({ ...c, manifest: { ...c.manifest, residual: 'none' } })).toThrow(/residual/);
  });
});
