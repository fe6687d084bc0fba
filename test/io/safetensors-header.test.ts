// safetensors headers from a hostile or broken writer: every entry is validated (shape, dtype,
// data_offsets that tile the data area exactly), each problem one line naming the tensor — never a
// JavaScript TypeError, never header bytes read as vectors (issue 16, classes 1 and 5).
import { describe, expect, it } from 'vitest';
import { readDataset } from '../../dist/io/read.js';
import { viewAll } from '../../dist/vectors/dataset.js';
import { expectUsage, matrix, scratchDir, writeFile } from './helpers.js';

const dir = scratchDir('st-header');
const f32 = Buffer.from(matrix(7, 13).buffer); // 364 bytes

/** A safetensors file with the header JSON given verbatim, then `data`. */
function st(headerJson: string, data: Uint8Array = f32, declared?: bigint): Uint8Array {
  const json = Buffer.from(headerJson, 'utf8');
  const len = Buffer.alloc(8);
  len.writeBigUInt64LE(declared ?? BigInt(json.length));
  return Buffer.concat([len, json, data]);
}

const good = (entry: string) => `{"emb": ${entry}}`;

describe('safetensors header validation', () => {
  const cases: Array<[string, string, Uint8Array | undefined, (string | RegExp)[]]> = [
    // The seven malformed headers of the held-out battery, one line each.
    ['no shape', good('{"dtype": "F32", "data_offsets": [0, 364]}'), undefined, ["tensor 'emb' has no 'shape'"]],
    ['a null entry', good('null'), undefined, ["tensor 'emb' is None, not an object"]],
    ['no data_offsets', good('{"dtype": "F32", "shape": [7, 13]}'), undefined, ["tensor 'emb' has no 'data_offsets'"]],
    ['a negative shape', good('{"dtype": "F32", "shape": [-7, 13], "data_offsets": [0, 364]}'), undefined, ['not a list of non-negative integers']],
    ['fractional offsets', good('{"dtype": "F32", "shape": [7, 13], "data_offsets": [0.5, 364.5]}'), undefined, ["'data_offsets' that are not two integers"]],
    ['string shapes', good('{"dtype": "F32", "shape": ["7", "13"], "data_offsets": [0, 364]}'), undefined, ['not a list of non-negative integers']],
    ['a JSON array', '[{"dtype": "F32", "shape": [7, 13], "data_offsets": [0, 364]}]', undefined, ["does not start with '{'"]],
    // Offsets that would read the header (or nothing) as vectors.
    ['negative offsets', good('{"dtype": "F32", "shape": [16], "data_offsets": [-64, 0]}'), undefined, ['data_offsets [-64, 0]', '0 <= begin <= end']],
    ['offsets reversed', good('{"dtype": "F32", "shape": [7, 13], "data_offsets": [364, 0]}'), undefined, ['data_offsets [364, 0]']],
    ['offsets past the file', good('{"dtype": "F32", "shape": [7, 13], "data_offsets": [364, 728]}'), undefined, ['gap of 364 bytes']],
    ['offsets beyond 2^53', good('{"dtype": "U8", "shape": [8], "data_offsets": [18446744073709551600, 18446744073709551608]}'), undefined, ['gap of 18446744073709551600 bytes']],
    [
      'overlapping tensors',
      '{"a": {"dtype": "F32", "shape": [7, 13], "data_offsets": [0, 364]}, "b": {"dtype": "F32", "shape": [13], "data_offsets": [312, 364]}}',
      undefined,
      ["tensor 'b' (bytes 312..364) overlaps tensor 'a'"],
    ],
    ['a tensor ending past the data', good('{"dtype": "F32", "shape": [8, 13], "data_offsets": [0, 416]}'), undefined, ['ends at data byte 416, past the 364 bytes']],
    ['bytes after the last tensor', good('{"dtype": "F32", "shape": [6, 13], "data_offsets": [0, 312]}'), undefined, ['52 bytes after its last tensor']],
    ['a size that does not match shape x dtype', good('{"dtype": "F32", "shape": [7, 13], "data_offsets": [0, 360]}'), undefined, ['needs 364 bytes but its data_offsets span 360']],
    ['an unknown dtype', good('{"dtype": "F33", "shape": [7, 13], "data_offsets": [0, 364]}'), undefined, ['unknown dtype "F33"']],
    ['a dtype that is not a string', good('{"dtype": 32, "shape": [7, 13], "data_offsets": [0, 364]}'), undefined, ["'dtype' that is an integer"]],
    ['three offsets', good('{"dtype": "F32", "shape": [7, 13], "data_offsets": [0, 182, 364]}'), undefined, ['not two integers']],
    ['a duplicate tensor name', '{"emb": {"dtype": "F32", "shape": [7, 13], "data_offsets": [0, 364]}, "emb": {"dtype": "F32", "shape": [13], "data_offsets": [0, 52]}}', undefined, ['duplicate key "emb"']],
    ['metadata that is not strings', '{"__metadata__": {"n": 7}, "emb": {"dtype": "F32", "shape": [7, 13], "data_offsets": [0, 364]}}', undefined, ["'__metadata__' must be an object of strings"]],
    ['invalid JSON', '{"emb": {"dtype": "F32", "shape": [7, 13], "data_offsets": [0, 364]}', undefined, ['not valid JSON']],
    ['a tensor name with a newline', '{"a\\nb": {"dtype": "F32", "shape": [7, 13], "data_offsets": [0, 360]}}', undefined, ["tensor 'a\\nb'"]],
    ['an empty header with data', '{}', undefined, ['364 bytes after its last tensor']],
    ['a shape product that overflows', good('{"dtype": "F32", "shape": [4294967296, 4294967296, 4294967296], "data_offsets": [0, 364]}'), undefined, ['needs 316912650057057350374175801344 bytes']],
  ];
  it.each(cases)('%s', async (what, header, data, patterns) => {
    const p = writeFile(dir, `${what.replace(/\W+/g, '-')}.safetensors`, st(header, data));
    // --format too: a JSON array does not even look like safetensors to the sniffer.
    const msg = await expectUsage(readDataset(p, { format: 'safetensors' }), ...patterns);
    expect(msg).not.toMatch(/Cannot read|undefined|TypeError|is not a function/);
  });

  it('a header length beyond the format limit is refused before reading it', async () => {
    const p = writeFile(dir, 'huge-len.safetensors', st(good('{}'), f32, 1n << 40n));
    await expectUsage(readDataset(p, { format: 'safetensors' }), 'claims 1099511627776 bytes', 'at most 100000000');
  });
  it('a header length past the end of the file', async () => {
    const p = writeFile(dir, 'past-end.safetensors', st(good('{"dtype": "F32", "shape": [7, 13], "data_offsets": [0, 364]}'), new Uint8Array(0), 5000n));
    await expectUsage(readDataset(p, { format: 'safetensors' }), 'truncated safetensors', 'header says 5000 bytes');
  });
  it('header bytes that are not UTF-8', async () => {
    const bytes = Buffer.from(st(good('{"dtype": "F32", "shape": [7, 13], "data_offsets": [0, 364]}')));
    bytes[8 + 3] = 0xfe;
    const p = writeFile(dir, 'not-utf8.safetensors', bytes);
    await expectUsage(readDataset(p, { format: 'safetensors' }), 'not valid UTF-8');
  });
  it('a valid file with several tensors, metadata and white-space padding still reads', async () => {
    const header = '{"__metadata__": {"format": "pt"}, "bias": {"dtype": "F32", "shape": [13], "data_offsets": [364, 416]}, "emb": {"dtype": "F32", "shape": [7, 13], "data_offsets": [0, 364]}}   ';
    const p = writeFile(dir, 'valid.safetensors', st(header, Buffer.concat([f32, f32.subarray(0, 52)])));
    const ds = await readDataset(p);
    expect([ds.n, ds.d]).toEqual([7, 13]);
    expect(Array.from(viewAll(ds))).toEqual(Array.from(matrix(7, 13)));
  });
});
