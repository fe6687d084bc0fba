// Uploads through page-locked pieces of the host's own buffer (src/backend/cuda/pin.ts), on the
// fake driver, which reads a locked source when the copy runs (as DMA does), refuses to lock a
// page twice, and fails a copy whose pages were unlocked before it ran: the device gets every byte
// of the source, with pieces, gaps and odd sizes; what is locked stays locked until its context
// closes, so the same rows uploaded again (by any GPU) lock nothing more; two GPUs uploading the
// two halves of one buffer (meeting inside a page) both lock; a driver that refuses to lock still
// gets the bytes there, from pageable memory; nothing stays locked after close.
import { afterEach, describe, expect, it } from 'vitest';
import { setDriverForTests } from '../../dist/backend/cuda/driver.js';
import { createCudaBackend } from '../../dist/backend/cuda/index.js';
import { PIN_GAP, downloadLarge, lockedBytes, passRuns, unlockWhileWaiting, uploadLarge } from '../../dist/backend/cuda/pin.js';
import type { CudaContext } from '../../dist/backend/cuda/context.js';
import type { DeviceBuffer } from '../../dist/backend/cuda/pool.js';
import { FakeCuda } from './fake-driver.js';
import { rng } from '../rng.js';

afterEach(() => setDriverForTests(undefined));

const GPU = { name: 'Fake GPU', cc: [9, 0] as [number, number], sms: 4, memBytes: 2 ** 30 };

function randomBytes(n: number, seed: number, shared = false): Uint8Array {
  const r = rng(seed);
  const out = new Uint8Array(shared ? new SharedArrayBuffer(n) : new ArrayBuffer(n));
  for (let i = 0; i < n; i++) out[i] = Math.floor(r() * 256);
  return out;
}

function expectOnDevice(ctx: CudaContext, buf: DeviceBuffer, src: Uint8Array, at = 0): void {
  const back = new Uint8Array(src.byteLength);
  ctx.download(back, buf, at);
  expect(Buffer.compare(back, src)).toBe(0);
}

describe('uploadLarge (page-locked pieces)', () => {
  it('puts every byte on the device, at the offset, for odd sizes and several pieces', async () => {
    const fake = new FakeCuda({ devices: [GPU] });
    setDriverForTests(fake.api);
    const b = await createCudaBackend(0, {});
    const piece = 4 * PIN_GAP + 12_345;
    for (const [bytes, at] of [[3 * piece + 777, 0], [piece - 1, 13], [PIN_GAP - 5, 3], [1, 0]] as const) {
      const src = randomBytes(bytes, bytes);
      const buf = b.ctx.pool.alloc('t', bytes + at);
      await uploadLarge(b.ctx, buf, src, at, piece);
      expectOnDevice(b.ctx, buf, src, at);
      b.ctx.pool.free(buf);
    }
    expect(fake.registrations).toBeGreaterThanOrEqual(4); // the first input's pieces were locked, not copied from pageable memory
    expect(b.ctx.pinCopies).toBe(true);
    await b.close();
    expect(fake.lockedRanges).toBe(0);
    expect(lockedBytes()).toBe(0);
  });

  it('rows uploaded again, by another GPU too, lock nothing more; a range overlapping them locks only what is new', async () => {
    const fake = new FakeCuda({ devices: [GPU, GPU] });
    setDriverForTests(fake.api);
    const g = [await createCudaBackend(0, {}), await createCudaBackend(1, {})];
    const piece = 3 * PIN_GAP + 999;
    const all = randomBytes(11 * PIN_GAP + 4_321, 9, true);
    const half = all.subarray(0, 6 * PIN_GAP + 77);
    const b0 = g[0].ctx.pool.alloc('half', half.byteLength);
    await uploadLarge(g[0].ctx, b0, half, 0, piece);
    const after = fake.registrations;
    expect(after).toBeGreaterThan(0);
    const b1 = g[1].ctx.pool.alloc('half again', half.byteLength);
    await uploadLarge(g[1].ctx, b1, half, 0, piece); // the residual encoder's upload of rows an engine locked
    expect(fake.registrations).toBe(after);
    expectOnDevice(g[1].ctx, b1, half);
    const b2 = g[1].ctx.pool.alloc('all', all.byteLength);
    await uploadLarge(g[1].ctx, b2, all, 0, piece);
    expect(fake.registrations).toBeGreaterThan(after); // the second half was locked now
    expect(g[1].ctx.pinCopies).toBe(true); // and no lock was refused (none overlapped a page)
    expectOnDevice(g[1].ctx, b2, all);
    for (const x of g) await x.close();
    expect(fake.lockedRanges).toBe(0);
  });

  it('two GPUs upload the halves of one buffer at once, meeting inside a page: both lock', async () => {
    const fake = new FakeCuda({ devices: [GPU, GPU] });
    setDriverForTests(fake.api);
    const g = [await createCudaBackend(0, {}), await createCudaBackend(1, {})];
    const src = randomBytes(9 * PIN_GAP + 4_099, 7);
    const cut = 4 * PIN_GAP + 2_050; // not on a page boundary
    const halves = [src.subarray(0, cut), src.subarray(cut)];
    const bufs = halves.map((h, k) => g[k].ctx.pool.alloc('half', h.byteLength));
    await Promise.all(halves.map((h, k) => uploadLarge(g[k].ctx, bufs[k], h, 0, 2 * PIN_GAP + 1)));
    for (let k = 0; k < 2; k++) {
      expectOnDevice(g[k].ctx, bufs[k], halves[k]);
      expect(g[k].ctx.pinCopies).toBe(true); // no lock was refused
    }
    expect(fake.registrations).toBeGreaterThanOrEqual(4);
    for (const x of g) await x.close();
    expect(fake.lockedRanges).toBe(0);
  });

  it('a driver that refuses to lock still gets the bytes there, and is not asked again', async () => {
    const fake = new FakeCuda({ devices: [GPU] });
    fake.registerStatus = 2;
    setDriverForTests(fake.api);
    const b = await createCudaBackend(0, {});
    const src = randomBytes(5 * PIN_GAP + 3, 3);
    const buf = b.ctx.pool.alloc('t', src.byteLength);
    await uploadLarge(b.ctx, buf, src, 0, 2 * PIN_GAP);
    expectOnDevice(b.ctx, buf, src);
    expect(b.ctx.pinCopies).toBe(false);
    expect(fake.registrations).toBe(0);
    await b.close();
  });

  it('VLC_CUDA_PIN=0 copies from pageable memory', async () => {
    const fake = new FakeCuda({ devices: [GPU] });
    setDriverForTests(fake.api);
    const b = await createCudaBackend(0, { pinCopies: false });
    const src = randomBytes(5 * PIN_GAP + 3, 5);
    const buf = b.ctx.pool.alloc('t', src.byteLength);
    await uploadLarge(b.ctx, buf, src, 0, 2 * PIN_GAP);
    expectOnDevice(b.ctx, buf, src);
    expect(fake.registrations).toBe(0);
    await b.close();
  });
});

describe('downloadLarge (into page-locked pieces of the host buffer)', () => {
  /** A device buffer holding `bytes` (uploaded plainly). */
  function onDevice(ctx: CudaContext, bytes: Uint8Array): DeviceBuffer {
    const buf = ctx.pool.alloc('codes', bytes.byteLength);
    ctx.upload(buf, bytes);
    return buf;
  }

  it('brings every byte back, from the offset, for odd sizes and several pieces, locking its own pages', async () => {
    const fake = new FakeCuda({ devices: [GPU] });
    setDriverForTests(fake.api);
    const b = await createCudaBackend(0, {});
    const piece = 4 * PIN_GAP + 12_345;
    for (const [bytes, at] of [[3 * piece + 777, 0], [piece - 1, 13], [PIN_GAP - 5, 3]] as const) {
      const src = randomBytes(bytes + at, bytes);
      const buf = onDevice(b.ctx, src);
      const dst = new Uint8Array(new SharedArrayBuffer(bytes + 9)).subarray(5, 5 + bytes).fill(0xee); // poisoned
      expect(await downloadLarge(b.ctx, dst, buf, at, piece)).toBe(true);
      expect(Buffer.compare(dst, src.subarray(at))).toBe(0);
      b.ctx.pool.free(buf);
    }
    expect(fake.registrations).toBeGreaterThanOrEqual(4);
    expect(b.ctx.pinCopies).toBe(true); // no lock refused
    await b.close();
    expect(fake.lockedRanges).toBe(0);
    expect(lockedBytes()).toBe(0);
  });

  it('two GPUs bring back the halves of one buffer, meeting inside a page: both lock, no lock refused', async () => {
    const fake = new FakeCuda({ devices: [GPU, GPU] });
    setDriverForTests(fake.api);
    const g = [await createCudaBackend(0, {}), await createCudaBackend(1, {})];
    const src = randomBytes(9 * PIN_GAP + 4_099, 8);
    const cut = 4 * PIN_GAP + 2_050;
    const dst = new Uint8Array(new SharedArrayBuffer(src.byteLength));
    const halves = [[0, cut], [cut, src.byteLength]];
    const bufs = halves.map(([a, b], k) => onDevice(g[k].ctx, src.subarray(a, b)));
    await Promise.all(halves.map(([a, b], k) => downloadLarge(g[k].ctx, dst.subarray(a, b), bufs[k], 0, 2 * PIN_GAP + 1)));
    expect(Buffer.compare(dst, src)).toBe(0);
    for (const x of g) expect(x.ctx.pinCopies).toBe(true);
    expect(fake.registrations).toBeGreaterThanOrEqual(4);
    for (const x of g) await x.close();
    expect(fake.lockedRanges).toBe(0);
  });

  it('a driver that refuses to lock still brings the bytes back; a context that does not lock leaves the copy to the caller', async () => {
    const fake = new FakeCuda({ devices: [GPU] });
    fake.registerStatus = 2;
    setDriverForTests(fake.api);
    const b = await createCudaBackend(0, {});
    const src = randomBytes(5 * PIN_GAP + 3, 4);
    const buf = onDevice(b.ctx, src);
    const dst = new Uint8Array(src.byteLength);
    expect(await downloadLarge(b.ctx, dst, buf, 0, 2 * PIN_GAP)).toBe(true);
    expect(Buffer.compare(dst, src)).toBe(0);
    expect(b.ctx.pinCopies).toBe(false);
    expect(await downloadLarge(b.ctx, new Uint8Array(src.byteLength), buf, 0, 2 * PIN_GAP)).toBe(false);
    await b.close();
  });
});

describe('rows uploaded once (Backend.rowsUploadedOnce): their locks go once passes run over them', () => {
  it('unlocks them in the waits of passes, after the resident upload; the engine still runs; a later upload locks again; others stay locked until close', async () => {
    const { datasetFromF32 } = await import('../../dist/vectors/dataset.js');
    const fake = new FakeCuda({ devices: [GPU] });
    setDriverForTests(fake.api);
    const b = await createCudaBackend(0, {});
    const n = 9001, d = 17, m = 13;
    const r = rng(4);
    const once = datasetFromF32(Float32Array.from({ length: n * d }, () => r() * 10), n, d);
    const kept = datasetFromF32(Float32Array.from({ length: n * d }, () => r() * 10), n, d);
    b.rowsUploadedOnce(once);
    const e1 = await b.open(once, m);
    const locked = fake.registrations;
    expect(locked).toBeGreaterThan(0); // the upload was page-locked
    expect(lockedBytes()).toBeGreaterThan(0); // marked, not yet released
    expect(unlockWhileWaiting(0)).toBeLessThan(1_000); // no time to spend: at most the piece it started
    unlockWhileWaiting(10_000); // before any pass: nothing (opening's and init's waits are short)
    expect(lockedBytes()).toBeGreaterThan(0);
    passRuns(); // a pass begins (pass.ts iterate)
    unlockWhileWaiting(10_000); // what CudaContext.wait does in a pass's long wait
    expect(lockedBytes()).toBe(0);
    expect(fake.lockedRanges).toBe(0);
    const e2 = await b.open(kept, m);
    await e1.setAnchors(Float32Array.from({ length: m * d }, () => r() * 10));
    const fin = await e1.finalize();
    expect(Number.isFinite(fin.energy)).toBe(true);
    expect(lockedBytes()).toBeGreaterThan(0); // kept's rows stay locked (they may be uploaded again)
    const bytes = new Uint8Array(once.buffer, once.byteOffset, n * d * 4);
    const buf = b.ctx.pool.alloc('again', bytes.byteLength);
    await uploadLarge(b.ctx, buf, bytes); // locks once's rows again: slower, never wrong
    expectOnDevice(b.ctx, buf, bytes);
    expect(fake.registrations).toBeGreaterThan(locked + 1);
    await e1.dispose();
    await e2.dispose();
    await b.close();
    expect(fake.lockedRanges).toBe(0);
    expect(lockedBytes()).toBe(0);
  });
});

describe('uploadsOver: the locks go on a thread while the host measures and writes', () => {
  it('unlocks every lock of the context on a thread, one after another; close waits for them; an upload after it locks again', async () => {
    const { datasetFromF32 } = await import('../../dist/vectors/dataset.js');
    const fake = new FakeCuda({ devices: [GPU], threadUnlocks: true });
    setDriverForTests(fake.api);
    const b = await createCudaBackend(0, {});
    const n = 7001, d = 13, m = 11;
    const r = rng(9);
    const once = datasetFromF32(Float32Array.from({ length: n * d }, () => r() * 10), n, d);
    const kept = datasetFromF32(Float32Array.from({ length: n * d }, () => r() * 10), n, d);
    b.rowsUploadedOnce(once);
    const e1 = await b.open(once, m);
    const e2 = await b.open(kept, m);
    await e1.setAnchors(Float32Array.from({ length: m * d }, () => r() * 10));
    const fin = await e1.finalize();
    expect(Number.isFinite(fin.energy)).toBe(true);
    const locked = fake.registrations;
    expect(locked).toBeGreaterThan(1);
    expect(fake.threadUnlocks).toBe(0);
    b.uploadsOver();
    expect(lockedBytes(), 'handed to the thread at once').toBe(0);
    expect(fake.lockedRanges, 'but not unlocked on this turn').toBe(locked);
    // The same rows uploaded again: the upload waits for the unlocks, then locks anew (the fake refuses a page locked twice).
    const bytes = new Uint8Array(kept.buffer, kept.byteOffset, n * d * 4);
    const buf = b.ctx.pool.alloc('again', bytes.byteLength);
    await uploadLarge(b.ctx, buf, bytes);
    expectOnDevice(b.ctx, buf, bytes);
    expect(fake.threadUnlocks, 'every lock, of both buffers, on the thread').toBe(locked);
    expect(fake.registrations).toBeGreaterThan(locked);
    b.uploadsOver(); // the new locks too
    const atRelease: number[] = [];
    const release = fake.api.cuDevicePrimaryCtxRelease_v2;
    fake.api.cuDevicePrimaryCtxRelease_v2 = (dev: number) => (atRelease.push(fake.lockedRanges), release(dev));
    await e1.dispose();
    await e2.dispose();
    await b.close();
    expect(atRelease, 'all unlocked before the context was released').toEqual([0]);
    expect(fake.threadUnlocks).toBe(fake.registrations);
    expect(lockedBytes()).toBe(0);
  });

  it('a refused or failing unlock on the thread leaves the rest to go on and close to succeed; a driver without the thread call keeps the locks for close', async () => {
    const { datasetFromF32 } = await import('../../dist/vectors/dataset.js');
    for (const o of [{ threadUnlocks: true, threadUnlockStatus: 1 }, { threadUnlocks: true, threadUnlockThrows: true }, {}]) {
      const fake = new FakeCuda({ devices: [GPU], ...o });
      setDriverForTests(fake.api);
      const b = await createCudaBackend(0, {});
      const r = rng(10);
      const ds = datasetFromF32(Float32Array.from({ length: 3001 * 7 }, () => r() * 10), 3001, 7);
      const e = await b.open(ds, 5);
      b.uploadsOver();
      await e.dispose();
      await b.close(); // no throw: a failed unlock costs others memory, never a wrong byte
      expect(fake.threadUnlocks).toBe(0);
      expect(lockedBytes()).toBe(0);
      if (!o.threadUnlocks) expect(fake.lockedRanges, 'unlocked at close').toBe(0);
    }
  });
});
