// io/prefault.ts: the buffer touched in the background is the one handed out for its size (once),
// any other size gets a fresh buffer, and small sizes start no thread; what the taker writes while
// the threads still touch the pages stays written (a touch never changes a byte).
import { describe, expect, it } from 'vitest';
import { prefaultShared, takeShared } from '../../dist/io/prefault.js';

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
});
