import { describe, expect, it } from 'vitest';
import { readDataset } from '../../dist/io/read.js';
import { f16ToF32, viewAll } from '../../dist/vectors/dataset.js';
import { asNumbers, expectUsage, halfBits, matrix, scratchDir, writeFile } from './helpers.js';

const dir = scratchDir('vecs');

function fvecs(n: number, d: number, dimOf = (_i: number) => d): Uint8Array {
  const x = matrix(n, d);
  const parts: Uint8Array[] = [];
  for (let i = 0; i < n; i++) {
    parts.push(new Uint8Array(new Int32Array([dimOf(i)]).buffer));
    parts.push(new Uint8Array(x.slice(i * d, (i + 1) * d).buffer));
  }
  return Buffer.concat(parts);
}

function bvecs(n: number, d: number): Uint8Array {
  const parts: Uint8Array[] = [];
  for (let i = 0; i < n; i++) {
    parts.push(new Uint8Array(new Int32Array([d]).buffer));
    parts.push(Uint8Array.from({ length: d }, (_, j) => (i * 31 + j * 7) % 256));
  }
  return Buffer.concat(parts);
}

describe('fvecs / bvecs', () => {
  it('reads fvecs 7 x 13', async () => {
    const ds = await readDataset(writeFile(dir, 'a.fvecs', fvecs(7, 13)));
    expect([ds.n, ds.d, ds.dtype, ds.format]).toEqual([7, 13, 'f32', 'fvecs']);
    expect(Array.from(viewAll(ds))).toEqual(Array.from(matrix(7, 13)));
  });
  it('reads bvecs as f32', async () => {
    const ds = await readDataset(writeFile(dir, 'a.bvecs', bvecs(5, 9)));
    expect([ds.n, ds.d, ds.dtype, ds.format]).toEqual([5, 9, 'f32', 'bvecs']);
    expect(viewAll(ds)[1 * 9 + 2]).toBe((31 + 14) % 256);
  });
  it('sniffs fvecs without a telling extension', async () => {
    const ds = await readDataset(writeFile(dir, 'noext', fvecs(4, 6)));
    expect(ds.format).toBe('fvecs');
  });
  it('names the record with another dimension', async () => {
    const p = writeFile(dir, 'mixed.fvecs', fvecs(7, 13, (i) => (i === 4 ? 12 : 13)));
    await expectUsage(readDataset(p), 'record 4 has dimension 12 but record 0 has 13');
  });
  it('truncated last record', async () => {
    const full = fvecs(7, 13);
    const p = writeFile(dir, 'cut.fvecs', full.subarray(0, full.length - 8));
    await expectUsage(readDataset(p), 'truncated .fvecs', '7 records of dimension 13 need 392 bytes, the file has 384');
  });
  it('d = 0', async () => {
    const p = writeFile(dir, 'zero.fvecs', new Uint8Array(new Int32Array([0, 0]).buffer));
    await expectUsage(readDataset(p), 'dimension 0');
  });
});

describe('raw f32 / f16', () => {
  it('reads raw f32 with dim', async () => {
    const p = writeFile(dir, 'a.f32', new Uint8Array(matrix(7, 13).buffer));
    const ds = await readDataset(p, { dim: 13 });
    expect([ds.n, ds.d, ds.dtype, ds.format]).toEqual([7, 13, 'f32', 'raw f32']);
    expect(Array.from(viewAll(ds))).toEqual(Array.from(matrix(7, 13)));
  });
  it('reads raw f16 kept as f16', async () => {
    const bits = Uint16Array.from(matrix(7, 13), halfBits);
    const p = writeFile(dir, 'a.bin', new Uint8Array(bits.buffer));
    const ds = await readDataset(p, { format: 'raw', dim: 13, rawDtype: 'f16' });
    expect(ds.dtype).toBe('f16');
    expect(asNumbers(ds, f16ToF32)).toEqual(Array.from(matrix(7, 13)));
  });
  it('needs --dim', async () => {
    const p = writeFile(dir, 'b.f32', new Uint8Array(matrix(7, 13).buffer));
    await expectUsage(readDataset(p, { format: 'raw' }), 'pass --dim D');
  });
  it('size not a multiple of the row', async () => {
    const p = writeFile(dir, 'c.f32', new Uint8Array(matrix(7, 13).buffer));
    await expectUsage(readDataset(p, { format: 'raw', dim: 12 }), 'not a whole number of 12-dim vectors', 'wrong --dim');
  });
});

function safetensors(tensors: Record<string, { dtype: string; shape: number[]; bytes: Uint8Array }>): Uint8Array {
  const header: Record<string, unknown> = { __metadata__: { made: 'test' } };
  let off = 0;
  for (const [k, t] of Object.entries(tensors)) {
    header[k] = { dtype: t.dtype, shape: t.shape, data_offsets: [off, off + t.bytes.length] };
    off += t.bytes.length;
  }
  const json = Buffer.from(JSON.stringify(header));
  const len = new Uint8Array(8);
  new DataView(len.buffer).setBigUint64(0, BigInt(json.length), true);
  return Buffer.concat([len, json, ...Object.values(tensors).map((t) => t.bytes)]);
}

describe('safetensors', () => {
  const f32 = new Uint8Array(matrix(7, 13).buffer);
  const f16 = new Uint8Array(Uint16Array.from(matrix(7, 13), halfBits).buffer);
  const bf16 = new Uint8Array(Uint16Array.from(new Uint32Array(matrix(7, 13).buffer), (u) => u >>> 16).buffer);

  it('reads the only 2-D tensor', async () => {
    const p = writeFile(dir, 'a.safetensors', safetensors({ bias: { dtype: 'F32', shape: [13], bytes: f32.subarray(0, 52) }, emb: { dtype: 'F32', shape: [7, 13], bytes: f32 } }));
    const ds = await readDataset(p);
    expect([ds.n, ds.d, ds.dtype]).toEqual([7, 13, 'f32']);
    expect(Array.from(viewAll(ds))).toEqual(Array.from(matrix(7, 13)));
  });
  it('F16 stays f16, BF16 becomes f32, --tensor picks', async () => {
    const p = writeFile(dir, 'b.safetensors', safetensors({ h: { dtype: 'F16', shape: [7, 13], bytes: f16 }, b: { dtype: 'BF16', shape: [7, 13], bytes: bf16 } }));
    const h = await readDataset(p, { tensor: 'h' });
    expect(h.dtype).toBe('f16');
    expect(asNumbers(h, f16ToF32)).toEqual(Array.from(matrix(7, 13)));
    const b = await readDataset(p, { tensor: 'b' });
    expect(b.dtype).toBe('f32');
    expect(Array.from(viewAll(b))).toEqual(Array.from(matrix(7, 13))); // test values are exact in bf16
  });
  it('several 2-D tensors without --tensor', async () => {
    const p = writeFile(dir, 'c.safetensors', safetensors({ h: { dtype: 'F16', shape: [7, 13], bytes: f16 }, b: { dtype: 'BF16', shape: [7, 13], bytes: bf16 } }));
    await expectUsage(readDataset(p), 'several 2-D tensors', '--tensor NAME', 'h (F16 [7, 13])');
    await expectUsage(readDataset(p, { tensor: 'x' }), "no tensor named 'x'");
  });
  it('unsupported dtype', async () => {
    const p = writeFile(dir, 'd.safetensors', safetensors({ ids: { dtype: 'I64', shape: [7, 13], bytes: new Uint8Array(7 * 13 * 8) } }));
    await expectUsage(readDataset(p), 'unsupported dtype I64', 'F32, F16');
  });
  it('header shape disagrees with the data offsets', async () => {
    const p = writeFile(dir, 'e.safetensors', safetensors({ emb: { dtype: 'F32', shape: [8, 13], bytes: f32 } }));
    await expectUsage(readDataset(p), 'needs 416 bytes but its data_offsets span 364');
  });
});
