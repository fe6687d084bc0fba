// io/prefault.ts: the buffer touched in the background is the one handed out for its size (once),
// any other size gets a fresh buffer, and small sizes start no thread; what the taker writes while
// the threads still touch the pages stays written (a touch never changes a byte). Buffers touched
// ahead for a stream of takers (prefaultAhead) are handed out in turn, `depth` at most waiting,
// no more than asked for, and let go when stopped.
import { describe, expect, it } from 'vitest';
import { aheadForTests, prefaultAhead, prefaultShared, takeShared } from '../../dist/io/prefault.js';

describe('prefaulted shared memory', () => {
  it('hands the touched buffer to the first taker of its size, a fresh one otherwise', async () => {
    const bytes = 16 << 20;
    prefaultShared(bytes);
    const first = takeShared(bytes);
    expect(first.byteLength).toBe(bytes);
    new Uint8Array(first)[bytes - 1] = 5; // usable at once, whether or not the thread is done
    const second = takeShared(bytes);
    expect(second).not.toBe(first); // taken once
    expect(new Uint8Array(second)[bytes - 1]).toBe(0);
    prefaultShared(bytes);
    expect(takeShared(bytes + 1).byteLength).toBe(bytes + 1); // another size: fresh, and the prefaulted one is dropped
    expect(takeShared(bytes)).not.toBe(first);
  });

  it('bytes written at once, before the touching threads reach their pages, are kept', async () => {
    const bytes = (48 << 20) + 4_099; // several threads' shares, not a whole number of pages
    prefaultShared(bytes);
    const b = new Uint8Array(takeShared(bytes));
    for (let at = 0; at < bytes; at += 4096) b[at] = (at >>> 12) % 251 + 1; // the bytes a touch would hit first
    b[bytes - 1] = 7;
    await new Promise((r) => setTimeout(r, 1500)); // the threads are done by now
    let wrong = 0;
    for (let at = 0; at < bytes; at += 4096) if (b[at] !== (at >>> 12) % 251 + 1) wrong++;
    expect(wrong).toBe(0);
    expect(b[bytes - 1]).toBe(7);
  });

  it('small sizes are not worth a thread: a fresh buffer', () => {
    prefaultShared(1024);
    expect(takeShared(1024).byteLength).toBe(1024);
  });

  it('buffers touched ahead for takers one after another: depth at a time, count in all, let go when stopped', () => {
    const bytes = 16 << 20;
    const stop = prefaultAhead(bytes, 3, 2);
    expect(aheadForTests()).toEqual({ queued: 2, left: 3 });
    const got = [takeShared(bytes), takeShared(bytes)];
    expect(aheadForTests()).toEqual({ queued: 1, left: 1 }); // the third made while the second was taken, no fourth
    got.push(takeShared(bytes));
    expect(aheadForTests()).toEqual({ queued: 0, left: 0 });
    expect(new Set(got).size).toBe(3);
    for (const b of got) expect([b.byteLength, new Uint8Array(b)[bytes - 1]]).toEqual([bytes, 0]);
    expect(takeShared(bytes + 8).byteLength).toBe(bytes + 8); // another size: fresh, the stream untouched
    stop();
    expect(aheadForTests()).toBeUndefined();
    const stopOld = prefaultAhead(bytes, 5, 2);
    const stopNew = prefaultAhead(bytes, 4, 1);
    stopOld(); // an earlier stream's stop leaves the later one running
    expect(aheadForTests()).toEqual({ queued: 1, left: 4 });
    stopNew();
    expect(aheadForTests()).toBeUndefined();
    prefaultAhead(1024, 4, 2)(); // small sizes: nothing ahead
    expect(aheadForTests()).toBeUndefined();
  });
});
