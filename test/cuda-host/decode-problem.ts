// Random .vlc contents for decoding on the device (src/backend/cuda/decode.ts), shared by the
// fake-driver suite (decode.test.ts) and the GPU suite (test/gpu/decode.test.ts): odd n, d, m,
// anchors and scales with full f32 mantissas over several magnitudes (so the double-rounded sum
// of the host, fround(anchor + s · v), differs from a single f32 rounding somewhere), int8 / int4
// codes at their extremes, pq with uneven subspaces and 4- or 8-bit codebooks (8-bit also on
// projected directions), bits with every
// width 0..8 (codes straddling bytes, rows ending mid-byte).
import { expect } from 'vitest';
import { BitsResiduals } from '../../dist/codecs/bits.js';
import { PqResiduals } from '../../dist/codecs/pq.js';
import { f32ToF16 } from '../../dist/vectors/dataset.js';
import { ScalarResiduals } from '../../dist/codecs/scalar.js';
import type { Decodable } from '../../dist/io/vlc/reconstruct.js';
import { decodeOnDevice } from '../../dist/backend/cuda/decode.js';
import type { CudaContext } from '../../dist/backend/cuda/context.js';
import { reconstructRange } from '../../dist/io/vlc/reconstruct.js';
import { rng } from '../rng.js';

export type DecodeMode = 'none' | 'int8' | 'int4' | 'pq4' | 'pq8' | 'pq8-projected' | 'bits';

export function decodeProblem(mode: DecodeMode, n: number, d: number, m: number, seed: number): Decodable {
  const r = rng(seed);
  const wide = () => (r() - 0.5) * 2 ** Math.floor(r() * 20 - 8);
  const anchors = Float32Array.from({ length: m * d }, wide);
  const assignments = Uint32Array.from({ length: n }, () => Math.floor(r() * m));
  const manifest = { d };
  if (mode === 'none') return { anchors, assignments, manifest };
  if (mode === 'int8' || mode === 'int4') {
    const L = mode === 'int8' ? 127 : 7;
    const scales = Float32Array.from({ length: d }, (_, k) => (k % 5 === 0 ? 0 : Math.abs(wide())));
    const codes = Int8Array.from({ length: n * d }, () => Math.round((r() * 2 - 1) * L));
    return { anchors, assignments, manifest, residuals: new ScalarResiduals(mode, n, d, scales, codes) };
  }
  if (mode === 'bits') {
    const bits = Uint8Array.from({ length: d }, () => Math.floor(r() * 9));
    const total = bits.reduce((s, b) => s + b, 0);
    const R = Math.max(1, Math.ceil(total / 8));
    const steps = Float32Array.from({ length: d }, () => Math.abs(wide()));
    // Random bytes, but the bits past a row's last code zero, as the encoder writes them.
    const codes = Uint8Array.from({ length: n * R }, (_, e) => {
      const used = total - 8 * (e % R);
      return used >= 8 ? Math.floor(r() * 256) : used > 0 ? Math.floor(r() * 256) & ((1 << used) - 1) : 0;
    });
    return { anchors, assignments, manifest, residuals: new BitsResiduals(n, d, R, bits, steps, codes) };
  }
  const bits = mode === 'pq4' ? 4 : 8;
  // pq8-projected: codes on k = ⌈2d/3⌉ random directions (f16 values of every sign and size).
  const k = mode === 'pq8-projected' ? Math.ceil((2 * d) / 3) : 0;
  const D = k || d;
  const M = Math.max(1, Math.min(D, Math.floor(D / 3) + 1));
  const K = 2 ** bits;
  const scales = Float32Array.from({ length: m }, () => Math.abs(wide()));
  const codebooks = Float32Array.from({ length: K * D }, wide);
  const codes = Uint8Array.from({ length: n * M }, () => Math.floor(r() * K));
  const projection = k ? Uint16Array.from({ length: k * d }, () => f32ToF16(r() - 0.5)) : undefined;
  return { anchors, assignments, manifest, residuals: new PqResiduals(n, d, M, bits, assignments, scales, codebooks, codes, projection) };
}

/** Decodes rows r0 .. r1 − 1 on the device and expects them bit for bit as reconstructRange's. */
export async function expectDeviceRowsEqualHost(ctx: CudaContext, file: Decodable, n: number, r0: number, r1: number): Promise<void> {
  const d = file.manifest.d;
  const rows = await decodeOnDevice(ctx, file, n);
  const out = ctx.pool.alloc('decoded rows', Math.max(1, r1 - r0) * d * 4);
  try {
    rows.fill(out, r0, r1 - r0);
    await ctx.finish();
    const got = new Float32Array((r1 - r0) * d);
    ctx.download(got, out);
    const want = reconstructRange(file, r0, r1, new Float32Array((r1 - r0) * d));
    // Compared as bits: −0 and +0, or two NaNs, would pass a numeric comparison.
    const gotBits = new Uint32Array(got.buffer), wantBits = new Uint32Array(want.buffer);
    let first = -1;
    for (let e = 0; e < gotBits.length && first < 0; e++) if (gotBits[e] !== wantBits[e]) first = e;
    expect(first, first < 0 ? '' : `row ${r0 + Math.floor(first / d)}, dim ${first % d}: ${got[first]} vs ${want[first]}`).toBe(-1);
  } finally {
    ctx.pool.free(out);
    rows.free();
  }
}
