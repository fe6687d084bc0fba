// io/prefault.ts: the buffer touched in the background is the one handed out for its size (once),
// any other size gets a fresh buffer, and small sizes start no thread.
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

  it('small sizes are not worth a thread: a fresh buffer', () => {
    prefaultShared(1024);
    expect(takeShared(1024).byteLength).toBe(1024);
  });
});
