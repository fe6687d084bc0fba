// The bit-allocated residual codec ('bits', src/codecs/bits.ts and bits-train.ts): codes packed and
// unpacked at every width, the allocation within its budget and toward the busy dimensions, the
// section read back to the same reconstruction, and a damaged payload refused with a reason.
import { describe, expect, it } from 'vitest';
import { BitsResiduals, bitsPayloadBytes, bitsSection, levelOffset } from '../../dist/codecs/bits.js';
import { allocateBits, encodeBits } from '../../dist/codecs/bits-train.js';
import { stepTable, stepsWork, type StepsTask } from '../../dist/codecs/bits-steps.js';
import { onDimensions, sharedF64 } from '../../dist/codecs/dims-on-threads.js';
import { rng } from '../rng.js';
import { bytes } from '../cuda-host/residual-problem.js';

const corrupt = (what: string) => new Error(what);
const concat = (parts: Uint8Array[]) => new Uint8Array(bytes(parts)); // a copy the tests may edit

/** The layout of bits.ts written out bit by bit (an independent reference): q_k in b_k bits, LSB first. */
function packRow(q: number[], bits: Uint8Array, row: Uint8Array): void {
  let at = 0;
  bits.forEach((b, k) => {
    for (let j = 0; j < b; j++, at++) if ((q[k] >> j) & 1) row[at >> 3] |= 1 << (at & 7);
  });
}

/** n × d residuals (anchor 0) whose spread grows with the dimension: dimension 0 is constant. */
function data(n: number, d: number, seed: number): Float32Array {
  const r = rng(seed);
  const x = new Float32Array(n * d);
  for (let i = 0; i < n; i++) for (let k = 0; k < d; k++) x[i * d + k] = k === 0 ? 0 : (r() - 0.5) * k * k;
  return x;
}

describe('bits codec', () => {
  it('tables the steps on several threads as on one: the same errors and steps, to the bit', () => {
    // An odd sample (rows, d), spreads growing with the dimension, a constant dimension and a few far-out values.
    const r = rng(11);
    const rows = 2053, d = 67;
    const sample = Float64Array.from({ length: rows * d }, (_, i) => (i % d === 5 ? 0 : (r() - 0.5) * (1 + (i % d)) * (r() < 0.01 ? 9 : 1)));
    const one = stepTable(sample, d, 1);
    for (const threads of [2, 3, 8]) {
      const many = stepTable(sample, d, threads);
      expect(Buffer.from(many.err.buffer).equals(Buffer.from(one.err.buffer))).toBe(true);
      expect(Buffer.from(many.step.buffer).equals(Buffer.from(one.step.buffer))).toBe(true);
    }
    // Every dimension on the workers (the caller only waits): the caller's table.
    const task: StepsTask = { kind: 'bits-steps', sample: sharedF64(sample), d, err: sharedF64(new Float64Array(d * 9)), step: sharedF64(new Float64Array(d * 9)) };
    onDimensions(task, d, 4, stepsWork(task), false);
    expect(Buffer.from(task.err.buffer).equals(Buffer.from(one.err.buffer))).toBe(true);
    expect(Buffer.from(task.step.buffer).equals(Buffer.from(one.step.buffer))).toBe(true);
    expect(one.err[5 * 9]).toBe(0); // the constant dimension: no error, step 0 at every bit count
    expect(Array.from(one.step.subarray(5 * 9, 6 * 9))).toEqual(new Array(9).fill(0));
    expect(one.step[9 + 8]).toBeGreaterThan(0);
  });

  it('packs and unpacks codes of every width 0..8, least significant bit first', () => {
    const r = rng(3);
    const d = 37;
    const bits = Uint8Array.from({ length: d }, (_, k) => k % 9);
    const total = bits.reduce((s, b) => s + b, 0);
    const R = Math.ceil(total / 8);
    const n = 50;
    const q: number[][] = [];
    const codes = new Uint8Array(n * R);
    for (let i = 0; i < n; i++) {
      q.push(Array.from(bits, (b) => Math.floor(r() * (1 << b))));
      packRow(q[i], bits, codes.subarray(i * R, (i + 1) * R));
    }
    const res = new BitsResiduals(n, d, R, bits, new Float32Array(d).fill(1), codes);
    for (let i = 0; i < n; i++) for (let k = 0; k < d; k++) expect(res.code(i, k)).toBe(q[i][k]);
    // The level of code q is q − offset: 0 is a level at every width.
    for (let b = 1; b <= 8; b++) expect(levelOffset(b)).toBe(2 ** (b - 1) - 1);
  });

  it('spends at most 8·R bits, none on a constant dimension, more on the wider ones', () => {
    const n = 3000, d = 12, R = 5;
    const x = data(n, d, 5);
    return encodeBits({ x, n, d, anchors: new Float32Array(d), assign: new Uint32Array(n) }, R).then(({ residuals: res }) => {
      const b = Array.from(res.bits);
      expect(b.reduce((s, v) => s + v, 0)).toBeLessThanOrEqual(8 * R);
      expect(b[0]).toBe(0);
      expect(b[d - 1]).toBeGreaterThanOrEqual(b[1]);
      // The allocation alone: every bit lowers every dimension's error by 1, so ties all the way: the lower dimension wins.
      const flat = Float64Array.from({ length: 4 * 9 }, (_, i) => 9 - (i % 9));
      expect(Array.from(allocateBits(flat, 4, 1))).toEqual([8, 0, 0, 0]);
      // A first bit that costs more than it saves (1 bit: no level near the data) is taken with the next ones.
      const err = Float64Array.from([10, 12, 2, 1, 1, 1, 1, 1, 1, /* dim 1: */ 10, 9, 8, 7, 6, 5, 4, 3, 2]);
      expect(Array.from(allocateBits(err, 2, 1))).toEqual([3, 5]); // 2 bits at 4 a bit, a third tied with dimension 1 (the lower wins), the rest to 1
    });
  });

  it('reads its section back to the same reconstruction, within a small error of the input', async () => {
    const n = 2001, d = 13, R = 7;
    const x = data(n, d, 9);
    const anchors = new Float32Array(2 * d).map((_, i) => (i % d) * 0.25);
    const assign = Uint32Array.from({ length: n }, (_, i) => i % 2);
    const { residuals: res, residualEnergy } = await encodeBits({ x, n, d, anchors, assign }, R);
    const payload = concat(res.payload());
    expect(payload.length).toBe(bitsPayloadBytes(n, d, R));
    const back = bitsSection.read(payload, { n, d, m: 2, assignments: assign }, corrupt);
    const a = new Float32Array(d), b = new Float32Array(d);
    let err = 0, energy = 0;
    for (let i = 0; i < n; i++) {
      a.set(anchors.subarray(assign[i] * d, assign[i] * d + d));
      b.set(a);
      res.addTo(i, a);
      back.addTo(i, b);
      expect(Array.from(b)).toEqual(Array.from(a));
      for (let k = 0; k < d; k++) {
        err += (x[i * d + k] - a[k]) ** 2;
        energy += (x[i * d + k] - anchors[assign[i] * d + k]) ** 2;
      }
    }
    expect(err).toBeLessThan(0.05 * energy);
    expect(residualEnergy).toBeCloseTo(err / n, 9); // the encoder's sum is the decoder's error
  });

  it('writes the same codes and error sum on one thread and on two', async () => {
    const n = 40_000, d = 9; // three blocks of rows
    const x = new Float32Array(new SharedArrayBuffer(n * d * 4));
    x.set(data(n, d, 21));
    const input = { x, n, d, anchors: new Float32Array(d), assign: new Uint32Array(n) };
    const one = await encodeBits(input, 4, 1);
    const two = await encodeBits(input, 4, 2);
    expect(Buffer.from([...two.residuals.codes]).equals(Buffer.from([...one.residuals.codes]))).toBe(true);
    expect(two.residualEnergy).toBe(one.residualEnergy);
  });

  it('reuses its step table for the same vectors and anchors at another R (what --quality measures), with the bytes of a fresh encoding', async () => {
    const n = 3000, d = 12;
    const x = new Float32Array(new SharedArrayBuffer(n * d * 4));
    x.set(data(n, d, 5));
    const anchors = Float32Array.from({ length: d }, (_, k) => 0.01 * k);
    const input = { x, n, d, anchors, assign: new Uint32Array(n) };
    await encodeBits(input, 3, 1); // fills the table for these vectors
    const again = await encodeBits(input, 7, 1);
    const copy = new Float32Array(new SharedArrayBuffer(n * d * 4));
    copy.set(x);
    const fresh = await encodeBits({ ...input, x: copy }, 7, 1);
    expect(Buffer.from(again.residuals.codes).equals(Buffer.from(fresh.residuals.codes))).toBe(true);
    expect(again.residualEnergy).toBe(fresh.residualEnergy);
    // other anchors over the same vectors: a table of their own
    const moved = await encodeBits({ ...input, anchors: anchors.map((a) => a + 0.5) }, 7, 1);
    const movedFresh = await encodeBits({ ...input, x: copy, anchors: anchors.map((a) => a + 0.5) }, 7, 1);
    expect(Array.from(moved.residuals.steps)).toEqual(Array.from(movedFresh.residuals.steps));
    expect(Array.from(moved.residuals.steps)).not.toEqual(Array.from(again.residuals.steps));
  });

  it('refuses a payload that makes no sense, saying what is wrong', async () => {
    const n = 40, d = 6, R = 3;
    const { residuals: res } = await encodeBits({ x: data(n, d, 2), n, d, anchors: new Float32Array(d), assign: new Uint32Array(n) }, R);
    const good = concat(res.payload());
    const ctx = { n, d, m: 1, assignments: new Uint32Array(n) };
    const read = (p: Uint8Array) => () => bitsSection.read(p, ctx, corrupt);
    expect(read(good)).not.toThrow();
    expect(read(good.subarray(0, good.length - 1))).toThrow(/payload is \d+ bytes, expected/);
    const tooMany = good.slice();
    tooMany[8] = 9;
    expect(read(tooMany)).toThrow(/dimension 0 has 9 bits/);
    const over = good.slice();
    over.fill(8, 8, 8 + d);
    expect(read(over)).toThrow(/add up to 48, more than 3 bytes hold/);
    const step = good.slice();
    new DataView(step.buffer).setFloat32(8 + 8, NaN, true);
    expect(read(step)).toThrow(/step of dimension 0 is NaN/);
    const zeroR = good.slice();
    new DataView(zeroR.buffer).setUint32(0, 0, true);
    expect(read(zeroR)).toThrow(/0 code bytes per vector/);
    // A bit set past the last code of a row.
    const used = Array.from(res.bits).reduce((s, b) => s + b, 0);
    if (used < 8 * R) {
      const past = good.slice();
      const codes = 8 + 8 + 4 * d;
      past[codes + R - 1] |= 0x80;
      expect(read(past)).toThrow(/vector 0 has bits set past its codes/);
    }
  });
});
