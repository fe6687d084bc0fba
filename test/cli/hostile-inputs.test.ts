// Hostile inputs end to end (issue 16): endless streams and devices, FIFOs and pipes that never
// deliver, signals while blocked on input, and .vlc files whose manifest lies under valid
// checksums. Every case: the right exit code, one stderr line, no stack trace, quickly, with
// little memory, nothing left behind.
import { spawn, spawnSync } from 'node:child_process';
import * as fs from 'node:fs';
import * as path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { FILE_HEADER_BYTES } from '../../dist/io/vlc/format.js';
import { crc32c } from '../../dist/io/vlc/crc32c.js';
import { npyHeader } from '../../dist/io/writers/npy.js';
import { BIN, leftovers, smallVlc, tempDir } from './helpers.js';

let dir: string;
const RSS_PRELOAD = path.join(path.dirname(new URL(import.meta.url).pathname), 'rss-report.mjs');

beforeAll(() => {
  dir = tempDir('hostile');
});
afterAll(() => fs.rmSync(dir, { recursive: true, force: true }));

interface Result {
  code: number | null;
  stderr: string;
  stdout: string;
  ms: number;
  rssMb: number;
}

/** `vlc <args>` through bash (for redirections), with a time limit; reports peak RSS. */
function run(args: string, o: { limitS?: number } = {}): Result {
  const rssFile = path.join(dir, `.rss-${process.pid}-${Math.random().toString(36).slice(2)}`);
  const t0 = performance.now();
  const r = spawnSync('bash', ['-c', `exec timeout ${o.limitS ?? 20} "${process.execPath}" --import "${RSS_PRELOAD}" "${BIN}" ${args}`], {
    cwd: dir,
    env: { ...process.env, VLC_TEST_RSS_FILE: rssFile },
    maxBuffer: 64 << 20,
  });
  const ms = performance.now() - t0;
  let rssMb = NaN;
  try {
    rssMb = Number(fs.readFileSync(rssFile, 'utf8')) / 1024;
    fs.rmSync(rssFile);
  } catch {
    /* killed before it could report */
  }
  return { code: r.status, stderr: r.stderr.toString(), stdout: r.stdout.toString(), ms, rssMb };
}

/** The common expectations: exit `code`, exactly one `vlc: ` line matching `says`, no stack. */
function expectOneLine(r: Result, code: number, says: RegExp): void {
  const lines = r.stderr.split('\n').filter((l) => l !== '');
  expect(lines, r.stderr).toHaveLength(1);
  expect(lines[0]).toMatch(/^vlc: /);
  expect(lines[0]).toMatch(says);
  expect(r.stderr).not.toMatch(/\n\s+at |TypeError|RangeError|node:internal/);
  expect(r.code, r.stderr).toBe(code);
}

/** A .vlc whose manifest is edited by `edit`, with the header checksum recomputed (a forgery). */
function forged(edit: (mf: Record<string, unknown>) => void, base = smallVlc()): Buffer {
  const dv = new DataView(base.buffer, base.byteOffset, base.byteLength);
  const len = dv.getUint32(12, true);
  const mf = JSON.parse(Buffer.from(base.subarray(FILE_HEADER_BYTES, FILE_HEADER_BYTES + len)).toString('utf8'));
  edit(mf);
  const json = Buffer.from(JSON.stringify(mf));
  const pad = (x: number) => (x + 7) & ~7;
  const head = Buffer.alloc(pad(FILE_HEADER_BYTES + json.length));
  Buffer.from(base.subarray(0, FILE_HEADER_BYTES)).copy(head);
  head.writeUInt32LE(json.length, 12);
  json.copy(head, FILE_HEADER_BYTES);
  head.writeUInt32LE(crc32c(json, crc32c(head.subarray(8, 20))), 20);
  return Buffer.concat([head, base.subarray(pad(FILE_HEADER_BYTES + len))]);
}

describe('endless streams and devices are refused at once', () => {
  const cases: Array<[string, string, RegExp]> = [
    ['info /dev/zero', 'info /dev/zero', /\/dev\/zero: not a \.vlc file/],
    ['info - from /dev/zero', 'info - < /dev/zero', /<stdin>: not a \.vlc file/],
    ['decompress /dev/zero', 'decompress /dev/zero -o out.npy', /\/dev\/zero: not a \.vlc file/],
    ['compress /dev/zero', 'compress /dev/zero -o out.vlc', /\/dev\/zero: unrecognized format/],
    ['compress - from /dev/zero', 'compress - -o out.vlc < /dev/zero', /stdin: unrecognized format/],
    ['compress - --format npy from /dev/zero', 'compress - --format npy -o out.vlc < /dev/zero', /stdin: not an \.npy file/],
    ['compress - --format safetensors from /dev/zero', 'compress - --format safetensors -o out.vlc < /dev/zero', /stdin: safetensors header claims 0 bytes/],
    ['compress - --format fvecs from /dev/zero', 'compress - --format fvecs -o out.vlc < /dev/zero', /stdin: first \.fvecs record has dimension 0/],
    ['compress - --format jsonl from /dev/zero', 'compress - --format jsonl -o out.vlc < /dev/zero', /stdin: does not start with a JSON object/],
    ['compress - --format parquet from /dev/zero', 'compress - --format parquet -o out.vlc < /dev/zero', /stdin: not a Parquet file/],
    ['compress - --format arrow from /dev/zero', 'compress - --format arrow -o out.vlc < /dev/zero', /stdin: not an Arrow IPC file or stream/],
    ['eval with /dev/zero as the original', 'eval /dev/zero model.vlc', /\/dev\/zero: unrecognized format/],
    ['search with /dev/zero as the queries', 'search model.vlc --queries /dev/zero', /\/dev\/zero: unrecognized format/],
    ['an .npy header then endless zeros', 'compress - -o out.vlc < <(cat head.npy /dev/zero)', /stdin: the input goes on past the 1152 bytes its npy header describes/],
    ['a .vlc then endless zeros', 'info - < <(cat model.vlc /dev/zero)', /<stdin>: the input goes on past the \d+ bytes its manifest accounts for/],
    ['an .npy header promising 2^60 bytes on a pipe', 'compress - -o out.vlc < <(cat huge-head.npy /dev/zero)', /stdin: its header describes \d+ bytes, more than vlc can hold in memory/],
  ];
  beforeAll(() => {
    fs.writeFileSync(path.join(dir, 'model.vlc'), smallVlc());
    fs.writeFileSync(path.join(dir, 'head.npy'), npyHeader('<f4', [16, 16])); // 128-byte header: 1152 bytes in all
    fs.writeFileSync(path.join(dir, 'huge-head.npy'), npyHeader('<f4', [2 ** 29, 2 ** 29]));
  });
  it.each(cases)('%s', (_name, args, says) => {
    const before = fs.readdirSync(dir).sort();
    const r = run(args);
    expectOneLine(r, 2, says);
    expect(r.ms).toBeLessThan(5000);
    expect(r.rssMb).toBeLessThan(400);
    expect(fs.readdirSync(dir).sort()).toEqual(before);
  });
});

describe('.vlc manifests that lie under valid checksums fail fast with little memory', () => {
  const lies: Array<[string, (mf: Record<string, unknown>) => void, RegExp]> = [
    ['n = 2^52', (mf) => (mf.n = 2 ** 52), /section 'assignments' has 100 bytes, but n = 4503599627370496/],
    ['d = 2^40', (mf) => (mf.d = 2 ** 40), /section 'anchors' has \d+ bytes, but m×d = 4×1099511627776/],
    ['m = n, u8 width kept', (mf) => (mf.m = 100), /assignmentWidth' is u8 but m = 100|needs u8|anchors' has/],
    ['m = 2^20 with u32 ids', (mf) => ((mf.m = 2 ** 20), (mf.n = 2 ** 21), (mf.assignmentWidth = 'u32')), /section 'anchors' has \d+ bytes, but m×d/],
    ['width u32 for 4 anchors', (mf) => (mf.assignmentWidth = 'u32'), /assignmentWidth' is u32 but m = 4 needs u8/],
    ['residual int8 without a residual section', (mf) => ((mf.residual = 'int8'), (mf.residualEnergy = 0)), /sections|residuals/],
    ['m > n', (mf) => (mf.m = 1000), /m = 1000 anchors for only n = 100 vectors/],
    ['n = 0', (mf) => (mf.n = 0), /field 'n' must be an integer >= 1/],
    ['n fractional', (mf) => (mf.n = 100.5), /field 'n' must be an integer >= 1/],
    ['d as a string', (mf) => (mf.d = '8'), /field 'd' must be an integer >= 1/],
  ];
  // A pipe cannot be sized up front: the manifest's own size must refuse it before it is read.
  const tooBig = /its manifest describes a \d+-byte file, more than vlc can hold in memory/;
  for (const via of ['file', 'pipe'] as const) {
    it.each(lies)(`%s (${via})`, (name, edit, says) => {
      const file = path.join(dir, `lie-${name.replace(/\W+/g, '-')}.vlc`);
      fs.writeFileSync(file, forged(edit));
      const r = run(via === 'file' ? `info "${file}"` : `info - < <(cat "${file}")`);
      expectOneLine(r, 2, via === 'pipe' && /2\^(52|40)|2\^20/.test(name) ? new RegExp(`${says.source}|${tooBig.source}`) : says);
      expect(r.ms).toBeLessThan(3000);
      expect(r.rssMb).toBeLessThan(300);
      fs.rmSync(file);
    });
  }
  it('a manifest length of 4 GB is refused from the first 24 bytes', () => {
    const b = Buffer.from(smallVlc());
    b.writeUInt32LE(0xfffffff0, 12);
    fs.writeFileSync(path.join(dir, 'manifest-4g.vlc'), b);
    const r = run('info - < manifest-4g.vlc');
    expectOneLine(r, 2, /manifest length 4294967280 is implausible/);
    fs.rmSync(path.join(dir, 'manifest-4g.vlc'));
  });
});

/** Spawn vlc, let it block on its input, send `signal`, and time the exit. */
async function interruptWhileBlocked(args: string[], signal: 'SIGINT' | 'SIGTERM', stdin: 'pipe' | 'ignore' = 'pipe'): Promise<{ code: number | null; ms: number; stderr: string }> {
  // -v: the reader logs 'waiting for input' once it is blocked on the stream.
  const child = spawn(process.execPath, [BIN, ...args, '-v'], { cwd: dir, stdio: [stdin, 'pipe', 'pipe'] });
  let stderr = '';
  await new Promise<void>((resolve, reject) => {
    const t = setTimeout(() => reject(new Error(`never blocked on input; stderr: ${stderr}`)), 30_000);
    child.stderr.on('data', (c) => {
      stderr += String(c);
      if (stderr.includes('waiting for input')) {
        clearTimeout(t);
        resolve();
      }
    });
  });
  await new Promise((r) => setTimeout(r, 300)); // well inside the wait
  expect(child.exitCode, `exited before the signal: ${stderr}`).toBeNull();
  const sent = performance.now();
  child.kill(signal);
  const code = await new Promise<number | null>((r) => child.on('exit', (c) => r(c)));
  return { code, ms: performance.now() - sent, stderr };
}

describe('SIGINT and SIGTERM end the process within a second while it waits on input', () => {
  beforeAll(() => {
    fs.writeFileSync(path.join(dir, 'model.vlc'), smallVlc());
    for (const f of ['fifo-a', 'fifo-b']) if (!fs.existsSync(path.join(dir, f))) spawnSync('mkfifo', [path.join(dir, f)]);
  });
  const waits: Array<[string, string[]]> = [
    ['compress - on an open, empty pipe', ['compress', '-', '-o', 'never.vlc']],
    ['info - on an open, empty pipe', ['info', '-']],
    ['info on a FIFO with no writer', ['info', 'fifo-a']],
    ['compress on a FIFO with no writer', ['compress', 'fifo-b', '-o', 'never.vlc']],
    ['decompress on a FIFO with no writer', ['decompress', 'fifo-a', '-o', 'never.npy']],
    ['search with queries from an empty pipe', ['search', 'model.vlc', '--queries', '-']],
  ];
  for (const [signal, code] of [['SIGINT', 130], ['SIGTERM', 143]] as const) {
    it.each(waits)(`%s: ${signal} exits ${code}`, async (_name, args) => {
      const before = fs.readdirSync(dir).sort();
      const r = await interruptWhileBlocked(args, signal);
      expect(r.code, r.stderr).toBe(code);
      expect(r.ms).toBeLessThan(1000);
      expect(r.stderr).not.toMatch(/\n\s+at |Error:/);
      expect(r.stderr.split('\n').filter((l) => l && !l.includes('[debug]'))).toEqual([]);
      expect(fs.readdirSync(dir).sort()).toEqual(before);
    });
  }
});

describe('file names in errors', () => {
  it('a name with a newline stays on one line, JSON-quoted', () => {
    const name = 'bad\nname.npy';
    fs.writeFileSync(path.join(dir, name), 'not numpy at all');
    const r = run(`compress $'bad\\nname.npy' -o out.vlc`);
    expectOneLine(r, 2, /^vlc: "bad\\nname\.npy": /);
    expect(leftovers(dir, [name, 'model.vlc', 'head.npy', 'huge-head.npy', 'fifo-a', 'fifo-b'])).toEqual([]);
    fs.rmSync(path.join(dir, name));
  });
  it('--anchors 2^60 says it is too large', () => {
    const r = run('compress model.vlc -o out.vlc --anchors 1152921504606846976');
    expectOneLine(r, 2, /--anchors 1152921504606846976 is too large/);
  });
});

describe('values whose squared distances overflow float32', () => {
  /** n x d values around `scale`, row 3 holding `odd` in dimension 2. */
  const write = (name: string, scale: number, odd?: number) => {
    const [n, d] = [200, 16];
    const x = new Float32Array(n * d).map((_, i) => (Math.sin(i * 0.37) + (i % 5)) * scale);
    if (odd !== undefined) x[3 * d + 2] = odd;
    fs.writeFileSync(path.join(dir, name), Buffer.concat([Buffer.from(npyHeader('<f4', [n, d])), Buffer.from(x.buffer)]));
  };
  it('±1e20 is refused with the limit for this d, not an internal fault', () => {
    write('e20.npy', 1, -1e20);
    const r = run('compress e20.npy -o e20.vlc --device cpu --anchors 4 --iters 3');
    expectOneLine(r, 2, /e20\.npy: row 3 has a value too large to compute with \(-1\.000e\+20 in dimension 2\).*beyond \|x\| = 1\.44e\+17 at d = 16/);
    expect(fs.existsSync(path.join(dir, 'e20.vlc'))).toBe(false);
  });
  it('with --drop-invalid the row is skipped and counted', () => {
    const r = run('compress e20.npy -o e20.vlc --device cpu --anchors 4 --iters 3 --drop-invalid --json');
    expect(r.code, r.stderr).toBe(0);
    expect(JSON.parse(r.stdout)).toMatchObject({ n: 199, dropped: 1 });
    fs.rmSync(path.join(dir, 'e20.vlc'));
  });
  it('large values within the limit compress, anchors kept in f32 when f16 cannot hold them', () => {
    write('e13.npy', 1e13);
    const r = run('compress e13.npy -o e13.vlc --device cpu --anchors 4 --iters 5 --residual int8 --json');
    expect(r.code, r.stderr).toBe(0);
    expect(r.stderr).toMatch(/beyond float16's range \(65504\): storing them as f32/);
    const stats = JSON.parse(r.stdout);
    expect(stats.anchor_dtype).toBe('f32');
    expect(Number.isFinite(stats.mse)).toBe(true);
    const e = run('eval e13.npy e13.vlc --json');
    expect(e.code, e.stderr).toBe(0);
    expect(JSON.parse(e.stdout).relative_error).toBeLessThan(0.01);
    fs.rmSync(path.join(dir, 'e13.vlc'));
  });
  it('--anchor-dtype f16 asked for explicitly is refused when the anchors do not fit', () => {
    const r = run('compress e13.npy -o e13.vlc --device cpu --anchors 4 --iters 3 --anchor-dtype f16');
    expectOneLine(r, 2, /beyond float16's range \(65504\); use --anchor-dtype f32/);
  });
});
