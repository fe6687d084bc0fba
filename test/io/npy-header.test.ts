// The .npy header is a Python literal dict, parsed by a grammar (src/io/readers/literal.ts) and
// checked the way numpy checks it: hostile or odd headers are refused with one line naming the
// problem, never read as something else (issue 16, class 1). Big-endian arrays are byte-swapped.
import { describe, expect, it } from 'vitest';
import { readDataset } from '../../dist/io/read.js';
import { f16ToF32, viewAll } from '../../dist/vectors/dataset.js';
import { parseJson, parsePythonLiteral } from '../../dist/io/readers/literal.js';
import { asNumbers, encodeValues, expectUsage, matrix, scratchDir, writeFile } from './helpers.js';

const dir = scratchDir('npy-header');

/** An .npy file with the header text given verbatim (padded to 64 bytes) and `body` after it. */
function rawNpy(header: string, body: Uint8Array, o: { version?: number; minor?: number; declaredLength?: number } = {}): Uint8Array {
  const version = o.version ?? 1;
  const pre = version === 1 ? 10 : 12;
  const text = Buffer.from(header, version === 3 ? 'utf8' : 'latin1');
  const total = Math.ceil((pre + text.length + 1) / 64) * 64;
  const padded = Buffer.alloc(total - pre, 0x20);
  text.copy(padded);
  padded[padded.length - 1] = 0x0a;
  const head = Buffer.alloc(pre);
  head.set([0x93, 0x4e, 0x55, 0x4d, 0x50, 0x59, version, o.minor ?? 0]);
  const len = o.declaredLength ?? padded.length;
  if (version === 1) head.writeUInt16LE(len, 8);
  else head.writeUInt32LE(len, 8);
  return Buffer.concat([head, padded, body]);
}

const body7x13 = encodeValues('<f4', [7, 13]);
const dict = (descr: string, shape: string, extra = '') => `{'descr': ${descr}, 'fortran_order': False, 'shape': ${shape}, ${extra}}`;

/** Big-endian bytes of the test matrix in the given element type (row-major, or column-major). */
function bigEndian(code: 'f2' | 'f4' | 'f8', n: number, d: number, fortran = false): Uint8Array {
  const le = encodeValues(`<${code}`, [n, d], fortran);
  const eb = Number(code.slice(1));
  const out = Buffer.from(le);
  for (let i = 0; i < out.length; i += eb) out.subarray(i, i + eb).reverse();
  return out;
}

describe('npy header grammar: accepted the way numpy accepts it', () => {
  it.each([
    ['double-quoted keys and values', `{"descr": "<f4", "fortran_order": False, "shape": (7, 13)}`],
    ['Python 2 long suffixes', dict("'<f4'", '(7L, 13L)')],
    ['implicit string concatenation', dict("'<' 'f4'", '(7, 13)')],
    ['an escaped descr', dict("'\\x3cf4'", '(7, 13)')],
    ['keys in another order, a comment and line breaks', `{'shape': (7,\n 13), # rows, dims\n 'fortran_order': False, 'descr': '<f4'}`],
    ['native byte order', dict("'=f4'", '(7, 13)')],
    ['a numpy type name', dict("'float32'", '(7, 13)')],
    ['underscores and hex in dimensions', dict("'<f4'", '(0x7, 1_3)')],
  ])('%s', async (_what, header) => {
    const p = writeFile(dir, `ok-${_what.replace(/\W+/g, '-')}.npy`, rawNpy(header, body7x13));
    const ds = await readDataset(p);
    expect([ds.n, ds.d]).toEqual([7, 13]);
    expect(Array.from(viewAll(ds))).toEqual(Array.from(matrix(7, 13)));
  });

  it.each([
    ['f4', 'f32', false],
    ['f2', 'f16', false],
    ['f8', 'f32', false],
    ['f4', 'f32', true],
    ['f2', 'f16', true],
    ['f8', 'f32', true],
  ] as const)('reads big-endian >%s (fortran %s)', async (code, dtype, fortran) => {
    const [n, d] = [300, 70]; // more than one Fortran read block
    const header = `{'descr': '>${code}', 'fortran_order': ${fortran ? 'True' : 'False'}, 'shape': (${n}, ${d}), }`;
    const p = writeFile(dir, `be-${code}-${fortran}.npy`, rawNpy(header, bigEndian(code, n, d, fortran)));
    const ds = await readDataset(p);
    expect([ds.n, ds.d, ds.dtype]).toEqual([n, d, dtype]);
    expect(ds.format).toContain('big-endian');
    expect(asNumbers(ds, f16ToF32)).toEqual(Array.from(matrix(n, d)));
  });
});

describe('npy header grammar: refused with one line', () => {
  const cases: Array<[string, string, (RegExp | string)[]]> = [
    // The held-out battery's example: numpy takes the last 'shape'; a regex took the first.
    ['a duplicate key', dict("'<f4'", '(10, 4)', "'shape': (5, 8)"), ['duplicate key "shape"']],
    ['a string value holding another descr', `{'descr': '<f4', 'fortran_order': False, 'shape': (7, 13), 'note': "'descr': '<f8'"}`, ["unknown \"note\""]],
    ['an unknown key', dict("'<f4'", '(7, 13)', "'version': 2"), ['exactly', 'unknown "version"']],
    ['a missing key', `{'descr': '<f4', 'shape': (7, 13)}`, ["missing 'fortran_order'"]],
    ['a list instead of a dict', `['<f4', False, (7, 13)]`, ['a list, not a dict']],
    ['a structured dtype', dict("[('a', '<f4'), ('b', '<f4')]", '(7,)'), ['structured']],
    ['a sub-array dtype', dict("('<f4', (13,))", '(7,)'), ['sub-array']],
    ['fortran_order as a string', `{'descr': '<f4', 'fortran_order': 'False', 'shape': (7, 13)}`, ["'fortran_order' is a string"]],
    ['shape as a list', dict("'<f4'", '[7, 13]'), ["'shape' is a list, not a tuple"]],
    ['shape as a bare int', dict("'<f4'", '(91)'), ["'shape' is an integer, not a tuple"]],
    ['a negative dimension', dict("'<f4'", '(-7, 13)'), ['negative dimension (-7)']],
    ['a float dimension', dict("'<f4'", '(7.0, 13)'), ['a float at position 0']],
    ['a boolean dimension', dict("'<f4'", '(True, 13)'), ['a boolean at position 0']],
    ['an impossible dimension', dict("'<f4'", '(99999999999999999999, 13)'), ['impossibly large']],
    ['dimensions whose product overflows', dict("'<f4'", '(4294967296, 4294967296)'), ['needs 73786976294838206464 data bytes']],
    ['an unknown dtype', dict("'<x9'", '(7, 13)'), ["unsupported dtype '<x9'"]],
    ['a dtype with junk', dict("'<f4; rm -rf'", '(7, 13)'), ['is not a numpy dtype']],
    ['an unterminated string', `{'descr': '<f4, 'fortran_order': False, 'shape': (7, 13)}`, ['not a valid Python literal']],
    ['a function call', `{'descr': eval('<f4'), 'fortran_order': False, 'shape': (7, 13)}`, ["'eval' is not a literal"]],
    ['trailing text after the dict', `${dict("'<f4'", '(7, 13)')} ; import os`, ['unexpected text after the value']],
    ['nesting without end', `{'descr': ${'('.repeat(100)}`, ['nested too deeply']],
    ['a bytes literal', dict("b'<f4'", '(7, 13)'), ['bytes literal']],
    ['an integer with a leading zero', dict("'<f4'", '(07, 13)'), ['leading zero']],
  ];
  it.each(cases)('%s', async (what, header, patterns) => {
    const p = writeFile(dir, `bad-${what.replace(/\W+/g, '-')}.npy`, rawNpy(header, body7x13));
    const msg = await expectUsage(readDataset(p), ...patterns);
    expect(msg.startsWith(p)).toBe(true);
  });

  it('a header length past the end of the file', async () => {
    const p = writeFile(dir, 'len-past-end.npy', rawNpy(dict("'<f4'", '(7, 13)'), new Uint8Array(0), { declaredLength: 60000 }));
    await expectUsage(readDataset(p), 'truncated .npy header', 'says 60000 bytes');
  });
  it('a header length of 4 GB (version 2) is refused before anything is read', async () => {
    const p = writeFile(dir, 'len-huge.npy', rawNpy(dict("'<f4'", '(7, 13)'), body7x13, { version: 2, declaredLength: 0xfffffff0 }));
    await expectUsage(readDataset(p), 'claims 4294967280 bytes', 'numpy itself refuses');
  });
  it.each([[4, 0], [1, 1]])('format version %i.%i', async (version, minor) => {
    const p = writeFile(dir, `v${version}.${minor}.npy`, rawNpy(dict("'<f4'", '(7, 13)'), body7x13, { version: version === 4 ? 2 : version, minor }));
    if (version === 4) {
      const b = Buffer.from(await import('node:fs').then((fs) => fs.readFileSync(p)));
      b[6] = 4;
      writeFile(dir, `v${version}.${minor}.npy`, b);
    }
    await expectUsage(readDataset(p), `version ${version}.${minor} is not supported`);
  });
  it('invalid UTF-8 in a version 3 header', async () => {
    const bytes = Buffer.from(rawNpy(dict("'<f4'", '(7, 13)'), body7x13, { version: 3 }));
    bytes[12 + 3] = 0xff; // inside the header text
    const p = writeFile(dir, 'v3-utf8.npy', bytes);
    await expectUsage(readDataset(p), 'not valid UTF-8');
  });
  it('a header with control characters is shown on one line', async () => {
    const p = writeFile(dir, 'ctl.npy', rawNpy(`{'descr': '<f4',\n\n\r 'fortran_order': False, 'shape': (7, 13), 'x\\ny': 1}`, body7x13));
    await expectUsage(readDataset(p), 'unknown "x\\ny"');
  });
});

describe('literal grammars', () => {
  it('Python: escapes, raw and triple-quoted strings, signs, None', () => {
    const v = parsePythonLiteral(`{'a': 'it\\'s\\t\\u00e9', 'b': r'\\d', 'c': '''x'y''', 'd': -0x10, 'e': None, 'f': (1,), 'g': ()}`) as { kind: 'dict'; entries: Map<string, unknown> };
    expect(v.kind).toBe('dict');
    expect(v.entries.get('a')).toEqual({ kind: 'str', value: "it's\té" });
    expect(v.entries.get('b')).toEqual({ kind: 'str', value: '\\d' });
    expect(v.entries.get('c')).toEqual({ kind: 'str', value: "x'y" });
    expect(v.entries.get('d')).toEqual({ kind: 'int', value: -16n });
    expect(v.entries.get('e')).toEqual({ kind: 'none' });
    expect(v.entries.get('f')).toEqual({ kind: 'tuple', items: [{ kind: 'int', value: 1n }] });
    expect(v.entries.get('g')).toEqual({ kind: 'tuple', items: [] });
  });
  it('JSON: exact big integers, floats apart from integers, strict syntax', () => {
    expect(parseJson('[18446744073709551615, 1.5, -0]')).toEqual({
      kind: 'list',
      items: [{ kind: 'int', value: 18446744073709551615n }, { kind: 'float', value: 1.5 }, { kind: 'int', value: 0n }],
    });
    for (const bad of ['{"a":1,"a":2}', '[1,]', "{'a': 1}", '{"a": NaN}', '{"a": 01}', '"\u0001"', '{"a": 1} x'])
      expect(() => parseJson(bad), bad).toThrow();
  });
});
