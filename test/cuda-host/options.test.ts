// The CUDA backend's switches (src/backend/cuda/options.ts): the defaults, the VLC_CUDA_*
// variables read once into an options object, and a bad or unknown variable as a usage error
// (exit 2, one line naming the variable and what it accepts) — also through the real CLI, in a
// child process given the variable (this process's environment is never changed).
import { describe, expect, it } from 'vitest';
import { spawnSync } from 'node:child_process';
import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { CUDA_DEFAULTS, cudaOptions, cudaOptionsFromEnv } from '../../dist/backend/cuda/options.js';
import { npyHeader } from '../../dist/io/writers/npy.js';
import { screenKernel } from '../../dist/backend/cuda/screen.js';

function usage(env: Record<string, string>): string {
  try {
    cudaOptionsFromEnv(env);
  } catch (e) {
    expect((e as { exitCode: number }).exitCode).toBe(2);
    return (e as Error).message;
  }
  throw new Error('no usage error');
}

describe('CUDA options', () => {
  it('defaults: screen where it pays, on tensor cores, all free memory, resident', () => {
    expect(cudaOptionsFromEnv({})).toEqual({ screen: 'auto', wgmma: true, screenKeys: 'auto', reduce: 'sorted', maxDeviceBytes: undefined, tileRows: undefined, stagingBytes: 64 * 2 ** 20, machineCode: true, pinCopies: true });
    expect(cudaOptionsFromEnv({ PATH: '/bin', VLC_CUDA_LIB: '/x/libcuda.so.1', VLC_CUDA_WGMMA: '' })).toEqual(CUDA_DEFAULTS);
  });

  it('each variable, each accepted value', () => {
    expect(cudaOptionsFromEnv({ VLC_CUDA_SCREEN: '0' }).screen).toBe(false);
    expect(cudaOptionsFromEnv({ VLC_CUDA_SCREEN: '1' }).screen).toBe(true);
    expect(cudaOptionsFromEnv({ VLC_CUDA_SCREEN: 'auto' }).screen).toBe('auto');
    expect(cudaOptionsFromEnv({ VLC_CUDA_WGMMA: '0' }).wgmma).toBe(false);
    expect(cudaOptionsFromEnv({ VLC_CUDA_WGMMA: ' 1 ' }).wgmma).toBe(true);
    expect(cudaOptionsFromEnv({ VLC_CUDA_SCREEN_KEYS: '3' }).screenKeys).toBe(3);
    expect(cudaOptionsFromEnv({ VLC_CUDA_SCREEN_KEYS: 'auto' }).screenKeys).toBe('auto');
    expect(cudaOptionsFromEnv({ VLC_CUDA_REDUCE: 'atomic' }).reduce).toBe('atomic');
    expect(cudaOptionsFromEnv({ VLC_CUDA_REDUCE: 'sorted' }).reduce).toBe('sorted');
    expect(cudaOptionsFromEnv({ VLC_CUDA_MAX_BYTES: '123' }).maxDeviceBytes).toBe(123);
    expect(cudaOptionsFromEnv({ VLC_CUDA_MAX_BYTES: '400K' }).maxDeviceBytes).toBe(400 * 1024);
    expect(cudaOptionsFromEnv({ VLC_CUDA_MAX_BYTES: '1.5GiB' }).maxDeviceBytes).toBe(1.5 * 2 ** 30);
    expect(cudaOptionsFromEnv({ VLC_CUDA_MAX_BYTES: '6g' }).maxDeviceBytes).toBe(6 * 2 ** 30);
  });

  it('a bad value names the variable and what it accepts (exit 2)', () => {
    expect(usage({ VLC_CUDA_WGMMA: 'false' })).toBe('VLC_CUDA_WGMMA=false: expected 0 or 1');
    expect(usage({ VLC_CUDA_SCREEN_KEYS: '4' })).toBe('VLC_CUDA_SCREEN_KEYS=4: expected 2, 3, 8 or auto');
    expect(usage({ VLC_CUDA_REDUCE: 'sort' })).toBe('VLC_CUDA_REDUCE=sort: expected sorted or atomic');
    expect(usage({ VLC_CUDA_SCREEN: 'yes' })).toBe('VLC_CUDA_SCREEN=yes: expected 0, 1 or auto');
    expect(usage({ VLC_CUDA_MAX_BYTES: 'lots' })).toBe('VLC_CUDA_MAX_BYTES=lots: expected a number of bytes, optionally with K, M, G or T (e.g. 6G)');
  });

  it('a variable that is no setting (a typo, or a switch whose experiment is over) is a usage error', () => {
    expect(usage({ VLC_CUDA_TILE: 'p8' })).toBe(
      'VLC_CUDA_TILE is not a setting of vlc; the CUDA backend reads VLC_CUDA_SCREEN, VLC_CUDA_WGMMA, VLC_CUDA_SCREEN_KEYS, VLC_CUDA_REDUCE, VLC_CUDA_MAX_BYTES, VLC_CUDA_CUBIN, VLC_CUDA_PIN, VLC_CUDA_LIB',
    );
    expect(usage({ VLC_CUDA_ASSIGN: 'occ2' })).toMatch(/^VLC_CUDA_ASSIGN is not a setting/);
    expect(usage({ VLC_CUDA_SCEEN: '0' })).toMatch(/^VLC_CUDA_SCEEN is not a setting/);
  });

  it('the screen kernel: portable without Hopper, streamed past dp 256, overlapped halves to 192, keys per lane by workload or by choice', () => {
    const o = cudaOptions();
    expect(screenKernel(128, 2048, o, false)).toBe('screen_h');
    expect(screenKernel(384, 1024, o, true)).toBe('screen_h90');
    expect(screenKernel(256, 20000, o, true)).toBe('screen_h90m');
    expect(screenKernel(256, 100, cudaOptions({ screenKeys: 2 }), true)).toBe('screen_h90m');
    expect(screenKernel(128, 2048, o, true)).toBe('screen_h90mo_k2');
    expect(screenKernel(192, 2048, o, true)).toBe('screen_h90mo');
    expect(screenKernel(128, 20000, o, true)).toBe('screen_h90mo');
    expect(screenKernel(192, 20000, cudaOptions({ screenKeys: 3 }), true)).toBe('screen_h90mo_k3');
    expect(screenKernel(64, 100, cudaOptions({ screenKeys: 8 }), true)).toBe('screen_h90mo');
    expect(() => cudaOptions({ screenKeys: 4 as 3 })).toThrow(/screenKeys must be 'auto', 2, 3 or 8, got 4/);
  });

  it('options from code are validated too', () => {
    expect(cudaOptions({ tileRows: 512, screen: false })).toMatchObject({ tileRows: 512, screen: false, wgmma: true });
    expect(() => cudaOptions({ tileRows: 100 })).toThrow(/tileRows must be a positive multiple of 256, got 100/);
    expect(() => cudaOptions({ maxDeviceBytes: -1 })).toThrow(/maxDeviceBytes/);
    expect(() => cudaOptions({ screen: 'sometimes' as never })).toThrow(/screen must be/);
  });

  it('through the CLI: VLC_CUDA_WGMMA=maybe stops compress with exit 2 and one line, no output', () => {
    const dir = mkdtempSync(join(tmpdir(), 'vlc-opt-'));
    const input = join(dir, 'in.npy');
    writeFileSync(input, Buffer.concat([Buffer.from(npyHeader('<f4', [8, 2])), Buffer.from(new Float32Array(16).fill(1).buffer)]));
    const r = spawnSync(process.execPath, [join(__dirname, 'interrupt-child.mjs'), 'compress', input, '-o', join(dir, 'out.vlc'), '--device', 'cuda', '--anchors', '2'], {
      env: { ...process.env, VLC_CUDA_WGMMA: 'maybe' },
      encoding: 'utf8',
    });
    expect(r.status).toBe(2);
    expect(r.stderr.trim().split('\n')).toHaveLength(1);
    expect(r.stderr).toMatch(/VLC_CUDA_WGMMA=maybe: expected 0 or 1/);
  });
});
