// Shared by the .vlc format suites: the one-line error a damaged file gives, and the two exhaustive
// damage checks (every single-byte flip, every truncation) that any valid file must fail.
import { expect } from 'vitest';
import { decodeVlc } from '../../dist/io/vlc/format.js';
import { UsageError } from '../../dist/errors.js';

/** Error message of decodeVlc on these bytes (fails the test if it decodes). */
export function decodeError(bytes: Uint8Array): string {
  try {
    decodeVlc(bytes, 'x.vlc');
  } catch (e) {
    expect(e).toBeInstanceOf(UsageError);
    return (e as Error).message;
  }
  throw new Error('decoded a damaged file without complaint');
}

/** Flipping bits `mask` of any single byte anywhere is an error: never a silent wrong decode. */
export function expectEveryFlipFails(good: Uint8Array, mask: number): void {
  for (let i = 0; i < good.length; i++) {
    const bad = good.slice();
    bad[i] ^= mask;
    expect(() => decodeVlc(bad, 'x.vlc'), `byte ${i}`).toThrow(UsageError);
  }
}

/** A cut at any length is an error that says so. */
export function expectEveryCutFails(good: Uint8Array): void {
  for (let len = 1; len < good.length; len++) expect(decodeError(good.subarray(0, len)), `length ${len}`).toMatch(/truncated|padding/);
}
