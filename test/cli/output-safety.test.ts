// Output safety (issue 12 §1-2, issue 16 classes 2 and 7), end to end: never over an input,
// never over an existing file without --force, devices and FIFOs streamed to and never replaced,
// nothing partial left on failure (a full disk, an unwritable place, two writers of one name),
// the input's permission bits, gzip-like default names, and odd paths.
import { spawn, spawnSync } from 'node:child_process';
import * as fs from 'node:fs';
import * as path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { encodeVlcBytes } from '../../dist/io/vlc/format.js';
import { planOutput, writeOutput } from '../../dist/io/output.js';
import { BIN, DEMO, tempDir, vlc } from './helpers.js';

let dir: string;
// --residual none: no codec is measured, so a refusal is the only line on stderr.
const C = ['--device', 'cpu', '--iters', '3', '--anchors', '8', '--residual', 'none'];
const isRoot = process.getuid?.() === 0;

beforeAll(() => {
  dir = tempDir('outsafe');
  fs.copyFileSync(DEMO, path.join(dir, 'x.npy'));
  expect(vlc(['compress', 'x.npy', '-o', 'x.vlc', ...C], { cwd: dir }).code).toBe(0);
});
afterAll(() => fs.rmSync(dir, { recursive: true, force: true }));

const bytesOf = (f: string) => fs.readFileSync(path.join(dir, f));
/** Every file in the directory with its contents' length, to show what a case changed. */
const snapshot = (d = dir) =>
  fs.readdirSync(d).sort().map((f) => {
    const st = fs.lstatSync(path.join(d, f));
    return `${f}:${st.isFile() ? st.size : st.isSymbolicLink() ? 'link' : st.isFIFO() ? 'fifo' : 'other'}`;
  });

/** One stderr line starting `vlc: ` and matching `says`, the exit code, no stack, nothing on stdout. */
function expectRefusal(r: ReturnType<typeof vlc>, says: RegExp, code = 2): void {
  const lines = r.stderr.split('\n').filter((l) => l !== '');
  expect(lines, r.stderr).toHaveLength(1);
  expect(lines[0]).toMatch(/^vlc: /);
  expect(lines[0]).toMatch(says);
  expect(r.stderr).not.toMatch(/\n\s+at |TypeError|node:internal/);
  expect(r.code).toBe(code);
}

describe('never over an input', () => {
  const cases: Array<[string, string[] | (() => string[]), RegExp, (() => void)?]> = [
    ['compress x.npy -o x.npy', ['compress', 'x.npy', '-o', 'x.npy', ...C], /-o x\.npy is the same file as the input; refusing/],
    ['-o a symlink to the input', ['compress', 'x.npy', '-o', 'link.npy', ...C], /-o link\.npy is the same file as the input x\.npy/, () => fs.symlinkSync('x.npy', path.join(dir, 'link.npy'))],
    ['-o a hard link to the input', ['compress', 'x.npy', '-o', 'hard.npy', ...C], /-o hard\.npy is the same file as the input x\.npy/, () => fs.linkSync(path.join(dir, 'x.npy'), path.join(dir, 'hard.npy'))],
    ['-o the input by another path', () => ['compress', 'x.npy', '-o', `../${path.basename(dir)}/x.npy`, ...C], /is the same file as the input/],
    ['--force does not make it allowed', ['compress', 'x.npy', '-o', 'x.npy', '--force', ...C], /same file as the input/],
    ['--stats naming the input', ['compress', 'x.npy', '-o', 'new.vlc', '--stats', 'x.npy', ...C], /--stats x\.npy is the same file as the input/],
    ['decompress x.vlc -o x.vlc', ['decompress', 'x.vlc', '-o', 'x.vlc', '--format', 'npy'], /-o x\.vlc is the same file as the input/],
    ['decompress --assignments over the input', ['decompress', 'x.vlc', '-o', 'x.vlc', '--assignments', '--format', 'txt'], /same file as the input/],
    ['-o and --stats naming one new file', ['compress', 'x.npy', '-o', 'both.vlc', '--stats', 'both.vlc', ...C], /--stats and -o both name both\.vlc/],
  ];
  it.each(cases)('%s', (_name, args, says, setup) => {
    setup?.();
    const before = snapshot();
    const input = bytesOf('x.npy');
    expectRefusal(vlc(typeof args === 'function' ? args() : args, { cwd: dir }), says);
    expect(bytesOf('x.npy').equals(input)).toBe(true);
    expect(snapshot()).toEqual(before);
    for (const f of ['link.npy', 'hard.npy']) fs.rmSync(path.join(dir, f), { force: true });
  });
  it('stdin that is the output file (compress - -o x.npy < x.npy)', () => {
    const input = bytesOf('x.npy');
    const r = spawnSync('bash', ['-c', `"${process.execPath}" "${BIN}" compress - -o x.npy ${C.join(' ')} < x.npy`], { cwd: dir });
    expectRefusal({ code: r.status, stderr: r.stderr.toString(), stdout: '', stdoutBytes: r.stdout }, /-o x\.npy is the same file as the input \(stdin\)/);
    expect(bytesOf('x.npy').equals(input)).toBe(true);
  });
});

describe('an existing file only with --force', () => {
  it('compress refuses to replace a file, and replaces it whole with --force', () => {
    fs.writeFileSync(path.join(dir, 'old.vlc'), 'previous');
    expectRefusal(vlc(['compress', 'x.npy', '-o', 'old.vlc', ...C], { cwd: dir }), /-o old\.vlc already exists; use -f \(--force\) to replace it/);
    expect(bytesOf('old.vlc').toString()).toBe('previous');
    const r = vlc(['compress', 'x.npy', '-o', 'old.vlc', '-f', ...C], { cwd: dir });
    expect(r.code, r.stderr).toBe(0);
    expect(vlc(['info', 'old.vlc'], { cwd: dir }).code).toBe(0);
  });
  it('--stats and decompress follow the same rule', () => {
    fs.writeFileSync(path.join(dir, 'stats.json'), '{}');
    expectRefusal(vlc(['compress', 'x.npy', '-o', 'new1.vlc', '--stats', 'stats.json', ...C], { cwd: dir }), /--stats stats\.json already exists/);
    expect(fs.existsSync(path.join(dir, 'new1.vlc'))).toBe(false); // refused before any work
    fs.writeFileSync(path.join(dir, 'dec.npy'), 'previous');
    expectRefusal(vlc(['decompress', 'x.vlc', '-o', 'dec.npy'], { cwd: dir }), /-o dec\.npy already exists/);
    expect(vlc(['decompress', 'x.vlc', '-o', 'dec.npy', '--force'], { cwd: dir }).code).toBe(0);
    expect(bytesOf('dec.npy').length).toBe(128 + 2000 * 64 * 4);
  });
  it('bench --out refuses an existing file before running anything', () => {
    fs.writeFileSync(path.join(dir, 'bench.json'), '{}');
    const t0 = performance.now();
    expectRefusal(vlc(['bench', '--out', 'bench.json', '--device', 'cpu'], { cwd: dir }), /--out bench\.json already exists/);
    expect(performance.now() - t0).toBeLessThan(10_000);
  });
  it('--force on a symlink replaces the link itself, as gzip -f does; the file it points to is untouched', () => {
    fs.writeFileSync(path.join(dir, 'real.vlc'), 'previous');
    fs.symlinkSync('real.vlc', path.join(dir, 'alias.vlc'));
    expect(vlc(['compress', 'x.npy', '-o', 'alias.vlc', '--force', ...C], { cwd: dir }).code).toBe(0);
    expect(fs.lstatSync(path.join(dir, 'alias.vlc')).isFile()).toBe(true);
    expect(vlc(['info', 'alias.vlc'], { cwd: dir }).code).toBe(0);
    expect(bytesOf('real.vlc').toString()).toBe('previous');
  });
  it('a link to nothing needs --force', () => {
    fs.symlinkSync('nowhere.vlc', path.join(dir, 'dangling.vlc'));
    expectRefusal(vlc(['compress', 'x.npy', '-o', 'dangling.vlc', ...C], { cwd: dir }), /is a link to a file that does not exist; use -f/);
  });
});

describe('devices and FIFOs are streamed to, never replaced', () => {
  it(`-o /dev/null writes to the device and leaves it a device${isRoot ? ' (running as root)' : ''}`, () => {
    const before = fs.statSync('/dev/null');
    const r = vlc(['compress', 'x.npy', '-o', '/dev/null', ...C], { cwd: dir });
    expect(r.code, r.stderr).toBe(0);
    const after = fs.statSync('/dev/null');
    expect(after.isCharacterDevice()).toBe(true);
    expect([after.ino, after.rdev]).toEqual([before.ino, before.rdev]);
    expect(vlc(['decompress', 'x.vlc', '-o', '/dev/null', '--format', 'npy'], { cwd: dir }).code).toBe(0);
    expect(fs.statSync('/dev/null').isCharacterDevice()).toBe(true);
  });
  it('-o /dev/full: a clear ENOSPC line (the device stays)', () => {
    expectRefusal(vlc(['compress', 'x.npy', '-o', '/dev/full', ...C], { cwd: dir }), /cannot write \/dev\/full: no space left on the device \(ENOSPC\)/);
    expect(fs.statSync('/dev/full').isCharacterDevice()).toBe(true);
  });
  it('-o a FIFO waits for its reader, streams, and the FIFO stays a FIFO', async () => {
    const fifo = path.join(dir, 'out.fifo');
    spawnSync('mkfifo', [fifo]);
    const writer = spawn(process.execPath, [BIN, 'compress', 'x.npy', '-o', fifo, ...C], { cwd: dir, stdio: ['ignore', 'ignore', 'pipe'] });
    let stderr = '';
    writer.stderr.on('data', (c) => (stderr += String(c)));
    await new Promise((r) => setTimeout(r, 500));
    const received = spawnSync('cat', [fifo]).stdout;
    const code = await new Promise<number | null>((r) => (writer.exitCode !== null ? r(writer.exitCode) : writer.on('exit', (c) => r(c))));
    expect(code, stderr).toBe(0);
    expect(fs.lstatSync(fifo).isFIFO()).toBe(true);
    fs.writeFileSync(path.join(dir, 'from-fifo.vlc'), received);
    expect(vlc(['info', 'from-fifo.vlc'], { cwd: dir }).code).toBe(0);
    fs.rmSync(path.join(dir, 'from-fifo.vlc'));
    fs.rmSync(fifo);
  });
  it('Ctrl-C while waiting for a FIFO reader exits 130 at once', async () => {
    const fifo = path.join(dir, 'noreader.fifo');
    spawnSync('mkfifo', [fifo]);
    const w = spawn(process.execPath, [BIN, 'compress', 'x.npy', '-o', fifo, ...C], { cwd: dir, stdio: ['ignore', 'ignore', 'pipe'] });
    await new Promise((r) => setTimeout(r, 4000)); // training done: now waiting for a reader
    const t0 = performance.now();
    w.kill('SIGINT');
    const code = await new Promise<number | null>((r) => w.on('exit', (c) => r(c)));
    expect(code).toBe(130);
    expect(performance.now() - t0).toBeLessThan(1000);
    expect(fs.lstatSync(fifo).isFIFO()).toBe(true);
    fs.rmSync(fifo);
  });
});

/** Run a bash script inside a private mount namespace (unshare -rm), where a tmpfs can be mounted. */
function inMountNamespace(script: string): ReturnType<typeof spawnSync> | undefined {
  const probe = spawnSync('unshare', ['-rm', 'sh', '-c', 'mkdir -p /tmp && mount -t tmpfs -o size=64k tmpfs /mnt && echo ok'], { encoding: 'utf8' });
  if (probe.stdout?.trim() !== 'ok') return undefined;
  return spawnSync('unshare', ['-rm', 'bash', '-c', script], { encoding: 'utf8', ...(dir ? { cwd: dir } : {}) });
}
const canMount = inMountNamespace('true') !== undefined;

describe('failures leave nothing behind and existing files untouched', () => {
  it.skipIf(!canMount)('a full disk (a 256 KiB tmpfs): exit 2, ENOSPC named, no temp file, the old output intact', () => {
    const mnt = path.join(dir, 'small');
    fs.mkdirSync(mnt, { recursive: true });
    // The demo's .npy is 512 KB: decompress it into a 256 KiB file system, over an existing file with --force.
    const r = inMountNamespace(
      `mount -t tmpfs -o size=256k tmpfs "${mnt}" && echo previous > "${mnt}/out.npy" && ` +
        `"${process.execPath}" "${BIN}" decompress x.vlc -o "${mnt}/out.npy" --force --dtype f32; echo "rc=$?"; ls -a "${mnt}"; cat "${mnt}/out.npy"`,
    )!;
    const out = String(r.stdout);
    expect(out).toMatch(/rc=2/);
    expect(String(r.stderr)).toMatch(/^vlc: cannot write .*out\.npy: (no space left on the device \(ENOSPC\)|it needs \d+ bytes and its file system has \d+ free)\n$/);
    expect(out.split('\n').filter((l) => l.endsWith('.tmp'))).toEqual([]);
    expect(out).toMatch(/previous/);
  });
  it.skipIf(!canMount)('a full disk found while writing (the size is not known up front): ENOSPC, nothing left', () => {
    const mnt = path.join(dir, 'small2');
    fs.mkdirSync(mnt, { recursive: true });
    const r = inMountNamespace(
      // --residual int8 after C (the last one counts): a file larger than the 8k disk
      `mount -t tmpfs -o size=8k tmpfs "${mnt}" && "${process.execPath}" "${BIN}" compress x.npy -o "${mnt}/x.vlc" ${C.join(' ')} --residual int8; echo "rc=$?"; ls -a "${mnt}"`,
    )!;
    expect(String(r.stdout)).toMatch(/rc=2\n\.\n\.\.\n$/);
    expect(String(r.stderr)).toMatch(/^vlc: cannot write .*x\.vlc: no space left on the device \(ENOSPC\)\n$/);
  });
  it('a write fault injected into the temp-file path (stands in for a full disk where no tmpfs can be mounted)', async () => {
    const target = path.join(dir, 'faulty.vlc');
    fs.writeFileSync(target, 'previous');
    let calls = 0;
    const enospc = () => {
      if (++calls > 2) throw Object.assign(new Error('ENOSPC: no space left on device, write'), { code: 'ENOSPC' });
      return 4;
    };
    await expect(
      writeOutput(planOutput(target, { force: true }), async (sink) => {
        for (let i = 0; i < 10; i++) await sink.write(new Uint8Array(4));
      }, { writeSync: enospc }),
    ).rejects.toThrow(/^cannot write .*faulty\.vlc: no space left on the device \(ENOSPC\)$/);
    expect(fs.readFileSync(target, 'utf8')).toBe('previous');
    expect(fs.readdirSync(dir).filter((f) => f.endsWith('.tmp'))).toEqual([]);
  });
  it('a file-size limit (ulimit -f): EFBIG named, nothing left', () => {
    const r = spawnSync('bash', ['-c', `ulimit -f 2; "${process.execPath}" "${BIN}" decompress x.vlc -o capped.npy`], { cwd: dir, encoding: 'utf8' });
    expect(r.status).toBe(2);
    expect(r.stderr).toMatch(/^vlc: cannot write capped\.npy: file too large .*\(EFBIG\)\n$/);
    expect(fs.readdirSync(dir).filter((f) => f.includes('capped'))).toEqual([]);
  });
  it.skipIf(isRoot)('an unwritable directory (mode 0555)', () => {
    const ro = path.join(dir, 'ro');
    fs.mkdirSync(ro, { mode: 0o555 });
    expectRefusal(vlc(['compress', 'x.npy', '-o', 'ro/x.vlc', ...C], { cwd: dir }), /cannot write ro\/x\.vlc: permission denied \(EACCES\)/);
  });
  it.skipIf(!canMount)('an unwritable directory as root: a read-only mount (modes do not stop root)', () => {
    const ro = path.join(dir, 'romnt');
    fs.mkdirSync(ro, { recursive: true });
    const r = inMountNamespace(`mount -t tmpfs -o ro,size=64k tmpfs "${ro}" && "${process.execPath}" "${BIN}" compress x.npy -o "${ro}/x.vlc" ${C.join(' ')}; echo "rc=$?"`)!;
    expect(String(r.stdout)).toMatch(/rc=2/);
    expect(String(r.stderr)).toMatch(/^vlc: cannot write .*x\.vlc: read-only file system \(EROFS\); choose another -o path\n$/);
  });
  it('a pseudo file system that refuses files (/proc)', () => {
    expectRefusal(vlc(['compress', 'x.npy', '-o', '/proc/x.vlc', ...C], { cwd: dir }), /cannot write \/proc\/x\.vlc/);
  });
  it('an output far larger than the disk is refused before writing (decompress of a valid 2 MB .vlc with n × d = 2^40)', () => {
    const [n, d, m] = [2 ** 20, 2 ** 20, 1];
    fs.writeFileSync(
      path.join(dir, 'wide.vlc'),
      encodeVlcBytes({
        manifest: {
          n, d, m, metric: 'l2', anchorDtype: 'f16', residual: 'none', input: { dtype: 'f32', dropped: 0 },
          training: { energy: 1, iterations: 1, converged: true, init: 'kmeans++' }, config: {}, seed: 1, tool: { name: 'vlc', version: 'test' }, device: 'cpu',
        },
        anchors: new Float32Array(m * d),
        assignments: new Uint8Array(n),
      }),
    );
    const t0 = performance.now();
    expectRefusal(vlc(['decompress', 'wide.vlc'], { cwd: dir }), /cannot write wide\.npy: it needs 4398046511104 bytes and its file system has \d+ free/);
    expect(performance.now() - t0).toBeLessThan(10_000);
    expect(fs.existsSync(path.join(dir, 'wide.npy'))).toBe(false);
  });
});

describe('two processes writing one output', () => {
  const race = async (extra: string[]) => {
    fs.rmSync(path.join(dir, 'race.vlc'), { force: true });
    const start = () => spawn(process.execPath, [BIN, 'compress', 'x.npy', '-o', 'race.vlc', ...C, ...extra], { cwd: dir, stdio: ['ignore', 'ignore', 'pipe'] });
    const runs = [start(), start()].map(
      (p) =>
        new Promise<{ code: number | null; stderr: string }>((r) => {
          let stderr = '';
          p.stderr!.on('data', (c) => (stderr += String(c)));
          p.on('exit', (code) => r({ code, stderr }));
        }),
    );
    return Promise.all(runs);
  };
  it('without --force: one writes it, the other exits 2 saying so; the file is whole', async () => {
    const results = await race([]);
    expect(results.map((r) => r.code).sort()).toEqual([0, 2]);
    expect(results.find((r) => r.code === 2)!.stderr).toMatch(/race\.vlc (already exists|appeared while vlc was writing)/);
    expect(vlc(['info', 'race.vlc'], { cwd: dir }).code).toBe(0);
    expect(fs.readdirSync(dir).filter((f) => f.endsWith('.tmp'))).toEqual([]);
  });
  it('with --force: both succeed, the file is one of theirs, whole', async () => {
    const results = await race(['--force']);
    expect(results.map((r) => r.code)).toEqual([0, 0]);
    expect(vlc(['info', 'race.vlc'], { cwd: dir }).code).toBe(0);
    expect(fs.readdirSync(dir).filter((f) => f.endsWith('.tmp'))).toEqual([]);
  });
});

describe('permissions follow the input, as with gzip', () => {
  it.each([0o600, 0o640, 0o644, 0o444])('input mode %s', (mode) => {
    const src = path.join(dir, `mode-${mode.toString(8)}.npy`);
    fs.copyFileSync(DEMO, src);
    fs.chmodSync(src, mode);
    expect(vlc(['compress', src, ...C], { cwd: dir }).code).toBe(0);
    const out = src.replace(/\.npy$/, '.vlc');
    expect(fs.statSync(out).mode & 0o777).toBe(mode);
    expect(vlc(['decompress', out, '-o', src.replace(/\.npy$/, '.back.npy')], { cwd: dir }).code).toBe(0);
    expect(fs.statSync(src.replace(/\.npy$/, '.back.npy')).mode & 0o777).toBe(mode); // the .vlc's bits
  });
  it('stdin input: 0666 less the umask', () => {
    const r = spawnSync('bash', ['-c', `umask 027; "${process.execPath}" "${BIN}" compress - -o piped.vlc ${C.join(' ')} < <(cat x.npy)`], { cwd: dir, encoding: 'utf8' });
    expect(r.status, r.stderr).toBe(0);
    expect(fs.statSync(path.join(dir, 'piped.vlc')).mode & 0o777).toBe(0o640);
  });
});

describe('default output names, as gzip names them', () => {
  it('compress x.npy writes x.vlc beside it; decompress x.vlc writes x.npy; both under the same rules', () => {
    const sub = path.join(dir, 'names');
    fs.mkdirSync(sub);
    fs.copyFileSync(DEMO, path.join(sub, 'emb.npy'));
    expect(vlc(['compress', 'names/emb.npy', ...C], { cwd: dir }).code).toBe(0);
    expect(fs.existsSync(path.join(sub, 'emb.vlc'))).toBe(true);
    // No -o was given: the message names the default output, and how to name another.
    const again = /the default output names\/emb\.(vlc|npy) already exists; use -f \(--force\) to replace it, or give -o FILE for another name/;
    expectRefusal(vlc(['compress', 'names/emb.npy', ...C], { cwd: dir }), again);
    expectRefusal(vlc(['decompress', 'names/emb.vlc'], { cwd: dir }), again);
    fs.rmSync(path.join(sub, 'emb.npy'));
    expect(vlc(['decompress', 'names/emb.vlc'], { cwd: dir }).code).toBe(0);
    expect(vlc(['decompress', 'names/emb.vlc', '--anchors'], { cwd: dir }).code).toBe(0);
    expect(vlc(['decompress', 'names/emb.vlc', '--assignments'], { cwd: dir }).code).toBe(0);
    expect(vlc(['decompress', 'names/emb.vlc', '--format', 'fvecs'], { cwd: dir }).code).toBe(0);
    expect(fs.readdirSync(sub).sort()).toEqual(['emb.anchors.npy', 'emb.assignments.npy', 'emb.fvecs', 'emb.npy', 'emb.vlc']);
  });
  it('stdin needs -o; a name not ending in .vlc cannot be decompressed without -o', () => {
    expectRefusal(vlc(['compress', '-', ...C], { cwd: dir, input: bytesOf('x.npy') }), /reading stdin \(-\) needs -o FILE/);
    fs.copyFileSync(path.join(dir, 'x.vlc'), path.join(dir, 'model.bin'));
    expectRefusal(vlc(['decompress', 'model.bin'], { cwd: dir }), /cannot name the output after model\.bin: it does not end in \.vlc; give -o FILE/);
  });
});

describe('paths with spaces, unicode and a leading -', () => {
  it.each(['my vectors.npy', 'vëctörs ✓.npy', '-dash.npy'])('%s', (name) => {
    fs.copyFileSync(DEMO, path.join(dir, name));
    const arg = name.startsWith('-') ? ['--', name] : [name];
    const r = vlc(['compress', ...C, ...arg], { cwd: dir });
    expect(r.code, r.stderr).toBe(0);
    const out = name.replace(/\.npy$/, '.vlc');
    expect(vlc(['info', ...(name.startsWith('-') ? ['--'] : []), out], { cwd: dir }).code).toBe(0);
    // Refused again (the output exists): the name is quoted when it holds a space.
    const again = vlc(['compress', ...C, ...arg], { cwd: dir });
    expectRefusal(again, name.includes(' ') ? new RegExp(`the default output ${JSON.stringify(out).replace(/[.*+?^${}()|[\]\\]/g, '\\$&')} already exists`) : /already exists/);
  });
  it('a leading - without -- is an unknown option, not a file', () => {
    expectRefusal(vlc(['compress', '-dash.npy'], { cwd: dir }), /unknown option '-d/);
  });
});
