// Large vector stores are advised onto huge pages (src/vectors/huge-pages.ts): the kernel must have
// recorded the advice on the store's mapping (VmFlags "hg" in /proc/self/smaps), the store reads and
// writes as any other, small stores are left alone, and VLC_HUGE_PAGES=0 turns the advice off.
import { execFileSync } from 'node:child_process';
import { existsSync, readFileSync } from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';
import { allocStore } from '../../dist/vectors/dataset.js';
import { adviseHugePages, hugePageBytes, HUGE_PAGE_MIN_BYTES, smapsHugeBytes } from '../../dist/vectors/huge-pages.js';

const THP = '/sys/kernel/mm/transparent_hugepage/enabled';
const offered = process.platform === 'linux' && existsSync(THP) && !/\[never\]/.test(readFileSync(THP, 'utf8'));

/** Sizes (bytes) of this process's mappings the kernel marks as advised for huge pages. */
function advisedMappings(): number[] {
  const out: number[] = [];
  let size = 0;
  for (const line of readFileSync('/proc/self/smaps', 'utf8').split('\n')) {
    const m = /^Size:\s+(\d+) kB/.exec(line);
    if (m) size = Number(m[1]) * 1024;
    if (line.startsWith('VmFlags:') && line.split(/\s+/).includes('hg')) out.push(size);
  }
  return out;
}

describe('huge pages for large vector stores', () => {
  it('leaves a store below the threshold alone', () => {
    expect(adviseHugePages(new SharedArrayBuffer(1 << 20))).toBe(false);
  });

  it.runIf(offered)('advises a large store, whose mapping the kernel then marks, and whose bytes behave as any', () => {
    // The advice covers the store's whole 2 MiB pages: its own mapping, up to 4 MiB short of the store.
    const big = (sizes: number[]) => sizes.filter((b) => b >= HUGE_PAGE_MIN_BYTES - 4 * 2 ** 20).length;
    const before = big(advisedMappings());
    const s = allocStore(HUGE_PAGE_MIN_BYTES / 4 + 4099, 1, 'f32'); // not a multiple of anything
    const after = big(advisedMappings());
    expect(after).toBe(before + 1);
    const v = new Float32Array(s.buffer);
    expect(v[v.length - 1]).toBe(0);
    v[12345] = 1.5;
    v[v.length - 1] = -2;
    expect([v[12345], v[v.length - 1], v[12346]]).toEqual([1.5, -2, 0]);
  });

  it('counts the 2 MiB pages of the mappings a range spans (smaps text)', () => {
    const smaps = [
      '7f0000000000-7f0000200000 rw-p 00000000 00:00 0',
      'Size:               2048 kB',
      'AnonHugePages:      2048 kB',
      '7f0000200000-7f0040200000 rw-s 00000000 00:01 5                          /dev/zero (deleted)',
      'Size:            1048576 kB',
      'AnonHugePages:    917504 kB',
      'VmFlags: rd wr sh mr mw me ms sd hg',
      '7f0040200000-7f0040400000 rw-p 00000000 00:00 0',
      'AnonHugePages:      2048 kB',
    ].join('\n');
    const MiB = 2n ** 20n, base = 0x7f0000200000n;
    expect(smapsHugeBytes(smaps, base + 1n, base + 100n * MiB)).toBe(917504 * 1024); // inside the middle mapping only
    expect(smapsHugeBytes(smaps, base - 1n, base + 1n)).toBe((2048 + 917504) * 1024); // across the first two
    expect(smapsHugeBytes(smaps, base + 1024n * MiB, base + 1026n * MiB)).toBe(2048 * 1024); // the third
    expect(smapsHugeBytes(smaps, 0x1000n, 0x2000n)).toBe(0); // none
  });

  it.runIf(offered)('says how much of a large written store is on 2 MiB pages: between none and all of it', () => {
    const s = allocStore(HUGE_PAGE_MIN_BYTES / 4 + 4099, 1, 'f32');
    new Float32Array(s.buffer).fill(1);
    const huge = hugePageBytes(s.buffer);
    expect(huge).toBeGreaterThanOrEqual(0);
    expect(huge).toBeLessThanOrEqual(s.buffer.byteLength + 4 * 2 ** 20); // its mapping's pages, rounded to whole 2 MiB ones
  });

  it('does not read smaps for a buffer too small to have been advised', () => {
    expect(hugePageBytes(new SharedArrayBuffer(HUGE_PAGE_MIN_BYTES - 1))).toBeUndefined();
  });

  it.runIf(offered)('is off under VLC_HUGE_PAGES=0', () => {
    const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../..');
    const script = `import('${path.join(root, 'dist/vectors/huge-pages.js')}').then((m) => process.stdout.write(String(m.adviseHugePages(new SharedArrayBuffer(${HUGE_PAGE_MIN_BYTES})))))`;
    const run = (v: string) => execFileSync(process.execPath, ['-e', script], { env: { ...process.env, VLC_HUGE_PAGES: v }, encoding: 'utf8' });
    expect(run('0')).toBe('false');
    expect(run('1')).toBe('true');
  });
});
