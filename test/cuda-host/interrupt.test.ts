// Ctrl-C during GPU work: the engine never blocks the event loop for long while it waits for the
// GPU, so SIGINT ends the process (exit 130) within a second and leaves no output file.
import { describe, expect, it } from 'vitest';
import { spawn } from 'node:child_process';
import { mkdtempSync, readdirSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { npyHeader } from '../../dist/io/writers/npy.js';

describe('Ctrl-C while the GPU is busy', () => {
  it('exits 130 within a second, no output left', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'vlc-int-'));
    const input = join(dir, 'in.npy');
    const body = new Float32Array(64 * 4).map((_, e) => e % 7);
    writeFileSync(input, Buffer.concat([Buffer.from(npyHeader('<f4', [64, 4])), Buffer.from(body.buffer)]));
    const child = spawn(process.execPath, [join(__dirname, 'interrupt-child.mjs'), 'compress', input, '-o', join(dir, 'out.vlc'), '--device', 'cuda', '--anchors', '4'], {
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    let stderr = '';
    child.stderr.on('data', (c) => (stderr += String(c)));
    await new Promise<void>((resolve, reject) => {
      const t = setTimeout(() => reject(new Error(`never reached the GPU wait; stderr: ${stderr}`)), 20_000);
      child.stdout.on('data', (c) => {
        if (String(c).includes('waiting')) {
          clearTimeout(t);
          resolve();
        }
      });
    });
    await new Promise((r) => setTimeout(r, 200)); // well inside the wait
    const sent = performance.now();
    child.kill('SIGINT');
    const code = await new Promise<number | null>((r) => child.on('exit', (c) => r(c)));
    const took = performance.now() - sent;
    expect(code).toBe(130);
    expect(took).toBeLessThan(1000);
    expect(readdirSync(dir)).toEqual(['in.npy']);
  }, 30_000);
});
