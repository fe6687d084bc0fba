// The CUDA host path's failures, through the fake driver and the real CLI entry (in-process):
// no driver library, no device, PTX too new, out of memory at each allocation, a failing kernel,
// data that do not fit, a bad --gpu; the exit codes and messages, --device auto's fallback, and
// that every device allocation is freed and no output file is left behind.
import { afterEach, beforeAll, describe, expect, it, vi } from 'vitest';
import { mkdtempSync, readdirSync, readFileSync, writeFileSync, existsSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { spawnSync } from 'node:child_process';
import { setDriverForTests, DriverLoadError } from '../../dist/backend/cuda/driver.js';
import { npyHeader } from '../../dist/io/writers/npy.js';
import { engineBytes } from '../../dist/backend/cuda/plan.js';
import { FakeCuda, type FakeOptions } from './fake-driver.js';
import { runVlc } from './in-process.js';
import { checkJson } from '../json-schema.js';

let dir: string;
let input: string;

beforeAll(() => {
  dir = mkdtempSync(join(tmpdir(), 'vlc-cuda-host-'));
  input = join(dir, 'small.npy');
  const n = 300, d = 8;
  const body = new Float32Array(n * d).map((_, e) => Math.sin(e * 0.37) * 3 + ((e / d) % 4 | 0));
  writeFileSync(input, Buffer.concat([Buffer.from(npyHeader('<f4', [n, d])), Buffer.from(body.buffer)]));
});

afterEach(() => {
  setDriverForTests(undefined);
  vi.restoreAllMocks();
});

/** Run the CLI in-process with a fake driver; capture stdout and stderr writes. */
async function vlc(fake: FakeCuda | DriverLoadError | undefined, ...args: string[]) {
  setDriverForTests(fake instanceof FakeCuda ? fake.api : fake);
  return runVlc(...args);
}

function fakeWith(o: FakeOptions): FakeCuda {
  return new FakeCuda(o);
}

/** Nothing but the input in the temp dir: no output, no temp file. */
function onlyInputLeft(): void {
  expect(readdirSync(dir)).toEqual(['small.npy']);
}

describe('vlc devices', () => {
  it('lists the fake GPU with its properties and the driver version', async () => {
    const r = await vlc(fakeWith({ driverVersion: 12040 }), 'devices');
    expect(r.code).toBe(0);
    expect(r.out).toMatch(/CUDA driver 12\.4/);
    expect(r.out).toMatch(/0\s+Fake GPU 80GB\s+9\.0\s+80\.0 GiB\s+80\.0 GiB\s+4/);
    const j = await vlc(fakeWith({}), 'devices', '--json');
    const parsed = JSON.parse(j.out);
    expect(parsed).toMatchObject({ schema: 1, command: 'devices', ok: true, reason: null });
    expect(checkJson('devices', parsed)).toEqual([]);
    expect(parsed.devices[0]).toMatchObject({ index: 0, name: 'Fake GPU 80GB', compute_capability: '9.0', multiprocessors: 4 });
  });

  it('no driver library: says so, exit 3', async () => {
    const r = await vlc(new DriverLoadError('libcuda.so.1 could not be loaded (not found)'), 'devices');
    expect(r.code).toBe(3);
    expect(r.err).toMatch(/no NVIDIA driver library: libcuda\.so\.1 could not be loaded/);
  });

  it('no device: says so, exit 3', async () => {
    const r = await vlc(fakeWith({ initStatus: 100 }), 'devices');
    expect(r.code).toBe(3);
    expect(r.err).toMatch(/no CUDA device: .*CUDA_ERROR_NO_DEVICE/);
  });

  it('a real process without libcuda (VLC_CUDA_LIB pointing nowhere): exit 3 with the reason', () => {
    const r = spawnSync(process.execPath, ['bin/vlc.js', 'devices'], {
      env: { ...process.env, VLC_CUDA_LIB: '/nonexistent/libcuda.so.1' },
      encoding: 'utf8',
    });
    expect(r.status).toBe(3);
    expect(r.stderr).toMatch(/no NVIDIA driver library: \/nonexistent\/libcuda\.so\.1 could not be loaded/);
  });
});

describe('device choice', () => {
  it('--device auto without a driver falls back to the CPU with one short line (the reason under -v, nothing under -q)', () => {
    const out = join(dir, 'auto.vlc');
    const run = (...flags: string[]) => {
      const r = spawnSync(process.execPath, ['bin/vlc.js', 'compress', input, '-o', out, '--anchors', '4', '--iters', '3', '--residual', 'none', ...flags], {
        env: { ...process.env, VLC_CUDA_LIB: '/nonexistent/libcuda.so.1' },
        encoding: 'utf8',
      });
      spawnSync('rm', ['-f', out]);
      expect(r.status).toBe(0);
      return r.stderr.split('\n').filter((l) => /CPU|driver/.test(l));
    };
    expect(run()).toEqual(['vlc: no NVIDIA driver found: using the CPU (-v says why)']);
    expect(run('-v').some((l) => /no NVIDIA driver library: \/nonexistent\/libcuda\.so\.1 could not be loaded/.test(l))).toBe(true);
    expect(run('-q')).toEqual([]);
  });

  it('--device cuda never falls back: exit 3 with the reason, no output', async () => {
    const out = join(dir, 'x.vlc');
    const r = await vlc(fakeWith({ initStatus: 100 }), 'compress', input, '-o', out, '--device', 'cuda', '--anchors', '4');
    expect(r.code).toBe(3);
    expect(r.err).toMatch(/--device cuda: no CUDA device/);
    onlyInputLeft();
  });

  it('--gpu N that does not exist: lists the GPUs that do, exit 2', async () => {
    const fake = fakeWith({ devices: [
      { name: 'Fake A', cc: [8, 0], sms: 2, memBytes: 2 ** 34 },
      { name: 'Fake B', cc: [9, 0], sms: 2, memBytes: 2 ** 34 },
    ] });
    const r = await vlc(fake, 'compress', input, '-o', join(dir, 'x.vlc'), '--gpu', '5', '--anchors', '4');
    expect(r.code).toBe(2);
    expect(r.err).toMatch(/--gpu 5: no such GPU; this machine has GPUs 0 \(Fake A\), 1 \(Fake B\)/);
    onlyInputLeft();
  });

  it('PTX newer than the driver: names the driver needed; auto falls back, cuda exits 3', async () => {
    const fake = fakeWith({ moduleStatus: 222, driverVersion: 12040 });
    const r = await vlc(fake, 'compress', input, '-o', join(dir, 'x.vlc'), '--device', 'cuda', '--anchors', '4');
    expect(r.code).toBe(3);
    expect(r.err).toMatch(/need a newer NVIDIA driver: they are PTX ISA 9\.0 \(CUDA 13\.0\), which needs NVIDIA driver 580 or newer; this driver supports CUDA 12\.4/);
    expect(r.err).toMatch(/CUDA_ERROR_UNSUPPORTED_PTX_VERSION/);
    expect(fake.live).toBe(0);
    expect(fake.retained).toBe(0); // the primary context was released
    onlyInputLeft();
    const out = join(dir, 'auto.vlc');
    const a = await vlc(fakeWith({ moduleStatus: 222, driverVersion: 12040 }), 'compress', input, '-o', out, '--anchors', '4', '--iters', '3', '-q');
    expect(a.code).toBe(0);
    expect(existsSync(out)).toBe(true);
    spawnSync('rm', ['-f', out]);
  });
});

describe('failures during GPU work free everything and leave no output', () => {
  it('runs through the fake GPU when nothing fails', async () => {
    const fake = fakeWith({});
    const out = join(dir, 'ok.vlc');
    const r = await vlc(fake, 'compress', input, '-o', out, '--device', 'cuda', '--anchors', '4', '--iters', '5', '-q');
    expect(r.code).toBe(0);
    expect(existsSync(out)).toBe(true);
    expect(fake.allocs).toBeGreaterThan(15);
    expect(fake.live).toBe(0);
    spawnSync('rm', ['-f', out]);
  });

  it('out of memory at the k-th allocation, for every k', async () => {
    const probe = fakeWith({});
    await vlc(probe, 'compress', input, '-o', join(dir, 'p.vlc'), '--device', 'cuda', '--anchors', '4', '--iters', '2', '-q');
    spawnSync('rm', ['-f', join(dir, 'p.vlc')]);
    const total = probe.allocs;
    for (let k = 1; k <= total; k++) {
      const fake = fakeWith({ oomAtAlloc: k });
      const r = await vlc(fake, 'compress', input, '-o', join(dir, 'x.vlc'), '--device', 'cuda', '--anchors', '4', '--iters', '2');
      expect(r.code, `allocation ${k}`).toBe(3);
      expect(r.err).toMatch(/out of GPU memory on cuda:0: allocating .+ needs .+, .+ free of .+ \(.+ already held by vlc\)/);
      expect(fake.live, `allocation ${k}`).toBe(0);
      onlyInputLeft();
    }
  });

  it('data that do not fit: bytes needed and free, exit 3', async () => {
    const fake = fakeWith({ freeBytes: 4096 });
    const r = await vlc(fake, 'compress', input, '-o', join(dir, 'x.vlc'), '--device', 'cuda', '--anchors', '4');
    expect(r.code).toBe(3);
    expect(r.err).toMatch(
      /the data do not fit on cuda:0: 300×8 f32 vectors with 4 anchors need .+ of GPU memory even with the vectors streamed from host memory in tiles of 256 rows \(.+ with all of them on the GPU\), 4\.0 KiB free of 80\.00 GiB/,
    );
    expect(fake.live).toBe(0);
    onlyInputLeft();
  });

  it('data that fit only in tiles (little free memory): streamed, the same file as resident, everything freed', async () => {
    const resident = join(dir, 'resident.vlc');
    const tiled = join(dir, 'tiled.vlc');
    // 1000 rows (streamed, two tile buffers of 256 rows take less than 1000 resident rows).
    const big = join(dir, 'big.npy');
    const n = 1000, d = 8;
    const body = new Float32Array(n * d).map((_, e) => Math.sin(e * 0.37) * 3 + ((e / d) % 4 | 0));
    writeFileSync(big, Buffer.concat([Buffer.from(npyHeader('<f4', [n, d])), Buffer.from(body.buffer)]));
    const args = ['--device', 'cuda', '--anchors', '4', '--iters', '6', '--seed', '3', '-q'];
    expect((await vlc(fakeWith({}), 'compress', big, '-o', resident, ...args)).code).toBe(0);
    const fake = fakeWith({ freeBytes: engineBytes(n, d, 4, 'f32', 4, 256) }); // tiles of 256 rows, the last 232
    const r = await vlc(fake, 'compress', big, '-o', tiled, ...args);
    expect(r.code).toBe(0);
    expect(fake.launches.filter((k) => k === 'reduce_tally').length).toBeGreaterThanOrEqual(4 * 6);
    expect([fake.live, fake.livePinned]).toEqual([0, 0]);
    expect(fake.overlappedCopies).toBeGreaterThan(0); // uploads queued while the kernels of a tile were
    expect(readFileSync(tiled)).toEqual(readFileSync(resident));
    spawnSync('rm', ['-f', resident, tiled, big]);
  });

  for (const kernel of ['seed_dist', 'assign_top2', 'reduce_tally', 'reduce_sums', 'update_anchors']) {
    it(`a failing kernel (${kernel}): named, exit 3`, async () => {
      const fake = fakeWith({ failKernel: { name: kernel, status: 719 } });
      const r = await vlc(fake, 'compress', input, '-o', join(dir, 'x.vlc'), '--device', 'cuda', '--anchors', '4', '--iters', '3');
      expect(r.code).toBe(3);
      // Asynchronous failures surface at the next sync: the message lists the kernels in flight.
      expect(r.err).toMatch(new RegExp(`GPU kernel failed during (kernel |one of the kernels [^(]*)${kernel}.*CUDA_ERROR_LAUNCH_FAILED: unspecified launch failure`));
      expect(fake.live).toBe(0);
      onlyInputLeft();
    });
  }
});

describe('vlc test-cuda without a GPU', () => {
  it('runs the CPU half, prints its figures, exits 3 saying why', async () => {
    const r = await vlc(fakeWith({ initStatus: 100 }), 'test-cuda', '--json');
    expect(r.code).toBe(3);
    const rep = JSON.parse(r.out);
    expect(rep.cpu.iterations).toBeGreaterThan(0);
    expect(rep.cpu.energy).toBeGreaterThan(0);
    expect(rep.cpu.seed_ratio).toBeCloseTo((32 * 64 * 2 + 1000 * 4) / (1000 * 64 * 4), 10);
    expect(rep).toMatchObject({ schema: 1, command: 'test-cuda', cuda: null, pass: null });
    expect(rep.cuda_unavailable).toMatch(/no CUDA device/);
    expect(r.err).toMatch(/CUDA half not run: no CUDA device/);
  });

  it('hints name only options it has: no --device cpu (test-cuda has no --device), the driver advice kept', async () => {
    const r = await vlc(fakeWith({ moduleStatus: 222, driverVersion: 12040 }), 'test-cuda');
    expect(r.code).toBe(3);
    expect(r.out + r.err).toMatch(/need a newer NVIDIA driver/);
    expect(r.out + r.err).not.toMatch(/--device/);
    const d = await vlc(new DriverLoadError('libcuda.so.1 could not be loaded (not found)'), 'devices');
    expect(d.err).toMatch(/install the NVIDIA driver$/m);
    expect(d.err).not.toMatch(/--device/);
  });

  it('with the fake GPU: both halves, parity passes', async () => {
    const r = await vlc(fakeWith({}), 'test-cuda');
    expect(r.code).toBe(0);
    expect(r.out).toMatch(/parity: PASS/);
    expect(r.out).toMatch(/^cuda .*Fake GPU/m);
    const j = JSON.parse((await vlc(fakeWith({}), 'test-cuda', '--json')).out);
    expect(j.pass).toBe(true);
    expect(checkJson('test-cuda', j)).toEqual([]);
  }, 60_000);
});
