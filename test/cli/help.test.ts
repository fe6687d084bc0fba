// Help that teaches: every command's --help ends with 2-3 examples (a pipeline among them) that run
// as written, required options say so, and `vlc -h CMD` / `vlc help CMD` show the command's help.
import { spawnSync } from 'node:child_process';
import * as fs from 'node:fs';
import * as path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { BIN, DEMO, tempDir, vlc } from './helpers.js';

const COMMANDS = ['compress', 'decompress', 'info', 'eval', 'search', 'test-cuda', 'devices', 'bench'];

function examplesOf(help: string): string[] {
  const part = help.slice(help.indexOf('\nExamples:\n'));
  return [...part.matchAll(/^ {2}\$ (.+)$/gm)].map((m) => m[1]);
}

describe('--help', () => {
  it.each(COMMANDS)('%s: ends with 2-3 examples, a pipeline among them, using only its own options', (cmd) => {
    const help = vlc([cmd, '--help']).stdout;
    expect(help).toMatch(/\nExamples:\n(  \$ .+\n      .+\n){2,3}$/);
    const examples = examplesOf(help);
    expect(examples.some((e) => e.includes(' | '))).toBe(true);
    for (const e of examples) {
      const own = e.split(' | ').find((part) => part.trim().startsWith(`vlc ${cmd}`))!;
      expect(own, e).toBeDefined();
      for (const flag of own.match(/(?<=\s)--?[a-z][a-z0-9-]*/g) ?? []) expect(help, `${cmd}: ${flag} in '${e}'`).toContain(flag);
    }
  });

  it('vlc --help ends with a first session\'s examples, which run in order as written', () => {
    const help = vlc(['--help']).stdout;
    expect(help).toMatch(/\nExamples:\n(  \$ .+\n      .+\n){3,5}\nEvery command has --help/);
    const lines = examplesOf(help);
    expect(lines[0]).toBe('vlc compress emb.npy');
    const w = tempDir('top-examples');
    try {
      fs.copyFileSync(DEMO, path.join(w, 'emb.npy'));
      expect(spawnSync('python3', ['-c', `import numpy; numpy.save('${w}/queries.npy', numpy.load('${w}/emb.npy')[:5])`]).status).toBe(0);
      fs.mkdirSync(path.join(w, 'bin'));
      fs.writeFileSync(path.join(w, 'bin', 'vlc'), `#!/bin/sh\nexec "${process.execPath}" "${BIN}" "$@"\n`, { mode: 0o755 });
      const env = { ...process.env, PATH: `${path.join(w, 'bin')}:${process.env.PATH}` };
      for (const line of lines) {
        // The first line trains on the CPU quickly; the others read what it wrote.
        const run = line.startsWith('vlc compress') ? `${line} --device cpu --iters 20 -q` : line;
        const r = spawnSync('bash', ['-o', 'pipefail', '-c', run], { cwd: w, env, encoding: 'utf8' });
        expect(r.status, `${line}\n${r.stderr}`).toBe(0);
      }
      expect(fs.existsSync(path.join(w, 'emb-rebuilt.npy'))).toBe(true);
    } finally {
      fs.rmSync(w, { recursive: true, force: true });
    }
  }, 120_000);

  it('vlc -h CMD and vlc help CMD show the command\'s help, the same as vlc CMD --help', () => {
    for (const cmd of ['compress', 'eval']) {
      const want = vlc([cmd, '--help']).stdout;
      expect(want).toMatch(new RegExp(`^Usage: vlc ${cmd} `));
      expect(vlc(['-h', cmd]).stdout).toBe(want);
      expect(vlc(['--help', cmd]).stdout).toBe(want);
      expect(vlc(['help', cmd]).stdout).toBe(want);
    }
  });

  it('marks required options (required)', () => {
    // compress names its output after the input without -o, so nothing of it is required
    expect(vlc(['compress', '--help']).stdout).toMatch(/-o, --output <file> +output \.vlc file, or - for stdout\s+\(default:\s+the\s+input/);
    expect(vlc(['compress', '--help']).stdout).not.toMatch(/\(required\)/);
    expect(vlc(['search', '--help']).stdout).toMatch(/--queries <file> [^\n]*\s+\(required\)/);
    expect(vlc(['eval', '--help']).stdout).not.toMatch(/\(required\)/);
  });
});

describe('the examples run as written', () => {
  let dir: string;
  let env: NodeJS.ProcessEnv;
  let given: string; // a .vlc for the commands that read one
  beforeAll(() => {
    dir = tempDir('examples');
    given = path.join(dir, 'given.vlc');
    expect(vlc(['compress', DEMO, '-o', given, '--residual', 'int8', '--iters', '20', '--device', 'cpu', '-q']).code).toBe(0);
    fs.mkdirSync(path.join(dir, 'bin'));
    fs.writeFileSync(path.join(dir, 'bin', 'vlc'), `#!/bin/sh\nexec "${process.execPath}" "${BIN}" "$@"\n`, { mode: 0o755 });
    env = { ...process.env, PATH: `${path.join(dir, 'bin')}:${process.env.PATH}` };
  });
  afterAll(() => fs.rmSync(dir, { recursive: true, force: true }));

  /** A fresh directory with the files the examples name. */
  function workdir(tag: string): string {
    const w = path.join(dir, tag.replace(/\W+/g, '-'));
    fs.mkdirSync(w);
    fs.copyFileSync(DEMO, path.join(w, 'emb.npy'));
    spawnSync('zstd', ['-q', '-k', path.join(w, 'emb.npy')]);
    const q = spawnSync('python3', ['-c', `import numpy; numpy.save('${w}/queries.npy', numpy.load('${w}/emb.npy')[:20])`]);
    expect(q.status).toBe(0);
    return w;
  }

  it.each(COMMANDS)('%s', (cmd) => {
    for (const line of examplesOf(vlc([cmd, '--help']).stdout)) {
      const w = workdir(`${cmd}-${line}`);
      // Commands that read a .vlc get the one made above; compress makes its own.
      if (cmd !== 'compress') fs.copyFileSync(given, path.join(w, 'emb.vlc'));
      const r = spawnSync('bash', ['-o', 'pipefail', '-c', line], { cwd: w, env, encoding: 'utf8', maxBuffer: 1 << 26 });
      // Without a GPU, test-cuda and devices say so with exit 3 (their documented behaviour).
      const ok = ['test-cuda', 'devices'].includes(cmd) && r.status === 3 ? 3 : 0;
      expect(r.status, `${line}\n${r.stderr}`).toBe(ok);
      // A pipeline gives something: on stdout, or in the file it is redirected to.
      const redirect = / > (\S+)$/.exec(line);
      if (ok === 0 && redirect) expect(fs.statSync(path.join(w, redirect[1])).size, line).toBeGreaterThan(0);
      else if (ok === 0 && line.includes(' | ')) expect(r.stdout.trim(), line).not.toBe('');
    }
  }, 300_000);
});
