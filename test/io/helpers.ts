// Shared by the test/io suites: a scratch directory, a deterministic test matrix, an .npy builder
// that can also produce broken files, and an assertion for one-line UsageErrors.
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { expect } from 'vitest';
import { viewAll } from '../../src/vectors/dataset.js';

export function scratchDir(tag: string): string {
  return fs.mkdtempSync(path.join(os.tmpdir(), `vlc-io-${tag}-`));
}

/** Row i, dim j of every test matrix: exact in f16 and f32 (same formula as fixtures/make-fixtures.mjs). */
export const value = (i: number, j: number): number => (((i * 13 + j) % 17) - 8) * 0.25;

export function matrix(n: number, d: number): Float32Array {
  const x = new Float32Array(n * d);
  for (let i = 0; i < n; i++) for (let j = 0; j < d; j++) x[i * d + j] = value(i, j);
  return x;
}

export interface NpySpec {
  descr: string;
  shape: number[];
  fortran?: boolean;
  version?: 1 | 2 | 3;
  /** Element bytes in file order; default: the matrix() values encoded by descr. */
  body?: Uint8Array;
}

/** Encode matrix values (row-major, or column-major when fortran) as descr's element type. */
export function encodeValues(descr: string, shape: number[], fortran = false): Uint8Array {
  const [n, d] = shape.length === 2 ? shape : [shape.reduce((a, b) => a * b, 1), 1];
  const vals: number[] = [];
  if (fortran) for (let j = 0; j < d; j++) for (let i = 0; i < n; i++) vals.push(value(i, j));
  else for (let i = 0; i < n; i++) for (let j = 0; j < d; j++) vals.push(value(i, j));
  switch (descr.slice(1)) {
    case 'f4':
      return new Uint8Array(new Float32Array(vals).buffer);
    case 'f8':
      return new Uint8Array(new Float64Array(vals).buffer);
    case 'f2':
      return new Uint8Array(new Uint16Array(vals.map(halfBits)).buffer);
    case 'u1':
      return new Uint8Array(vals.map((v) => (v + 2) * 4)); // 0..64: exact
    default:
      return new Uint8Array(vals.length * 4);
  }
}

/** IEEE half bits of a value that is exactly representable (all test values are). */
export function halfBits(v: number): number {
  if (v === 0) return Object.is(v, -0) ? 0x8000 : 0;
  const sign = v < 0 ? 0x8000 : 0;
  const a = Math.abs(v);
  const e = Math.floor(Math.log2(a));
  const mant = Math.round((a / 2 ** e - 1) * 1024);
  return sign | ((e + 15) << 10) | mant;
}

export function npyBytes(s: NpySpec): Uint8Array {
  const version = s.version ?? 1;
  const dict = `{'descr': '${s.descr}', 'fortran_order': ${s.fortran ? 'True' : 'False'}, 'shape': (${s.shape.join(', ')}${s.shape.length === 1 ? ',' : ''}), }`;
  const pre = version === 1 ? 10 : 12;
  const total = Math.ceil((pre + dict.length + 1) / 64) * 64;
  const header = dict.padEnd(total - pre - 1, ' ') + '\n';
  const body = s.body ?? encodeValues(s.descr, s.shape, s.fortran);
  const out = new Uint8Array(total + body.length);
  out.set([0x93, 0x4e, 0x55, 0x4d, 0x50, 0x59, version, 0]);
  const dv = new DataView(out.buffer);
  if (version === 1) dv.setUint16(8, header.length, true);
  else dv.setUint32(8, header.length, true);
  out.set(Buffer.from(header, 'latin1'), pre);
  out.set(body, total);
  return out;
}

export function writeFile(dir: string, name: string, bytes: Uint8Array | string): string {
  const p = path.join(dir, name);
  fs.writeFileSync(p, bytes);
  return p;
}

/** The promise rejects with a UsageError whose single-line message matches every pattern. */
export async function expectUsage(p: Promise<unknown>, ...patterns: (RegExp | string)[]): Promise<string> {
  let err: Error | undefined;
  try {
    await p;
  } catch (e) {
    err = e as Error;
  }
  expect(err, 'expected a UsageError').toBeDefined();
  expect(err!.name).toBe('UsageError');
  expect(err!.message).not.toContain('\n');
  for (const pat of patterns) expect(err!.message).toMatch(pat);
  return err!.message;
}

/** Dataset values as plain f32 numbers (decoding f16). */
export function asNumbers(ds: { n: number; d: number; dtype: 'f32' | 'f16'; buffer: SharedArrayBuffer; byteOffset: number }, f16ToF32: (h: number) => number): number[] {
  const v = viewAll(ds);
  return ds.dtype === 'f32' ? Array.from(v) : Array.from(v as Uint16Array, f16ToF32);
}
