// The 'ec' decoder's WebAssembly loops (src/codecs/ec/wasm-decode.ts, wasm/ec-decode.c) against the
// JS loops they replace: the same codes for random models (every scale, holes, escapes, codes
// beyond int16, one to a few dozen dimensions: rows shorter than the four symbols the loop takes at
// once), the same refusal in the same words for damaged and random blocks, the same rows bit for
// bit from addRange (WebAssembly) as from addTo (JS) on both layouts at odd sizes, and the same
// codes on worker threads.
import { afterEach, describe, expect, it } from 'vitest';
import { encodeBlock, readSection } from '../../dist/codecs/ec/blocks.js';
import { encodeEc } from '../../dist/codecs/ec/encode.js';
import { BlockDecoder } from '../../dist/codecs/ec/fast-decode.js';
import { decodeBlocks, ecSection, type EcResiduals } from '../../dist/codecs/ec/residuals.js';
import { ecWasmAvailable, setEcWasm } from '../../dist/codecs/ec/wasm-decode.js';
import { joined, mixture, randomBlock } from './ec-helpers.js';
import { rng } from '../rng.js';

const fail = (what: string) => new Error(what);

/** What a decoder makes of a block: its return value and codes, or its error's message. */
function outcome(dec: BlockDecoder, bytes: Uint8Array, rows: number, out: Int16Array | Int32Array): string | { fits: boolean; codes: number[] } {
  try {
    const fits = dec.decode(bytes, 0, bytes.length, rows, out, fail);
    return { fits, codes: Array.from(out) };
  } catch (e) {
    return (e as Error).message;
  }
}

afterEach(() => setEcWasm(true));

describe('ec WebAssembly decoder', () => {
  it('is built and in use', () => {
    expect(ecWasmAvailable()).toBe(true);
    const { alpha, models } = randomBlock(1, 3, 2, 10, false);
    expect(new BlockDecoder(alpha, models).usesWasm).toBe(true);
    expect(new BlockDecoder(alpha, models, false).usesWasm).toBe(false);
  });

  it('decodes random models to the JS loop\'s codes, into either array width', () => {
    let escapes = 0;
    for (let seed = 1; seed <= 60; seed++) {
      const S = 8 + (seed % 9), rows = 1 + ((seed * 37) % 131), dims = seed % 5 === 0 ? 1 + (seed % 3) : 1 + ((seed * 13) % 41);
      const { q, alpha, models } = randomBlock(500 + seed, rows, dims, S, seed % 4 === 0);
      const bytes = encodeBlock(q, rows, alpha, models);
      const wasm = new BlockDecoder(alpha, models, true), js = new BlockDecoder(alpha, models, false);
      for (const make of [() => new Int16Array(rows * dims), () => new Int32Array(rows * dims)]) {
        const got = outcome(wasm, bytes, rows, make());
        expect(got).toEqual(outcome(js, bytes, rows, make()));
        if (typeof got !== 'string' && make().BYTES_PER_ELEMENT === 4) expect(got.codes).toEqual(Array.from(q));
      }
      for (let t = 0; t < q.length; t++) if (q[t] < alpha.lo[t % dims] || q[t] >= alpha.lo[t % dims] + alpha.size[t % dims]) escapes++;
    }
    expect(escapes).toBeGreaterThan(20);
  });

  it('decodes sections of more than 2^16 symbols (buckets counted from each model\'s first symbol) to the JS loop\'s codes', () => {
    for (let seed = 1; seed <= 4; seed++) {
      const S = 13 + (seed % 3), rows = 7 + 11 * seed, dims = 150 + 7 * seed;
      const { q, alpha, models } = randomBlock(700 + seed, rows, dims, S, seed % 2 === 0, 3000);
      expect(models.start[dims]).toBeGreaterThan(0xffff);
      const bytes = encodeBlock(q, rows, alpha, models);
      const got = outcome(new BlockDecoder(alpha, models, true), bytes, rows, new Int32Array(rows * dims));
      expect(got).toEqual(outcome(new BlockDecoder(alpha, models, false), bytes, rows, new Int32Array(rows * dims)));
      expect(got).toEqual({ fits: true, codes: Array.from(q) });
    }
  });

  it('decodes random sections (odd n, d, block sizes, steps, both layouts) to the JS loop\'s codes and addTo\'s rows', async () => {
    const r = rng(2028);
    let rotated = 0;
    for (let trial = 0; trial < 12; trial++) {
      const n = 1 + Math.floor(r() * 700), d = 1 + Math.floor(r() * 45), blockRows = 1 + Math.floor(r() * 300);
      const input = mixture(n, d, 3, 31 + trial, 0.003);
      const target = { step: 10 ** (-1 - 3 * r()) };
      const payload = joined((await encodeEc(input, target, { blockRows, rotate: trial % 2 === 1 })).residuals);
      const L = readSection(payload, n, d, fail);
      setEcWasm(false);
      const js = decodeBlocks(payload, L, n, 1, fail);
      setEcWasm(true);
      const wasm = decodeBlocks(payload, L, n, 1, fail);
      expect(wasm.map((q) => [q.constructor.name, ...q])).toEqual(js.map((q) => [q.constructor.name, ...q]));
      const res = ecSection.read(payload as never, { n, d, m: 3, assignments: input.assign, version: 5 }, fail) as EcResiduals;
      if (res.layout.rotation) rotated++;
      const want = new Float32Array(n * d), got = new Float32Array(n * d);
      for (let i = 0; i < n * d; i++) want[i] = got[i] = input.x[i];
      for (let i = 0; i < n; i++) res.addTo(i, want, i * d);
      res.addRange(0, n, got, 0);
      expect(Buffer.from(got.buffer).equals(Buffer.from(want.buffer))).toBe(true);
    }
    expect(rotated).toBeGreaterThan(2);
  });

  it('refuses damaged and random blocks as the JS loop does, in the same words', () => {
    let refused = 0, read = 0;
    const r = rng(77);
    for (let seed = 1; seed <= 8; seed++) {
      const rows = 9 + 5 * seed, dims = 1 + ((seed * 7) % 13);
      const { q, alpha, models } = randomBlock(900 + seed, rows, dims, 8 + (seed % 9), seed % 2 === 0);
      const bytes = encodeBlock(q, rows, alpha, models);
      const wasm = new BlockDecoder(alpha, models, true), js = new BlockDecoder(alpha, models, false);
      const same = (c: Uint8Array) => {
        const want = outcome(js, c, rows, new Int32Array(rows * dims));
        expect(outcome(wasm, c, rows, new Int32Array(rows * dims))).toEqual(want);
        if (typeof want === 'string') refused++;
        else read++;
      };
      for (let trial = 0; trial < 120; trial++) {
        const c = bytes.slice();
        for (let f = 1 + Math.floor(r() * 3); f > 0; f--) c[Math.floor(r() * c.length)] ^= 1 << Math.floor(r() * 8);
        same(c);
      }
      // Random words and escape bytes behind a head whose counts fit the block, and streams cut short
      // or left long (the word count changed, the block's size kept): the loop runs on garbage.
      for (let trial = 0; trial < 60; trial++) {
        const c = Uint8Array.from(bytes, () => Math.floor(r() * 256));
        const v = new DataView(c.buffer);
        const W = Math.floor(r() * ((c.length - 136) / 2 + 1)), E = c.length - 136 - 2 * W;
        v.setUint32(128, W, true);
        v.setUint32(132, E, true);
        same(c);
        const cut = bytes.slice(), cv = new DataView(cut.buffer), W0 = cv.getUint32(128, true), E0 = cv.getUint32(132, true);
        const dW = Math.min(W0, 1 + Math.floor(r() * 6));
        cv.setUint32(128, W0 - dW, true);
        cv.setUint32(132, E0 + 2 * dW, true);
        same(cut);
      }
    }
    expect(refused).toBeGreaterThan(500);
    expect(read).toBeGreaterThan(0);
  });

  /** Sections at odd sizes: [n, d, target, rows per block]; the fourth codes fewer than d coordinates, the second has int32 blocks. */
  const sections = [[1001, 37, { step: 0.004 }, 97], [517, 8, { step: 0.0004 }, 64], [301, 3, { step: 0.01 }, 1000], [400, 24, { mse: 0.01 }, 50]] as const;

  for (const rotate of [false, true]) {
    it(`addRange (WebAssembly) gives addTo's (JS) rows bit for bit (${rotate ? 'principal directions' : 'axes'}: odd sizes, uncoded dimensions, int32 codes, −0 anchors)`, async () => {
      let uncoded = 0, wide = 0;
      for (const [n, d, target, blockRows] of sections) {
        const input = mixture(n, d, 4, n + d, 0.002);
        // Anchors of −0: a dimension that is not coded must leave −0 as addTo does.
        for (let k = 0; k < input.anchors.length; k += 5) input.anchors[k] = -0;
        const payload = joined((await encodeEc(input, target, { blockRows, rotate })).residuals);
        // The reader takes a Payload or, as here, the bytes (io/vlc/payload.ts asPayload).
        const res = ecSection.read(payload as never, { n, d, m: 4, assignments: input.assign, version: 5 }, fail) as EcResiduals;
        expect(Boolean(res.layout.rotation)).toBe(rotate);
        if (res.layout.dims.length < d) uncoded++;
        if (decodeBlocks(payload, readSection(payload, n, d, fail), n, 1, fail).some((q) => q instanceof Int32Array)) wide++;
        const anchorsOf = () => {
          const out = new Float32Array(n * d);
          for (let i = 0; i < n; i++) out.set(input.anchors.subarray(input.assign[i] * d, input.assign[i] * d + d), i * d);
          return out;
        };
        const want = anchorsOf();
        for (let i = 0; i < n; i++) res.addTo(i, want, i * d);
        // Whole, and in ranges that start and end inside blocks, into an array at an offset.
        const whole = anchorsOf();
        res.addRange(0, n, whole, 0);
        expect(Buffer.from(whole.buffer).equals(Buffer.from(want.buffer))).toBe(true);
        const r = rng(n);
        for (let t = 0; t < 6; t++) {
          const i0 = Math.floor(r() * n), i1 = i0 + Math.floor(r() * (n - i0 + 1)), pad = 3 * d;
          const part = new Float32Array(pad + (i1 - i0) * d);
          part.set(anchorsOf().subarray(i0 * d, i1 * d), pad);
          res.addRange(i0, i1, part, pad);
          expect(Buffer.from(part.buffer, 4 * pad).equals(Buffer.from(want.buffer, 4 * i0 * d, 4 * (i1 - i0) * d))).toBe(true);
        }
      }
      expect(uncoded).toBeGreaterThan(0);
      expect(wide).toBeGreaterThan(0);
    });
  }

  it('decodes on worker threads to the JS loop\'s codes', async () => {
    const input = mixture(3001, 19, 5, 11, 0.001);
    const payload = joined((await encodeEc(input, { step: 0.0004 }, { blockRows: 97 })).residuals);
    const L = readSection(payload, input.n, input.d, fail);
    setEcWasm(false);
    const js = decodeBlocks(payload, L, input.n, 1, fail);
    setEcWasm(true);
    for (const threads of [1, 2, 3]) {
      const wasm = decodeBlocks(payload, L, input.n, threads, fail);
      expect(wasm.map((q) => [q.constructor.name, ...q])).toEqual(js.map((q) => [q.constructor.name, ...q]));
    }
  });
});
