// Ctrl-C (and SIGTERM) in each long step, not only in training (commands.test.ts) or while blocked
// on input (hostile-inputs.test.ts): reading a pipe, writing a decompressed file, eval's exact
// search, search's queries. With -v each step logs "step: <label>" as it starts; the signal is
// sent then, so it lands inside that step. Every case: exit 130 (143) within a
// second, no stack, no partial output, an existing output (replaced with --force) left as it was.
// Writing a decompressed file is too short a step (30 MB into the page cache) for a signal sent on
// seeing its log line to land in it reliably: decompress is interrupted while writing to a pipe
// nobody reads yet (its writes block until the signal), and a file being written is interrupted in
// a process of its own that sends itself SIGINT between two writes (the last test).
import { spawn, spawnSync } from 'node:child_process';
import * as fs from 'node:fs';
import * as path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { npyHeader } from '../../dist/io/writers/npy.js';
import { BIN, ROOT, clustered, tempDir, writeNpy } from './helpers.js';

const N = 120_000;
const D = 64;
let dir: string;
let inputs: string[];

beforeAll(() => {
  dir = tempDir('int-steps');
  writeNpy(path.join(dir, 'big.npy'), clustered(N, D, 3, 40), N, D);
  writeNpy(path.join(dir, 'queries.npy'), clustered(20_000, D, 4, 40), 20_000, D);
  writeNpy(path.join(dir, 'small.npy'), clustered(60_000, D, 5, 40), 60_000, D); // under 2^22 values: encoded on the main thread
  const made = spawnSync(process.execPath, [BIN, 'compress', 'big.npy', '-o', 'big.vlc', '--residual', 'int8', '--anchors', '64', '--iters', '3', '--device', 'cpu', '-q'], { cwd: dir });
  expect(made.status, made.stderr.toString()).toBe(0);
  fs.writeFileSync(path.join(dir, 'out.vlc'), 'previous contents');
  fs.writeFileSync(path.join(dir, 'out.npy'), 'previous contents');
  inputs = fs.readdirSync(dir).sort();
}, 300_000);
afterAll(() => fs.rmSync(dir, { recursive: true, force: true }));

/**
 * Run `vlc <args> -v`; once stderr shows `step: <step>`, send `signal` (after `feed` has written
 * part of stdin, when given). Returns the exit code, ms from signal to exit, stderr.
 */
async function interruptAt(args: string[], step: string, signal: 'SIGINT' | 'SIGTERM', feed?: (stdin: NodeJS.WritableStream) => void, holdStdout = false) {
  const child = spawn(process.execPath, [BIN, ...args, '-v'], { cwd: dir, stdio: ['pipe', 'pipe', 'pipe'] });
  child.stdin.on('error', () => {}); // the child may exit before it reads everything fed
  feed?.(child.stdin);
  let stderr = '';
  let sent = 0;
  if (!holdStdout) child.stdout.resume(); // held: the child's writes block once the pipe is full
  const code = await new Promise<number | null>((resolve, reject) => {
    const t = setTimeout(() => reject(new Error(`never reached step '${step}'; stderr: ${stderr}`)), 120_000);
    child.stderr.on('data', (c) => {
      stderr += String(c);
      if (!sent && stderr.includes(`[debug] step: ${step}`)) {
        clearTimeout(t);
        sent = performance.now();
        child.kill(signal);
      }
    });
    child.on('exit', (c) => resolve(c));
  });
  return { code, ms: performance.now() - sent, stderr, reached: sent > 0 };
}

const cases: Array<{ name: string; args: string[]; step: string; signal: 'SIGINT' | 'SIGTERM'; feed?: (s: NodeJS.WritableStream) => void; holdStdout?: boolean }> = [
  {
    name: 'compress reading a pipe that has delivered half its vectors',
    args: ['compress', '-', '-o', 'out.vlc', '--force', '--device', 'cpu'],
    step: 'reading stdin',
    signal: 'SIGINT',
    // The header and half the rows; the pipe then stays open and silent.
    feed: (s) => s.write(Buffer.concat([Buffer.from(npyHeader('<f4', [N, D])), Buffer.alloc((N / 2) * D * 4, 1)])),
  },
  {
    name: 'compress encoding int8 residuals on the main thread',
    args: ['compress', 'small.npy', '-o', 'out.vlc', '--force', '--device', 'cpu', '--residual', 'int8', '--anchors', '64', '--iters', '3'],
    step: 'encoding int8 residuals',
    signal: 'SIGINT',
  },
  { name: 'decompress writing to a pipe nobody reads yet', args: ['decompress', 'big.vlc', '-o', '-', '--format', 'npy'], step: 'writing stdout', signal: 'SIGINT', holdStdout: true },
  { name: "eval's exact search", args: ['eval', 'big.npy', 'big.vlc', '--queries', '20000'], step: 'exact search', signal: 'SIGINT' },
  { name: "search's queries", args: ['search', 'big.vlc', '--queries', 'queries.npy', '-k', '10'], step: 'searching', signal: 'SIGTERM' },
];

describe('a signal in any long step ends vlc within a second and leaves no partial output', () => {
  it.each(cases.map((c) => [c.name, c] as const))('%s', async (_name, c) => {
    const r = await interruptAt(c.args, c.step, c.signal, c.feed, c.holdStdout);
    expect(r.reached, r.stderr).toBe(true);
    expect(r.code, r.stderr).toBe(c.signal === 'SIGINT' ? 130 : 143);
    expect(r.ms).toBeLessThan(1000);
    expect(r.stderr).not.toMatch(/\n\s+at |Error:/);
    expect(fs.readdirSync(dir).sort()).toEqual(inputs);
    expect(fs.readFileSync(path.join(dir, 'out.vlc'), 'utf8')).toBe('previous contents');
    expect(fs.readFileSync(path.join(dir, 'out.npy'), 'utf8')).toBe('previous contents');
  }, 180_000);

  it('a file being written: the temp file goes, the old file stays, exit 130', () => {
    // The output module as decompress uses it, in a process that signals itself between two writes.
    const script = `
      import { installInterruptHandlers } from ${JSON.stringify(path.join(ROOT, 'dist/interrupt.js'))};
      import { planOutput, writeOutput } from ${JSON.stringify(path.join(ROOT, 'dist/io/output.js'))};
      installInterruptHandlers();
      await writeOutput(planOutput('out.npy', { force: true }), async (sink) => {
        await sink.write(new Uint8Array(1 << 20));
        process.kill(process.pid, 'SIGINT');
        await new Promise((r) => setTimeout(r, 10_000));
        await sink.write(new Uint8Array(1 << 20));
      });
      process.exit(0);`;
    const t0 = performance.now();
    const r = spawnSync(process.execPath, ['--input-type=module', '-e', script], { cwd: dir, encoding: 'utf8' });
    expect(r.status, r.stderr).toBe(130);
    expect(performance.now() - t0).toBeLessThan(5000);
    expect(fs.readdirSync(dir).sort()).toEqual(inputs);
    expect(fs.readFileSync(path.join(dir, 'out.npy'), 'utf8')).toBe('previous contents');
  });
});
