// Ctrl-C during GPU work: the engine never blocks the event loop for long while it waits for the
// GPU, so SIGINT ends the process (exit 130) within a second and leaves no output file — also
// when the vectors are streamed in tiles (it then waits between tiles).
import { describe, expect, it } from 'vitest';
import { spawn } from 'node:child_process';
import { mkdtempSync, readdirSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { npyHeader } from '../../dist/io/writers/npy.js';
import { engineBytes } from '../../dist/backend/cuda/plan.js';

describe('Ctrl-C while the GPU is busy', () => {
  for (const tiled of [false, true]) {
    it(`exits 130 within a second, no output left${tiled ? ' (vectors in tiles)' : ''}`, async () => {
      const dir = mkdtempSync(join(tmpdir(), 'vlc-int-'));
      const input = join(dir, 'in.npy');
      const n = tiled ? 600 : 64;
      const body = new Float32Array(n * 4).map((_, e) => e % 7);
      writeFileSync(input, Buffer.concat([Buffer.from(npyHeader('<f4', [n, 4])), Buffer.from(body.buffer)]));
      // Room for tiles of 256 rows only (the child's fake GPU has 4 multiprocessors).
      const env = tiled ? { ...process.env, VLC_CUDA_MAX_BYTES: String(engineBytes(n, 4, 4, 'f32', 4, 256)) } : process.env;
      const child = spawn(process.execPath, [join(__dirname, 'interrupt-child.mjs'), 'compress', input, '-o', join(dir, 'out.vlc'), '--device', 'cuda', '--anchors', '4'], {
        stdio: ['ignore', 'pipe', 'pipe'],
        env,
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
      if (tiled) expect(stderr).toMatch(/streaming the vectors from host memory in 3 tiles of 256 rows/);
    }, 30_000);
  }
});
