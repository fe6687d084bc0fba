// --sample on the CUDA host path (fake driver): training on the sample, then the exact final pass
// over every row — resident, and streamed from host memory when VLC_CUDA_MAX_BYTES leaves too
// little room for the vectors. The streamed final pass must give the same file as the resident
// one, queue its uploads beside the kernels (two streams, page-locked staging) and free everything.
import { mkdtempSync, readFileSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, describe, expect, it, vi } from 'vitest';
import { setDriverForTests } from '../../dist/backend/cuda/driver.js';
import { engineBytes } from '../../dist/backend/cuda/plan.js';
import { npyHeader } from '../../dist/io/writers/npy.js';
import { FakeCuda } from './fake-driver.js';
import { runVlc } from './in-process.js';

const dir = mkdtempSync(join(tmpdir(), 'vlc-cuda-sample-'));
const n = 1000, d = 8, m = 4;
const input = join(dir, 'x.npy');
const body = new Float32Array(n * d).map((_, e) => Math.sin(e * 0.61) * 2 + ((e / d) % 5 | 0));
writeFileSync(input, Buffer.concat([Buffer.from(npyHeader('<f4', [n, d])), Buffer.from(body.buffer)]));

afterEach(() => {
  setDriverForTests(undefined);
  delete process.env.VLC_CUDA_MAX_BYTES;
  vi.restoreAllMocks();
});

/** The CLI in-process on `fake` (its log lines go to the real stderr: fd 2). */
async function compressOn(fake: FakeCuda, out: string, ...extra: string[]) {
  setDriverForTests(fake.api);
  return runVlc('compress', input, '-o', out, '--device', 'cuda', '--anchors', String(m), '--iters', '8', '--seed', '5', '--json', ...extra);
}

describe('--sample on the GPU (fake driver)', () => {
  it('trains on the sample, assigns every row; the same bytes twice', async () => {
    const a = new FakeCuda();
    const ra = await compressOn(a, join(dir, 'a.vlc'), '--sample', '300');
    expect(ra.code, ra.err).toBe(0);
    const stats = JSON.parse(ra.out);
    expect([stats.sample_rows, stats.n, stats.device]).toEqual([300, n, 'cuda']);
    const rb = await compressOn(new FakeCuda(), join(dir, 'b.vlc'), '--sample', '300');
    expect(rb.code).toBe(0);
    expect(readFileSync(join(dir, 'a.vlc'))).toEqual(readFileSync(join(dir, 'b.vlc')));
    expect(a.live).toBe(0);
  }, 120_000);

  it('VLC_CUDA_MAX_BYTES forcing the final pass to stream: the same file, uploads beside the kernels, everything freed', async () => {
    const resident = new FakeCuda();
    expect((await compressOn(resident, join(dir, 'resident.vlc'), '--sample', '300')).code).toBe(0);
    expect(resident.asyncCopies).toBe(0); // resident: one synchronous upload at open, no streaming

    // Room for the 300-row sample's engine, resident, but not for the 1000 rows of the final pass.
    process.env.VLC_CUDA_MAX_BYTES = String(engineBytes(n, d, m, 'f32', 4, 256));
    const streamed = new FakeCuda();
    const r = await compressOn(streamed, join(dir, 'streamed.vlc'), '--sample', '300');
    expect(r.code, r.err).toBe(0);
    expect(readFileSync(join(dir, 'streamed.vlc'))).toEqual(readFileSync(join(dir, 'resident.vlc')));
    expect(streamed.hostAllocs).toBeGreaterThan(0); // page-locked staging
    expect(streamed.asyncCopies).toBeGreaterThanOrEqual(4); // the final pass: 4 tiles of 256 rows (the last 232)
    expect(streamed.overlappedCopies).toBeGreaterThan(0); // a tile's upload queued while the previous tile's kernels were
    expect([streamed.live, streamed.livePinned]).toEqual([0, 0]);
  }, 120_000);
});
