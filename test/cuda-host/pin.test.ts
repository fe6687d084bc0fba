// Uploads through page-locked pieces of the host's own buffer (src/backend/cuda/pin.ts), on the
// fake driver, which reads a locked source when the copy runs (as DMA does), refuses to lock a
// page twice, and fails a copy whose pages were unlocked before it ran: the device gets every byte
// of the source, with pieces, gaps and odd sizes; two GPUs uploading the two halves of one buffer
// (meeting inside a page) both lock; a driver that refuses to lock still gets the bytes there,
// from pageable memory; nothing stays locked.
import { afterEach, describe, expect, it } from 'vitest';
import { setDriverForTests } from '../../dist/backend/cuda/driver.js';
import { createCudaBackend } from '../../dist/backend/cuda/index.js';
import { PIN_GAP, downloadLarge, uploadLarge } from '../../dist/backend/cuda/pin.js';
import { FakeCuda } from './fake-driver.js';
import { rng } from '../rng.js';

afterEach(() => setDriverForTests(undefined));

const GPU = { name: 'Fake GPU', cc: [9, 0] as [number, number], sms: 4, memBytes: 2 ** 30 };

function randomBytes(n: number, seed: number): Uint8Array {
  const r = rng(seed);
  return Uint8Array.from({ length: n }, () => Math.floor(r() * 256));
}

describe('uploadLarge (page-locked pieces)', () => {
  it('puts every byte on the device and back, at the offset, for odd sizes and several pieces', async () => {
    const fake = new FakeCuda({ devices: [GPU] });
    setDriverForTests(fake.api);
    const b = await createCudaBackend(0, {});
    const piece = 4 * PIN_GAP + 12_345;
    for (const [bytes, at] of [[3 * piece + 777, 0], [piece - 1, 13], [PIN_GAP - 5, 3], [1, 0]] as const) {
      const src = randomBytes(bytes, bytes);
      const buf = b.ctx.pool.alloc('t', bytes + at);
      await uploadLarge(b.ctx, buf, src, at, piece);
      const back = new Uint8Array(bytes);
      b.ctx.download(back, buf, at);
      expect(Buffer.compare(back, src)).toBe(0);
      const down = new Uint8Array(bytes).fill(0xa5); // poisoned: every byte must be written
      await downloadLarge(b.ctx, down, buf, at, piece);
      expect(Buffer.compare(down, src)).toBe(0);
      b.ctx.pool.free(buf);
    }
    expect(fake.registrations).toBeGreaterThanOrEqual(8); // the first input's pieces were locked both ways, not copied from pageable memory
    expect(fake.lockedRanges).toBe(0);
    expect(b.ctx.pinCopies).toBe(true);
    await b.close();
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
      const back = new Uint8Array(halves[k].byteLength);
      g[k].ctx.download(back, bufs[k]);
      expect(Buffer.compare(back, halves[k])).toBe(0);
      expect(g[k].ctx.pinCopies).toBe(true); // no lock was refused
    }
    expect(fake.registrations).toBe(5); // 2 + 3 pieces with a locked body
    expect(fake.lockedRanges).toBe(0);
    for (const x of g) await x.close();
  });

  it('a driver that refuses to lock still gets the bytes there, and is not asked again', async () => {
    const fake = new FakeCuda({ devices: [GPU] });
    fake.registerStatus = 2;
    setDriverForTests(fake.api);
    const b = await createCudaBackend(0, {});
    const src = randomBytes(5 * PIN_GAP + 3, 3);
    const buf = b.ctx.pool.alloc('t', src.byteLength);
    await uploadLarge(b.ctx, buf, src, 0, 2 * PIN_GAP);
    const back = new Uint8Array(src.byteLength);
    b.ctx.download(back, buf);
    expect(Buffer.compare(back, src)).toBe(0);
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
    const back = new Uint8Array(src.byteLength);
    b.ctx.download(back, buf);
    expect(Buffer.compare(back, src)).toBe(0);
    expect(fake.registrations).toBe(0);
    await b.close();
  });
});
