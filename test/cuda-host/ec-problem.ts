// Random ec-coded files for the GPU's ec decoder (src/backend/cuda/ec.ts, cuda/ec.cu), shared by the
// fake-driver suite (ec-decode.test.ts) and the GPU suite (test/gpu/ec.test.ts): odd n and d,
// anchors with full f32 mantissas over many magnitudes (some −0: a coded dimension's code 0 makes it
// +0 on the host), residual spreads falling with the dimension (water-filling leaves the last ones
// uncoded), rare outliers (escaped codes), correlated residuals for the principal-directions layout,
// and the section read back from its payload, as a file's reader holds it.
import { encodeEc } from '../../dist/codecs/ec/encode.js';
import { ecSection, EcResiduals } from '../../dist/codecs/ec/residuals.js';
import { asPayload } from '../../dist/io/vlc/payload.js';
import type { CodecDevice, EcDecodable } from '../../dist/backend/device.js';
import { hostDevice } from '../../dist/backend/host.js';
import type { Decodable } from '../../dist/io/vlc/reconstruct.js';
import { decodeOnDevice, type DecodeOptions } from '../../dist/backend/cuda/decode.js';
import type { CudaContext } from '../../dist/backend/cuda/context.js';
import { reconstructRange } from '../../dist/io/vlc/reconstruct.js';
import { expect } from 'vitest';
import { rng } from '../rng.js';

export type EcLayoutKind = 'axis' | 'rotated';

export interface EcProblemOptions {
  blockRows?: number;
  scaleBits?: number;
  /** Share of values that get a large outlier (escapes). */
  outliers?: number;
  /** A cosine file's per-vector norms. */
  norms?: boolean;
}

export async function ecProblem(layout: EcLayoutKind, n: number, d: number, m: number, seed: number, o: EcProblemOptions = {}): Promise<EcDecodable> {
  const r = rng(seed);
  const g = () => Math.sqrt(-2 * Math.log(1 - r())) * Math.cos(2 * Math.PI * r());
  const anchors = Float32Array.from({ length: m * d }, () => (r() < 0.02 ? -0 : g() * 2 ** Math.floor(r() * 12 - 6)));
  const assign = Uint32Array.from({ length: n }, () => Math.floor(r() * m));
  // Rotated: each residual mixes a few latent factors over all dimensions (correlated: the directions pay).
  const factors = layout === 'rotated' ? Float32Array.from({ length: 6 * d }, g) : undefined;
  const x = new Float32Array(n * d);
  const outliers = o.outliers ?? 0.003;
  for (let i = 0; i < n; i++) {
    const z = factors ? Array.from({ length: 6 }, () => g()) : undefined;
    for (let k = 0; k < d; k++) {
      let e = 0.3 * Math.exp(-k / 10) * g();
      if (z) for (let f = 0; f < 6; f++) e += 0.2 * z[f] * factors![f * d + k];
      if (r() < outliers) e += 40 * g();
      x[i * d + k] = anchors[assign[i] * d + k] + e;
    }
  }
  const input = { x, n, d, anchors, assign };
  const { residuals } = await encodeEc(input, { step: 0.02 }, { rotate: layout === 'rotated', blockRows: o.blockRows, scaleBits: o.scaleBits });
  if ((layout === 'rotated') !== (residuals.layout.rotation !== undefined)) throw new Error(`ecProblem: asked for the ${layout} layout, got the other`);
  const parts = residuals.payload();
  const payload = new Uint8Array(parts.reduce((s, p) => s + p.length, 0));
  let at = 0;
  for (const p of parts) (payload.set(p, at), (at += p.length));
  const read = ecSection.read(asPayload(payload), { n, d, m, assignments: assign, version: 1 }, (what) => new Error(`ec problem: ${what}`)) as EcResiduals;
  const norms = o.norms ? Float32Array.from({ length: n }, () => 0.5 + r() * 3) : undefined;
  return { anchors, assignments: assign, manifest: { d }, residuals: read, ...(norms ? { norms } : {}) };
}

/** How many codes of the file are escaped (the kernels' rare path must have run for a test to mean it). */
export function escapedCodes(file: EcDecodable): number {
  const { layout } = file.residuals;
  const { lo, size } = layout.alpha, D = layout.dims.length;
  let count = 0;
  for (let b = 0; b < file.residuals.blockCount; b++) {
    const q = file.residuals.decodeBlock(b);
    for (let t = 0; t < q.length; t++) {
      const c = t % D;
      if (q[t] < lo[c] || q[t] >= lo[c] + size[c]) count++;
    }
  }
  return count;
}

/**
 * Decodes rows r0 .. r1 − 1 on the device into a buffer first filled with NaN (a value the kernels
 * fail to write shows) and expects them bit for bit as reconstructRange's.
 */
export async function expectEcRowsEqualHost(
  ctx: CudaContext, file: EcDecodable, n: number, r0: number, r1: number, o: DecodeOptions = {},
): Promise<void> {
  const d = file.manifest.d;
  const rows = await decodeOnDevice(ctx, file, n, o);
  const out = ctx.pool.alloc('decoded rows', Math.max(1, r1 - r0) * d * 4);
  try {
    ctx.upload(out, new Float32Array(Math.max(1, r1 - r0) * d).fill(NaN));
    rows.fill(out, r0, r1 - r0);
    await ctx.finish();
    const got = new Float32Array((r1 - r0) * d);
    ctx.download(got, out);
    const want = reconstructRange({ ...file, norms: undefined }, r0, r1, new Float32Array((r1 - r0) * d));
    expectSameBits(got, want, d, r0);
  } finally {
    ctx.pool.free(out);
    rows.free();
  }
}

/** got and want as bits (−0 against +0, or two NaNs, would pass a numeric comparison); the first difference named. */
/** `device`'s CodecDevice.decodeRows of each range [r0, r1) = the host device's, both outputs prefilled with NaN, compared as bits. */
export async function expectDecodeRowsAsHost(device: CodecDevice, file: Decodable, ranges: ReadonlyArray<readonly [number, number]>): Promise<void> {
  const d = file.manifest.d;
  for (const [r0, r1] of ranges) {
    const got = await device.decodeRows(file, r0, r1, new Float32Array((r1 - r0) * d).fill(NaN));
    const want = await hostDevice.decodeRows(file, r0, r1, new Float32Array((r1 - r0) * d).fill(NaN));
    expectSameBits(got, want, d, r0);
  }
}

export function expectSameBits(got: Float32Array, want: Float32Array, d: number, r0 = 0): void {
  expect(got.length).toBe(want.length);
  const a = new Uint32Array(got.buffer, got.byteOffset, got.length), b = new Uint32Array(want.buffer, want.byteOffset, want.length);
  let first = -1;
  for (let e = 0; e < a.length && first < 0; e++) if (a[e] !== b[e]) first = e;
  expect(first, first < 0 ? '' : `row ${r0 + Math.floor(first / d)}, dim ${first % d}: ${got[first]} vs ${want[first]}`).toBe(-1);
}

/**
 * `good` with block `damaged`'s bytes broken (lane 0's start state) where the device reads them,
 * the host's decoded codes of every block kept good: a block the device decoder must find damaged.
 */
export function damagedEc(good: EcDecodable, damaged: number): EcDecodable {
  const res = good.residuals;
  const broken = (b: number) => {
    const ref = res.blocks(b);
    if (b !== damaged) return ref;
    const bytes = ref.bytes.slice(ref.at, ref.at + ref.size);
    const v = new DataView(bytes.buffer);
    v.setUint32(0, v.getUint32(0, true) ^ 0x00ff0000, true);
    return { bytes, at: 0, size: bytes.length };
  };
  const codes = Array.from({ length: res.blockCount }, (_, b) => res.decodeBlock(b));
  return { ...good, residuals: new EcResiduals(res.n, res.d, res.layout, broken, codes) };
}
