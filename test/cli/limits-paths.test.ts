// Paths that never surprise (issue 29, classes 1, 4, 5, 6, 7), end to end: -f replaces a symbolic
// link itself for every output, never the file it points to; vlc's temp names fit wherever the
// user's name fits, and an empty name is called empty; a deleted working directory and an
// address-space limit; a .vlc given where vectors are read; one file named twice.
import { spawnSync } from 'node:child_process';
import * as fs from 'node:fs';
import * as path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { planOutput } from '../../dist/io/output.js';
import { BIN, DEMO, ROOT, tempDir, vlc, writeNpy, clustered } from './helpers.js';

let dir: string;
const C = ['--device', 'cpu', '--iters', '3', '--anchors', '8', '--residual', 'none'];

beforeAll(() => {
  dir = tempDir('limits-paths');
  writeNpy(path.join(dir, 'x.npy'), clustered(200, 8, 3), 200, 8);
  expect(vlc(['compress', 'x.npy', '-o', 'x.vlc', ...C], { cwd: dir }).code).toBe(0);
});
afterAll(() => fs.rmSync(dir, { recursive: true, force: true }));

/** One stderr line starting `vlc: ` matching `says`, the exit code, no stack. */
function expectRefusal(r: ReturnType<typeof vlc>, says: RegExp, code = 2): void {
  const lines = r.stderr.split('\n').filter((l) => l !== '');
  expect(lines, r.stderr).toHaveLength(1);
  expect(lines[0]).toMatch(/^vlc: /);
  expect(lines[0]).toMatch(says);
  expect(r.stderr).not.toMatch(/\n\s+at |node:internal/);
  expect(r.code).toBe(code);
}

const sh = (script: string, cwd = dir) => {
  const r = spawnSync('bash', ['-c', script], { cwd, encoding: 'utf8', env: { ...process.env, FORCE_COLOR: '0' } });
  return { code: r.status, stdout: r.stdout, stderr: r.stderr, stdoutBytes: Buffer.from(r.stdout) };
};

describe('class 1: -f replaces a symbolic link itself, never the file it points to (as gzip -f)', () => {
  // Every kind of output vlc writes, each through a link to a file the user did not name.
  const outputs: Array<[string, (link: string) => string[]]> = [
    ['compress -o', (link) => ['compress', 'x.npy', '-o', link, ...C]],
    ['compress --stats', (link) => ['compress', 'x.npy', '-o', 'stats-run.vlc', '--stats', link, ...C]],
    ['decompress -o', (link) => ['decompress', 'x.vlc', '-o', link, '--format', 'npy']],
    ['decompress --anchors', (link) => ['decompress', 'x.vlc', '--anchors', '-o', link, '--format', 'npy']],
    ['decompress --assignments (npy)', (link) => ['decompress', 'x.vlc', '--assignments', '-o', link, '--format', 'npy']],
    ['decompress --assignments (txt)', (link) => ['decompress', 'x.vlc', '--assignments', '-o', link, '--format', 'txt']],
  ];
  // Where the link points: beside it, in another directory, through a second link.
  const shapes: Array<[string, (sub: string) => { link: string; victim: string; to: string }]> = [
    ['a link beside its target', (sub) => ({ link: path.join(sub, 'out.link'), victim: path.join(sub, 'victim'), to: 'victim' })],
    ['a link into another directory', (sub) => ({ link: path.join(sub, 'out.link'), victim: path.join(sub, 'other', 'victim'), to: 'other/victim' })],
    ['a link to a link', (sub) => ({ link: path.join(sub, 'out.link'), victim: path.join(sub, 'victim'), to: 'mid.link' })],
  ];
  let k = 0;
  for (const [what, args] of outputs)
    for (const [shape, make] of shapes)
      it(`${what}: ${shape}`, () => {
        const sub = path.join(dir, `sym${k++}`);
        fs.mkdirSync(path.join(sub, 'other'), { recursive: true });
        fs.rmSync(path.join(dir, 'stats-run.vlc'), { force: true });
        const { link, victim, to } = make(sub);
        fs.writeFileSync(victim, 'the user never named this file');
        if (to === 'mid.link') fs.symlinkSync('victim', path.join(sub, 'mid.link'));
        fs.symlinkSync(to, link);
        // Without -f: refused, nothing changes.
        const refused = vlc(args(link), { cwd: dir });
        expect(refused.code, refused.stderr).toBe(2);
        expect(fs.lstatSync(link).isSymbolicLink()).toBe(true);
        // With -f: the link is replaced by the new file; its target keeps its bytes.
        const r = vlc([...args(link), '-f'], { cwd: dir });
        expect(r.code, r.stderr).toBe(0);
        expect(fs.lstatSync(link).isFile()).toBe(true);
        expect(fs.readFileSync(link).toString()).not.toBe('the user never named this file');
        expect(fs.readFileSync(victim, 'utf8')).toBe('the user never named this file');
        expect(fs.readdirSync(sub).filter((f) => f.endsWith('.tmp'))).toEqual([]);
      });
  it('a dangling link with -f is replaced too; a link to a device is still streamed to', () => {
    fs.symlinkSync('nowhere', path.join(dir, 'dangling.vlc'));
    expect(vlc(['compress', 'x.npy', '-o', 'dangling.vlc', '-f', ...C], { cwd: dir }).code).toBe(0);
    expect(fs.lstatSync(path.join(dir, 'dangling.vlc')).isFile()).toBe(true);
    fs.symlinkSync('/dev/null', path.join(dir, 'null.link'));
    expect(vlc(['compress', 'x.npy', '-o', 'null.link', ...C], { cwd: dir }).code).toBe(0);
    expect(fs.lstatSync(path.join(dir, 'null.link')).isSymbolicLink()).toBe(true);
    expect(fs.statSync('/dev/null').isCharacterDevice()).toBe(true);
  });
  it('planOutput plans the name itself, not the resolved target', () => {
    fs.writeFileSync(path.join(dir, 'target.bin'), 'x');
    fs.symlinkSync('target.bin', path.join(dir, 'plan.link'));
    expect(planOutput(path.join(dir, 'plan.link'), { force: true })).toMatchObject({ kind: 'file', path: path.join(dir, 'plan.link') });
  });
});

describe('class 4: names at the limits', () => {
  it('a 251-byte input gives a 255-byte default output; compress, --stats and decompress all work', () => {
    const stem = 'n'.repeat(251);
    fs.copyFileSync(path.join(dir, 'x.npy'), path.join(dir, stem));
    const r = vlc(['compress', stem, '--stats', `${'s'.repeat(250)}.json`, ...C], { cwd: dir });
    expect(r.code, r.stderr).toBe(0);
    expect(Buffer.byteLength(`${stem}.vlc`)).toBe(255);
    expect(fs.existsSync(path.join(dir, `${stem}.vlc`))).toBe(true);
    // decompress's default name of a 255-byte .vlc is 255 bytes too; -f replaces through a short temp name.
    fs.renameSync(path.join(dir, `${stem}.vlc`), path.join(dir, `${'m'.repeat(251)}.vlc`));
    expect(vlc(['decompress', `${'m'.repeat(251)}.vlc`], { cwd: dir }).code).toBe(0);
    expect(vlc(['decompress', `${'m'.repeat(251)}.vlc`, '-f'], { cwd: dir }).code).toBe(0);
    expect(fs.readdirSync(dir).filter((f) => f.endsWith('.tmp'))).toEqual([]);
  });
  it('a 255-byte name of multi-byte characters works; 256 bytes is refused for the name itself', () => {
    const name = `${'é'.repeat(125)}.vlc`; // 250 + 4 = 254 bytes
    expect(vlc(['compress', 'x.npy', '-o', name, ...C], { cwd: dir }).code).toBe(0);
    expectRefusal(vlc(['compress', 'x.npy', '-o', `${'l'.repeat(252)}.vlc`, ...C], { cwd: dir }), /cannot write .*ENAMETOOLONG/);
  });
  const empty: Array<[string, string[], RegExp]> = [
    ["compress -o ''", ['compress', 'x.npy', '-o', '', ...C], /the -o name is empty/],
    ["compress --stats ''", ['compress', 'x.npy', '-o', 'e.vlc', '--stats', '', ...C], /the --stats name is empty/],
    ["decompress -o ''", ['decompress', 'x.vlc', '-o', ''], /the -o name is empty/],
    ["decompress --assignments -o ''", ['decompress', 'x.vlc', '--assignments', '-o', ''], /the -o name is empty/],
    ["bench --out ''", ['bench', '--out', '', '--device', 'cpu'], /the --out name is empty/],
  ];
  it.each(empty)('%s', (_n, args, says) => expectRefusal(vlc(args, { cwd: dir }), says));
});

describe('class 5: the process environment', () => {
  it('a deleted working directory: absolute paths work, a relative one is named in one line', () => {
    const gone = path.join(dir, 'gone');
    fs.mkdirSync(gone);
    const x = path.join(dir, 'x.npy');
    const ok = sh(`cd ${gone} && rmdir ${gone} && "${process.execPath}" "${BIN}" compress ${x} -o ${path.join(dir, 'cwd.vlc')} ${C.join(' ')} && "${process.execPath}" "${BIN}" decompress ${path.join(dir, 'cwd.vlc')} -o ${path.join(dir, 'cwd.npy')}`);
    expect(ok.code, ok.stderr).toBe(0);
    expect(ok.stderr).not.toMatch(/uv_cwd|ENOENT/);
    fs.mkdirSync(gone);
    const rel = sh(`cd ${gone} && rmdir ${gone} && "${process.execPath}" "${BIN}" compress x.npy -o ${path.join(dir, 'cwd2.vlc')} ${C.join(' ')}`);
    expectRefusal(rel, /the working directory no longer exists .* relative path x\.npy/);
    expect(fs.existsSync('/cwd2.vlc')).toBe(false); // nothing written relative to / instead
    expect(fs.existsSync(path.join(dir, 'cwd2.vlc'))).toBe(false);
  });
  it('ulimit -v 8 GiB (an HPC login node): compress works on a small input', () => {
    const r = sh(`ulimit -v 8388608 && "${process.execPath}" "${BIN}" compress ${DEMO} -o ${path.join(dir, 'ulimit.vlc')} --device cpu --effort fast --anchors 16`);
    expect(r.code, r.stderr).toBe(0);
    expect(vlc(['info', path.join(dir, 'ulimit.vlc')]).code).toBe(0);
  });
  it('an address-space limit too small for Node ends with one vlc line naming it', () => {
    const r = sh(`ulimit -v 1572864 && "${process.execPath}" "${BIN}" compress ${DEMO} -o ${path.join(dir, 'tiny-limit.vlc')} --device cpu --effort fast`);
    // Node's own fatal lines may come first; vlc's line names the limit and how to raise it.
    expect(r.code).not.toBe(0);
    expect(r.stderr).toMatch(/^vlc: .*ulimit -v.*(1\.5 GiB).*unlimited/m);
    expect(fs.existsSync(path.join(dir, 'tiny-limit.vlc'))).toBe(false);
  });
  it('an out-of-memory failure under a limit names the limit (src/limits.ts)', () => {
    const script = `import('${path.join(ROOT, 'dist/limits.js')}').then((m) => console.log(m.withLimit('cpu worker: WebAssembly.Instance(): Out of memory')))`;
    const r = sh(`ulimit -v 8388608 && "${process.execPath}" -e "${script}"`);
    expect(r.stdout).toMatch(/Out of memory: this process is under the address-space limit \(ulimit -v: 8\.0 GiB\); raise it \(ulimit -v unlimited/);
  });
  it('without its compiled code, bin/vlc.js says so in one line', () => {
    const copy = path.join(dir, 'nodist', 'bin');
    fs.mkdirSync(copy, { recursive: true });
    fs.copyFileSync(BIN, path.join(copy, 'vlc.js'));
    const r = sh(`"${process.execPath}" ${path.join(copy, 'vlc.js')} --version`);
    expectRefusal(r, /compiled code \(dist\/\) is missing; run npm ci/, 1);
  });
});

describe("class 6: vlc's own files where vectors are read", () => {
  const says = /already a \.vlc file; use vlc decompress/;
  const cases: Array<[string, string, string[]]> = [
    ['renamed x.npy', 'as.npy', []],
    ['renamed .parquet', 'as.parquet', []],
    ['renamed .csv', 'as.csv', []],
    ['renamed .fvecs', 'as.fvecs', []],
    ['no extension', 'as', []],
    ['--format npy', 'as.bin', ['--format', 'npy']],
    ['--format raw --dim 4', 'as.f32', ['--format', 'raw', '--dim', '4']],
    ['--format hdf5', 'as.h5', ['--format', 'hdf5']],
  ];
  it.each(cases)('compress: %s', (_n, name, extra) => {
    fs.copyFileSync(path.join(dir, 'x.vlc'), path.join(dir, name));
    expectRefusal(vlc(['compress', name, '-o', `${name}.out.vlc`, ...extra, ...C], { cwd: dir }), says);
    expect(fs.existsSync(path.join(dir, `${name}.out.vlc`))).toBe(false);
  });
  it('through stdin, as one shard of several, as eval\'s original and as search\'s queries', () => {
    fs.copyFileSync(path.join(dir, 'x.vlc'), path.join(dir, 'shard.npy'));
    expectRefusal(vlc(['compress', '-', '-o', 'stdin.vlc', ...C], { cwd: dir, input: fs.readFileSync(path.join(dir, 'x.vlc')) }), says);
    expectRefusal(vlc(['compress', 'x.npy', 'shard.npy', '-o', 'shards.vlc', ...C], { cwd: dir }), says);
    expectRefusal(vlc(['eval', 'shard.npy', 'x.vlc'], { cwd: dir }), says);
    expectRefusal(vlc(['search', 'x.vlc', '--queries', 'shard.npy'], { cwd: dir }), says);
  });
});

describe('class 7: the same input twice', () => {
  const says = /(is given twice|are the same file).*--allow-duplicate-inputs/;
  const setups: Array<[string, string[], () => void]> = [
    ['the same path twice', ['a.npy', 'a.npy'], () => {}],
    ['a hard link', ['a.npy', 'hard.npy'], () => fs.linkSync(path.join(dir, 'dup', 'a.npy'), path.join(dir, 'dup', 'hard.npy'))],
    ['a symbolic link', ['a.npy', 'soft.npy'], () => fs.symlinkSync('a.npy', path.join(dir, 'dup', 'soft.npy'))],
    ['a glob that matches it again', ['a.npy', '*.npy'], () => {}],
    ['another path to it', ['a.npy', '../dup/a.npy'], () => {}],
    ['the directory holding it, and it', ['.', 'a.npy'], () => {}],
  ];
  it.each(setups)('%s: refused (exit 2), and read twice with --allow-duplicate-inputs', (_n, inputs, setup) => {
    const d = path.join(dir, 'dup');
    fs.rmSync(d, { recursive: true, force: true });
    fs.mkdirSync(d);
    writeNpy(path.join(d, 'a.npy'), clustered(100, 8, 5), 100, 8);
    setup();
    expectRefusal(vlc(['compress', ...inputs, '-o', 'out.vlc', ...C], { cwd: d }), says);
    expect(fs.existsSync(path.join(d, 'out.vlc'))).toBe(false);
    const r = vlc(['compress', ...inputs, '-o', 'out.vlc', '--allow-duplicate-inputs', '--json', ...C], { cwd: d });
    expect(r.code, r.stderr).toBe(0);
    expect(JSON.parse(r.stdout).n).toBeGreaterThanOrEqual(200);
  });
  it('distinct files are read as before; the flag is in --help', () => {
    const d = path.join(dir, 'distinct');
    fs.mkdirSync(d);
    writeNpy(path.join(d, 'a.npy'), clustered(100, 8, 5), 100, 8);
    writeNpy(path.join(d, 'b.npy'), clustered(100, 8, 6), 100, 8);
    const r = vlc(['compress', 'a.npy', 'b.npy', '-o', 'out.vlc', '--json', ...C], { cwd: d });
    expect(JSON.parse(r.stdout).n).toBe(200);
    expect(vlc(['compress', '--help']).stdout).toMatch(/--allow-duplicate-inputs/);
  });
});
