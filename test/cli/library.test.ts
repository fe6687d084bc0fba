// vlc as a library: the README's Node example runs as written (through the package's `exports`,
// `import ... from 'vlc'`), errors arrive as the typed classes, and the README's numpy snippet
// loads the same anchors and assignments that vlc's own reader sees.
import { spawnSync } from 'node:child_process';
import * as fs from 'node:fs';
import * as path from 'node:path';
import { describe, expect, it } from 'vitest';
import { PYTHON_WITH_NUMPY, ROOT, tempDir, vlc, writeNpy } from './helpers.js';
import { compress, decompress, openVlc, readVectors, UsageError, VlcError } from '../../dist/index.js';
import { rng } from '../rng.js';

const readme = fs.readFileSync(path.join(ROOT, 'README.md'), 'utf8');
const section = readme.slice(readme.indexOf('## Use from Node and Python'));
const codeBlock = (lang: string) => [...section.matchAll(/```(\w+)\n([\s\S]*?)```/g)].find((m) => m[1] === lang)![2];
const dir = tempDir('library');
const numpy = PYTHON_WITH_NUMPY !== undefined;

describe('vlc as a library', () => {
  it("runs the README's Node example, importing 'vlc' by name", () => {
    const code = codeBlock('js');
    expect(code.split('\n').filter((l) => l.trim()).length).toBeLessThanOrEqual(11);
    // Its /tmp paths go to this test's own directory (other runs may use /tmp/lib-demo.vlc at once).
    const r = spawnSync(process.execPath, ['--input-type=module'], { input: code.replaceAll('/tmp/', `${dir}/`), cwd: ROOT, encoding: 'utf8' });
    expect(r.status, r.stderr).toBe(0);
    const lines = r.stdout.trim().split('\n');
    expect(lines[0]).toMatch(/^2000 vectors -> \d+ bytes, energy \d+\.\d{3}$/);
    expect(lines[1]).toMatch(/^128 anchors; vector 0 is anchor \d+$/);
    expect(lines[2]).toBe('rebuilt 2000 x 64');
    expect(lines[3]).toMatch(/README\.md: unrecognized format/);
    expect(fs.existsSync(path.join(dir, 'lib-demo-rebuilt.parquet'))).toBe(true);
    // It runs again as written: its outputs are replaced (force: true), not refused.
    const again = spawnSync(process.execPath, ['--input-type=module'], { input: code.replaceAll('/tmp/', `${dir}/`), cwd: ROOT, encoding: 'utf8' });
    expect(again.status, again.stderr).toBe(0);
  }, 120_000);

  it('throws the typed errors the CLI turns into exit codes, and leaves nothing behind', async () => {
    const out = path.join(dir, 'never.vlc');
    const err = await compress(path.join(dir, 'missing.npy'), { output: out, device: 'cpu' }).catch((e: unknown) => e);
    expect(err).toBeInstanceOf(UsageError);
    expect(err).toBeInstanceOf(VlcError);
    expect((err as VlcError).exitCode).toBe(2);
    expect((err as Error).message).toMatch(/missing\.npy: no such file/);
    expect(fs.existsSync(out)).toBe(false);
    await expect(compress({ data: new Float32Array(10), n: 3, d: 3 }, { output: out })).rejects.toThrow(/data.length = n × d/);
    // An output that exists is refused in the library's own terms (options, not command-line flags).
    const taken = path.join(dir, 'taken.vlc');
    fs.writeFileSync(taken, 'mine');
    const input = writeNpy(path.join(dir, 'small.npy'), new Float32Array(40), 10, 4);
    await expect(compress(input, { output: taken, device: 'cpu' })).rejects.toThrow(/^output \S*taken\.vlc already exists; use force: true to replace it$/);
    const takenNpy = path.join(dir, 'taken.npy');
    fs.writeFileSync(takenNpy, 'mine');
    await expect(decompress(path.join(dir, 'missing.vlc'), { output: takenNpy })).rejects.toThrow(/^output \S*taken\.npy already exists; use force: true to replace it$/);
    expect([fs.readFileSync(taken, 'utf8'), fs.readFileSync(takenNpy, 'utf8')]).toEqual(['mine', 'mine']);
  });

  it('compresses vectors held in memory, the same as from a file', async () => {
    const r = rng(5);
    const x = Float32Array.from({ length: 300 * 8 }, () => r());
    const fromMemory = path.join(dir, 'memory.vlc');
    const fromFile = path.join(dir, 'file.vlc');
    const stats = await compress({ data: x, n: 300, d: 8 }, { output: fromMemory, anchors: 16, device: 'cpu', iters: 20 });
    await compress(writeNpy(path.join(dir, 'x.npy'), x, 300, 8), { output: fromFile, anchors: 16, device: 'cpu', iters: 20 });
    expect(stats).toMatchObject({ n: 300, d: 8, m: 16, input_format: 'memory f32' });
    expect(fs.readFileSync(fromMemory).equals(fs.readFileSync(fromFile))).toBe(true);
    const opened = await openVlc(fromMemory);
    expect(opened.reconstruct().length).toBe(300 * 8);
    expect((await readVectors(path.join(dir, 'x.npy'))).n).toBe(300);
  }, 60_000);
});

describe.skipIf(!numpy && !process.env.CI)(`the README's numpy snippet${numpy ? '' : ' (skipped: python3 with numpy is not installed; CI installs it)'}`, () => {
  it.each([
    ['f16 anchors, u8 ids', ['--anchors', '64']],
    ['f32 anchors, u16 ids, int8 residuals', ['--anchors', '300', '--anchor-dtype', 'f32', '--residual', 'int8']],
  ])('loads what vlc wrote: %s', async (label, args) => {
    const r = rng(7);
    const x = Float32Array.from({ length: 600 * 12 }, () => r() * 4);
    const file = path.join(dir, `${label.replace(/\W+/g, '-')}.vlc`);
    const c = vlc(['compress', writeNpy(path.join(dir, 'py.npy'), x, 600, 12), '-o', file, '--device', 'cpu', '--iters', '20', ...args]);
    expect(c.code, c.stderr).toBe(0);
    const snippet = codeBlock('python').replace("'/tmp/lib-demo.vlc'", JSON.stringify(file));
    const py = spawnSync(PYTHON_WITH_NUMPY ?? 'python3', ['-c', `${snippet}\nprint(json.dumps({'m': manifest['m'], 'anchors': anchors.tolist(), 'ids': ids.tolist(), 'vectors': vectors.shape}))`], { encoding: 'utf8', maxBuffer: 1 << 26 });
    expect(py.status, py.stderr).toBe(0);
    const got = JSON.parse(py.stdout);
    const want = await openVlc(file);
    expect(got.m).toBe(want.manifest.m);
    expect(got.ids).toEqual(Array.from(want.assignments));
    expect(got.anchors.flat()).toEqual(Array.from(want.anchors));
    expect(got.vectors).toEqual([600, 12]);
  }, 60_000);
});
