// Input dtypes are kept: every reader records the element type the vectors came in (u8, i8, f16,
// bf16, f32, f64), the file's manifest keeps it, sizes are told against the input's own bytes,
// and decompress gives the type back by default (integers rounded to nearest, clamped, counted).
import * as fs from 'node:fs';
import * as path from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { compress, decompress, openVlc, readVectors } from '../../dist/index.js';
import { setVerbosity } from '../../dist/log.js';
import { narrow, rint } from '../../dist/io/writers/narrow.js';
import { readDataset } from '../../dist/io/read.js';
import { npyBytes, readNpy, tempDir } from '../cli/helpers.js';
import { rng } from '../rng.js';

const dir = tempDir('dtypes');
setVerbosity('quiet');
afterAll(() => setVerbosity('normal'));

const n = 600;
const d = 16;

/** n × d integers in [lo, hi]: a few centres plus small noise, so int8 residuals decode within ±0.5. */
function integers(lo: number, hi: number, seed: number): number[] {
  const r = rng(seed);
  const centres = Array.from({ length: 6 }, () => Array.from({ length: d }, () => lo + 20 + Math.floor(r() * (hi - lo - 40))));
  const out: number[] = [];
  for (let i = 0; i < n; i++) for (let k = 0; k < d; k++) out.push(Math.max(lo, Math.min(hi, centres[i % 6][k] + Math.floor(r() * 15) - 7)));
  return out;
}

function safetensorsBytes(dtype: string, shape: number[], body: Uint8Array): Uint8Array {
  let json = JSON.stringify({ x: { dtype, shape, data_offsets: [0, body.length] } });
  json = json.padEnd(Math.ceil((8 + json.length) / 8) * 8 - 8, ' ');
  const out = new Uint8Array(8 + json.length + body.length);
  new DataView(out.buffer).setBigUint64(0, BigInt(json.length), true);
  out.set(new TextEncoder().encode(json), 8);
  out.set(body, 8 + json.length);
  return out;
}

const bytes = (a: ArrayBufferView) => new Uint8Array(a.buffer, a.byteOffset, a.byteLength);
const write = (name: string, data: Uint8Array) => {
  const p = path.join(dir, name);
  fs.writeFileSync(p, data);
  return p;
};

describe('readers record the input dtype', () => {
  const vals = integers(0, 100, 1);
  it.each([
    ['u8 .npy', () => write('u8.npy', npyBytes('|u1', [n, d], Uint8Array.from(vals))), 'u8'],
    ['i8 .npy', () => write('i8.npy', npyBytes('|i1', [n, d], bytes(Int8Array.from(vals, (v) => v - 50)))), 'i8'],
    ['f16 .npy', () => write('f16.npy', npyBytes('<f2', [n, d], bytes(narrow(Float32Array.from(vals), 'f16', { clamped: 0 })))), 'f16'],
    ['f64 .npy', () => write('f64.npy', npyBytes('<f8', [n, d], bytes(Float64Array.from(vals)))), 'f64'],
    ['f32 .npy', () => write('f32.npy', npyBytes('<f4', [n, d], bytes(Float32Array.from(vals)))), 'f32'],
    ['bf16 safetensors', () => write('bf16.safetensors', safetensorsBytes('BF16', [n, d], bytes(narrow(Float32Array.from(vals), 'bf16', { clamped: 0 })))), 'bf16'],
    ['i8 safetensors', () => write('i8.safetensors', safetensorsBytes('I8', [n, d], bytes(Int8Array.from(vals, (v) => v - 50)))), 'i8'],
    ['.bvecs', () => {
      const rec = new Uint8Array(n * (4 + d));
      for (let i = 0; i < n; i++) {
        new DataView(rec.buffer).setInt32(i * (4 + d), d, true);
        rec.set(vals.slice(i * d, (i + 1) * d), i * (4 + d) + 4);
      }
      return write('x.bvecs', rec);
    }, 'u8'],
  ] as const)('%s', async (_, make, dtype) => {
    const ds = await readDataset(make());
    expect(ds.inputDtype).toBe(dtype);
    expect([ds.n, ds.d]).toEqual([n, d]);
  });
});

describe('narrowing to the output type', () => {
  it('rounds half to even, clamps integers and counts them', () => {
    expect([0.5, 1.5, 2.5, -0.5, -1.5, -2.5, 2.4999, 2.5001].map(rint)).toEqual([0, 2, 2, -0, -2, -2, 2, 3]);
    const tally = { clamped: 0 };
    expect(Array.from(narrow(Float32Array.of(-3, -0.4, 254.6, 255.5, 300), 'u8', tally))).toEqual([0, 0, 255, 255, 255]);
    expect(tally.clamped).toBe(3); // -3, 255.5 (rounds to 256) and 300
    expect(Array.from(narrow(Float32Array.of(-128.4, -129, 127.5, 5.5), 'i8', tally))).toEqual([-128, -128, 127, 6]);
    expect(tally.clamped).toBe(5);
  });
  it('saturates f16 and bf16 at their largest finite value instead of Inf', () => {
    const tally = { clamped: 0 };
    expect(Array.from(narrow(Float32Array.of(65504, 65519, 65520, -1e9), 'f16', tally))).toEqual([0x7bff, 0x7bff, 0x7bff, 0xfbff]);
    expect(tally.clamped).toBe(2);
    const big = new Float32Array(new Uint32Array([0x7f7fffff]).buffer); // f32's largest: rounds past bf16's
    expect(Array.from(narrow(Float32Array.of(1, big[0], 1.00390625), 'bf16', tally))).toEqual([0x3f80, 0x7f7f, 0x3f80]); // 1 + 2^-8 ties to even
    expect(tally.clamped).toBe(3);
  });
});

describe('compress keeps the dtype; decompress gives it back', () => {
  const opts = { device: 'cpu' as const, residual: 'int8' as const, anchors: 12, iters: 20 };

  it('u8: the manifest says u8, the ratio is against n·d bytes, and int8 residuals round back to the exact input', async () => {
    const vals = integers(0, 255, 2);
    const input = write('exact-u8.npy', npyBytes('|u1', [n, d], Uint8Array.from(vals)));
    const out = path.join(dir, 'exact-u8.vlc');
    const stats = await compress(input, { ...opts, output: out });
    expect(stats.input_dtype).toBe('u8');
    expect(stats.input_bytes).toBe(n * d);
    expect(stats.ratio_input).toBeCloseTo(stats.bytes / (n * d), 12);
    expect(stats.ratio_input).toBeCloseTo(4 * stats.ratio_f32, 12);
    expect((await openVlc(out)).manifest.input.dtype).toBe('u8');
    const r = await decompress(out, { output: path.join(dir, 'exact-u8-out.npy') });
    expect([r.dtype, r.clamped, r.range]).toEqual(['u8', 0, '0..255']);
    const back = readNpy(path.join(dir, 'exact-u8-out.npy'));
    expect(back.descr).toBe('|u1');
    expect(Array.from(back.data)).toEqual(vals);
  });

  it('i8: int8 residuals round back to the exact input, as |i1', async () => {
    const vals = integers(-128, 127, 3);
    const input = write('exact-i8.npy', npyBytes('|i1', [n, d], bytes(Int8Array.from(vals))));
    const out = path.join(dir, 'exact-i8.vlc');
    await compress(input, { ...opts, output: out });
    const r = await decompress(out, { output: path.join(dir, 'exact-i8-out.npy') });
    expect(r.dtype).toBe('i8');
    const raw = fs.readFileSync(path.join(dir, 'exact-i8-out.npy'));
    expect(raw.toString('latin1', 10, 60)).toContain("'descr': '|i1'");
    expect(Array.from(new Int8Array(raw.buffer, raw.byteOffset + raw.length - n * d, n * d))).toEqual(vals);
  });

  it.each([
    ['f16', 'f16.npy', 'x.npy', 'f16'],
    ['f64', 'f64.npy', 'x.npy', 'f64'],
    ['bf16 to .safetensors', 'bf16.safetensors', 'x.safetensors', 'bf16'],
    ['bf16 to .npy (numpy has no bfloat16: f32)', 'bf16.safetensors', 'x.npy', 'f32'],
    ['u8 to .fvecs (f32 only)', 'u8.npy', 'x.fvecs', 'f32'],
  ] as const)('%s', async (_, inputName, outName, want) => {
    const out = path.join(dir, `${inputName}.vlc`);
    if (!fs.existsSync(out)) await compress(path.join(dir, inputName), { ...opts, output: out });
    const target = path.join(dir, `${inputName}-${outName}`);
    const r = await decompress(out, { output: target, force: true });
    expect(r.dtype).toBe(want);
    const back = await readVectors(target);
    expect(back.inputDtype ?? back.dtype).toBe(want === 'bf16' ? 'bf16' : want);
    expect([back.n, back.d]).toEqual([n, d]);
  });

  it('an explicit --dtype the format cannot hold is refused before anything is written', async () => {
    const out = path.join(dir, 'u8.npy.vlc');
    if (!fs.existsSync(out)) await compress(path.join(dir, 'u8.npy'), { ...opts, output: out });
    await expect(decompress(out, { output: path.join(dir, 'no.npy'), dtype: 'bf16' })).rejects.toThrow(/\.npy has no bf16; use \.safetensors for bf16 output/);
    await expect(decompress(out, { output: path.join(dir, 'no.fvecs'), dtype: 'u8' })).rejects.toThrow(/\.fvecs holds float32 only/);
    expect(fs.existsSync(path.join(dir, 'no.npy')) || fs.existsSync(path.join(dir, 'no.fvecs'))).toBe(false);
    const r = await decompress(out, { output: path.join(dir, 'as-f32.npy'), dtype: 'f32' });
    expect(r.dtype).toBe('f32');
  });
});
