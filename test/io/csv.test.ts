// CSV / TSV / space-separated text: sniffed by content, optional header, ragged rows named.
import { describe, expect, it } from 'vitest';
import { readDataset } from '../../dist/io/read.js';
import { sniffFormat } from '../../dist/io/sniff.js';
import { expectUsage, matrix, scratchDir, writeFile } from './helpers.js';
import { viewAll } from '../../dist/vectors/dataset.js';

const dir = scratchDir('csv');
const x = matrix(7, 13);
const want = Array.from(x);
const rows = (sep: string) => Array.from({ length: 7 }, (_, i) => Array.from(x.subarray(i * 13, (i + 1) * 13), (v) => v.toExponential(18)).join(sep));
const bytes = (s: string) => new TextEncoder().encode(s);

describe('CSV / TSV', () => {
  it.each([
    ['np.savetxt(delimiter=",")', 'a.dat', rows(',').join('\n') + '\n'],
    ['np.savetxt default (spaces)', 'b.txt', rows(' ').join('\n') + '\n'],
    ['projector vectors.tsv', 'vectors.tsv', rows('\t').join('\n') + '\n'],
    ['a header line, CRLF, no final newline', 'c.csv', ['d0,d1,d2,d3,d4,d5,d6,d7,d8,d9,d10,d11,d12', ...rows(',')].join('\r\n')],
    ["pandas' to_csv (index column)", 'p.csv', [',' + Array.from({ length: 13 }, (_, j) => j).join(','), ...rows(',').map((r, i) => `${i},${r}`)].join('\n') + '\n'],
    ['blank lines and a trailing separator', 'e.csv', '\n' + rows(',').map((r) => r + ',').join('\n\n') + '\n\n'],
  ])('reads %s', async (_label, name, text) => {
    const ds = await readDataset(writeFile(dir, name, text));
    expect([ds.n, ds.d, ds.dtype]).toEqual([7, 13, 'f32']);
    expect(Array.from(viewAll(ds))).toEqual(want);
  });

  it('is sniffed by content, and JSON lines, raw floats and prose are not taken for it', () => {
    const csv = bytes(rows(',').join('\n'));
    expect(sniffFormat(csv, csv.length, 'data')).toBe('csv');
    expect(sniffFormat(csv.subarray(0, 100), csv.length, 'data'), 'a first row longer than the sniffed bytes').toBe('csv');
    const jsonl = bytes('{"embedding": [1, 2, 3]}\n');
    expect(sniffFormat(jsonl, jsonl.length, 'data')).toBe('jsonl');
    const raw = new Uint8Array(new Float32Array([0.5, 1.5, -2, 3, 4, 5, 6, 7]).buffer);
    expect(sniffFormat(raw, raw.length, 'data')).toBeUndefined();
    const digits = new Uint8Array(new Float32Array([1e-38, 2e-38]).buffer);
    expect(sniffFormat(digits, digits.length, 'data')).toBeUndefined();
    const prose = bytes('hello, world\nthis is, not numbers\n');
    expect(sniffFormat(prose, prose.length, 'data')).toBeUndefined();
  });

  it('names the ragged line, a field that is not a number, and NaN rows', async () => {
    const ragged = rows(',');
    ragged[4] = ragged[4].split(',').slice(0, 12).join(',');
    await expectUsage(readDataset(writeFile(dir, 'ragged.csv', ragged.join('\n'))), 'CSV line 5 has 12 values but line 1 (the first row) has 13');
    const word = rows(',');
    word[2] = word[2].replace(/^[^,]+/, 'oops');
    await expectUsage(readDataset(writeFile(dir, 'word.csv', word.join('\n'))), "CSV line 3, field 1: 'oops' is not a number");
    const nan = rows(',');
    nan[3] = nan[3].replace(/^[^,]+/, 'nan');
    await expectUsage(readDataset(writeFile(dir, 'nan.csv', nan.join('\n'))), 'row 3 has a non-finite value (NaN in dimension 0)');
    expect((await readDataset(writeFile(dir, 'nan2.csv', nan.join('\n')), { dropInvalid: true })).n).toBe(6);
    await expectUsage(readDataset(writeFile(dir, 'header-only.csv', 'a,b,c\n')), 'has a header line and no rows');
  });
});
