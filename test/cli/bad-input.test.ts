// Bad input, end to end through `node bin/vlc.js`: every case must exit with its code (2 for bad
// input or usage, 3 for an unavailable device), print exactly one line on stderr that names the
// problem, no stack trace, nothing on stdout, and leave no output (or temp) file behind.
import * as fs from 'node:fs';
import * as path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { probeCuda } from '../../dist/backend/cuda/index.js';
import { FORMAT_VERSION } from '../../dist/io/vlc/format.js';
import { clustered, leftovers, npyBytes, smallVlc, tempDir, vlc } from './helpers.js';

const N = 100;
const D = 8;
let dir: string;
let inputs: string[];
const hasCuda = probeCuda().ok;

/** Inputs shared by the cases (written once; every case's outputs go to fresh names). */
function makeInputs(): string[] {
  const x = clustered(N, D);
  const body = new Uint8Array(x.buffer);
  const files: Record<string, Uint8Array | string> = {
    'good.npy': npyBytes('<f4', [N, D], body),
    'empty.npy': '',
    'trunc-header.npy': npyBytes('<f4', [N, D], body).subarray(0, 40),
    'trunc-data.npy': npyBytes('<f4', [N, D], body).subarray(0, 2000),
    'lying.npy': npyBytes('<f4', [1000, D], body),
    'short-shape.npy': npyBytes('<f4', [N / 2, D], body),
    'magic.npy': Buffer.concat([Buffer.from('GARBAGE!'), Buffer.from(body)]),
    'complex.npy': npyBytes('<c8', [N, D / 2], body),
    'int64.npy': npyBytes('<i8', [N, D / 2], body),
    '3d.npy': npyBytes('<f4', [N / 4, 4, D], body),
    'notes.txt': 'hello, these are my notes\n',
    'dims.fvecs': fvecsWithBadDims(),
    'model.vlc': vlcBytes(),
  };
  const nan = x.slice();
  nan[7 * D + 3] = NaN;
  files['nan.npy'] = npyBytes('<f4', [N, D], new Uint8Array(nan.buffer));
  const q16 = new Float32Array(3 * 16);
  files['q16.npy'] = npyBytes('<f4', [3, 16], new Uint8Array(q16.buffer));
  const vlc = files['model.vlc'] as Uint8Array;
  const corrupt = vlc.slice();
  corrupt[corrupt.length - 12] ^= 0xff; // inside the assignments payload (the last section)
  files['corrupt.vlc'] = corrupt;
  files['truncated.vlc'] = vlc.subarray(0, vlc.length - 30);
  const future = vlc.slice();
  new DataView(future.buffer).setUint32(8, FORMAT_VERSION + 1, true); // the version after this vlc's newest
  files['future.vlc'] = future;
  for (const [name, bytes] of Object.entries(files)) fs.writeFileSync(path.join(dir, name), bytes);
  fs.mkdirSync(path.join(dir, 'adir'));
  return Object.keys(files).concat('adir');
}

function fvecsWithBadDims(): Buffer {
  const rec = (dim: number) => {
    const b = Buffer.alloc(4 + 4 * dim);
    b.writeInt32LE(dim, 0);
    return b;
  };
  return Buffer.concat([rec(4), rec(4), rec(4), rec(3)]);
}

const vlcBytes = () => smallVlc(N, D, 4);

interface Case {
  name: string;
  args: string[];
  code: number;
  /** What the one stderr line must say. */
  says: RegExp;
  skip?: boolean;
}

const C = ['compress', '--device', 'cpu', '--iters', '2'];
const cases: Case[] = [
  { name: 'empty file', args: [...C, 'empty.npy', '-o', 'out.vlc'], code: 2, says: /empty\.npy: .*empty/ },
  { name: 'npy truncated inside its header', args: [...C, 'trunc-header.npy', '-o', 'out.vlc'], code: 2, says: /trunc-header\.npy: .*truncated/ },
  { name: 'npy truncated inside its data', args: [...C, 'trunc-data.npy', '-o', 'out.vlc'], code: 2, says: /trunc-data\.npy: .*truncated.*3200/ },
  { name: 'npy header promising more rows than present', args: [...C, 'lying.npy', '-o', 'out.vlc'], code: 2, says: /lying\.npy: .*1000/ },
  { name: 'npy header promising fewer rows than present', args: [...C, 'short-shape.npy', '-o', 'out.vlc'], code: 2, says: /short-shape\.npy: .*(header|shape)/ },
  { name: 'wrong magic bytes', args: [...C, 'magic.npy', '-o', 'out.vlc'], code: 2, says: /magic\.npy: .*magic/ },
  { name: 'a text file', args: [...C, 'notes.txt', '-o', 'out.vlc'], code: 2, says: /notes\.txt: .*(format|magic)/ },
  { name: 'NaN, naming the row', args: [...C, 'nan.npy', '-o', 'out.vlc'], code: 2, says: /nan\.npy: .*row 7.*--drop-invalid/ },
  { name: 'unsupported dtype (complex64)', args: [...C, 'complex.npy', '-o', 'out.vlc'], code: 2, says: /complex\.npy: .*dtype.*<c8/ },
  { name: 'unsupported dtype (int64)', args: [...C, 'int64.npy', '-o', 'out.vlc'], code: 2, says: /int64\.npy: .*dtype.*<i8/ },
  { name: '3-D array', args: [...C, '3d.npy', '-o', 'out.vlc'], code: 2, says: /3d\.npy: .*3-D/ },
  { name: 'fvecs records of different dimensions', args: [...C, 'dims.fvecs', '-o', 'out.vlc'], code: 2, says: /dims\.fvecs: .*dimension/ },
  { name: 'missing file', args: [...C, 'nope.npy', '-o', 'out.vlc'], code: 2, says: /nope\.npy: no such file/ },
  { name: 'a directory as input', args: [...C, 'adir', '-o', 'out.vlc'], code: 2, says: /adir.*directory/ },
  { name: '--anchors 0', args: [...C, 'good.npy', '-o', 'out.vlc', '--anchors', '0'], code: 2, says: /--anchors must be at least 1/ },
  { name: '--anchors more than n', args: [...C, 'good.npy', '-o', 'out.vlc', '--anchors', '101'], code: 2, says: /--anchors 101 is more than the 100 vectors/ },
  { name: '--anchors abc', args: [...C, 'good.npy', '-o', 'out.vlc', '--anchors', 'abc'], code: 2, says: /--anchors must be a whole number \(got 'abc'\)/ },
  { name: '--iters 0', args: ['compress', 'good.npy', '-o', 'out.vlc', '--iters', '0'], code: 2, says: /--iters must be between 1/ },
  { name: '--seed -1', args: [...C, 'good.npy', '-o', 'out.vlc', '--seed', '-1'], code: 2, says: /--seed must be between 0/ },
  { name: 'output directory missing', args: [...C, 'good.npy', '-o', 'nodir/out.vlc'], code: 2, says: /cannot write nodir\/out\.vlc: the directory does not exist/ },
  { name: 'output under a regular file', args: [...C, 'good.npy', '-o', 'good.npy/out.vlc'], code: 2, says: /cannot write good\.npy\/out\.vlc/ },
  { name: 'output is a directory', args: [...C, 'good.npy', '-o', 'adir'], code: 2, says: /-o adir is a directory/ },
  { name: 'unwritable output directory', args: [...C, 'good.npy', '-o', '/proc/out.vlc'], code: 2, says: /cannot write \/proc\/out\.vlc/ },
  { name: 'stdin without -o', args: [...C, '-'], code: 2, says: /reading stdin \(-\) needs -o FILE, or -o - for stdout/ },
  { name: 'unknown option', args: ['info', 'model.vlc', '--frobnicate'], code: 2, says: /unknown option '--frobnicate'/ },
  { name: 'unknown command', args: ['compres', 'good.npy'], code: 2, says: /unknown command 'compres'/ },
  { name: 'unknown --device', args: ['compress', 'good.npy', '-o', 'out.vlc', '--device', 'tpu'], code: 2, says: /--device must be auto, cuda or cpu \(got 'tpu'\)/ },
  { name: 'bad --anchor-dtype', args: [...C, 'good.npy', '-o', 'out.vlc', '--anchor-dtype', 'f8'], code: 2, says: /'f8' is invalid.*f16, f32/ },
  { name: 'unknown --format', args: [...C, 'good.npy', '-o', 'out.vlc', '--format', 'xlsx'], code: 2, says: /--format must be one of/ },
  { name: '--gpu together with --device cpu', args: [...C, 'good.npy', '-o', 'out.vlc', '--gpu', '0'], code: 2, says: /--gpu .*--device cpu/ },
  { name: '--gpu with no such GPU', args: ['compress', 'good.npy', '-o', 'out.vlc', '--gpu', '99'], code: 3, says: /cuda|GPU|driver/i },
  { name: '--device cuda without a GPU', args: ['compress', 'good.npy', '-o', 'out.vlc', '--device', 'cuda'], code: 3, says: /--device cuda: /, skip: hasCuda },
  { name: '--json with -o - (stdout taken)', args: [...C, 'good.npy', '-o', '-', '--json'], code: 2, says: /--json .* -o - .*--stats/ },
  { name: 'corrupted .vlc names the section', args: ['info', 'corrupt.vlc'], code: 2, says: /^vlc: corrupt\.vlc: section 'assignments' checksum mismatch: file is corrupted$/ },
  { name: 'truncated .vlc', args: ['info', 'truncated.vlc'], code: 2, says: /truncated\.vlc: file is truncated in section 'assignments'/ },
  { name: '.vlc from a newer format version', args: ['info', 'future.vlc'], code: 2, says: new RegExp(`future\\.vlc: file format version ${FORMAT_VERSION + 1} is newer .*upgrade vlc`) },
  { name: 'empty .vlc', args: ['decompress', 'empty.npy', '-o', 'out.npy'], code: 2, says: /empty\.npy: (file is )?empty/ },
  { name: '.npy given where a .vlc is expected', args: ['info', 'good.npy'], code: 2, says: /good\.npy: not a \.vlc file .*\.npy file/ },
  { name: 'decompress to an unknown extension', args: ['decompress', 'model.vlc', '-o', 'out.bin'], code: 2, says: /cannot tell the output format from out\.bin/ },
  { name: 'decompress --anchors --assignments', args: ['decompress', 'model.vlc', '-o', 'out.npy', '--anchors', '--assignments'], code: 2, says: /give only one/ },
  { name: 'eval with a missing .vlc', args: ['eval', 'good.npy', 'missing.vlc'], code: 2, says: /missing\.vlc: no such file/ },
  { name: 'eval with vectors of another size', args: ['eval', 'q16.npy', 'model.vlc'], code: 2, says: /q16\.npy holds 3 x 16 vectors but model\.vlc encodes 100 x 8/ },
  { name: 'search with queries of another dimension', args: ['search', 'model.vlc', '--queries', 'q16.npy'], code: 2, says: /queries have 16 dimensions but model\.vlc holds 8-dimensional/ },
  { name: 'search -k 0', args: ['search', 'model.vlc', '--queries', 'good.npy', '-k', '0'], code: 2, says: /-k must be at least 1/ },
  { name: 'search -k more than n', args: ['search', 'model.vlc', '--queries', 'good.npy', '-k', '101'], code: 2, says: /-k 101 is more than the 100 vectors/ },
];

beforeAll(() => {
  dir = tempDir('bad');
  inputs = makeInputs();
});
afterAll(() => fs.rmSync(dir, { recursive: true, force: true }));

describe('bad input: one line, the right exit code, nothing left behind', () => {
  it('covers at least 20 distinct cases', () => {
    expect(cases.length).toBeGreaterThanOrEqual(20);
  });

  it.each(cases.map((c) => [c.name, c] as const))('%s', (_name, c) => {
    if (c.skip) return; // a GPU is present: this case cannot be provoked here
    const r = vlc(c.args, { cwd: dir });
    const lines = r.stderr.split('\n').filter((l) => l !== '');
    expect(lines, r.stderr).toHaveLength(1);
    expect(lines[0]).toMatch(/^vlc: /);
    expect(lines[0]).toMatch(c.says);
    expect(r.stderr).not.toMatch(/\n\s+at |Error:|node:internal/);
    expect(r.code).toBe(c.code);
    expect(r.stdout).toBe('');
    expect(leftovers(dir, inputs)).toEqual([]);
  });
});

describe('--drop-invalid', () => {
  it('skips the NaN row, says how many, and records it in the file', () => {
    const out = path.join(dir, 'dropped.vlc');
    const r = vlc([...C, 'nan.npy', '-o', out, '--drop-invalid', '--anchors', '4', '--json'], { cwd: dir });
    expect(r.code, r.stderr).toBe(0);
    expect(r.stderr).toMatch(/skipped 1 vector containing NaN or Inf/);
    const stats = JSON.parse(r.stdout);
    expect(stats.n).toBe(N - 1);
    expect(stats.dropped).toBe(1);
    const info = JSON.parse(vlc(['info', out, '--json']).stdout);
    expect(info.dropped).toBe(1);
    expect(info.n).toBe(N - 1);
    fs.rmSync(out);
  });
});
