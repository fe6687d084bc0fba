// Which image each module loads (context.ts, ptx.ts readCubin): on compute capability 9.0 the
// Hopper machine code built from the committed PTX (build/sm_90/*.cubin), the PTX with
// VLC_CUDA_CUBIN=0 (machineCode: false) or elsewhere, and the PTX again where the driver refuses
// the machine code. Through the fake driver; test/gpu runs the real kernels from the cubins.
import { afterEach, describe, expect, it } from 'vitest';
import { setDriverForTests } from '../../dist/backend/cuda/driver.js';
import { createCudaBackend } from '../../dist/backend/cuda/index.js';
import { MODULES } from '../../dist/backend/cuda/ptx.js';
import { cudaOptionsFromEnv } from '../../dist/backend/cuda/options.js';
import { FakeCuda } from './fake-driver.js';

afterEach(() => setDriverForTests(undefined));

async function imagesLoaded(fake: FakeCuda, machineCode?: boolean) {
  setDriverForTests(fake.api);
  const backend = await createCudaBackend(0, machineCode === undefined ? {} : { machineCode });
  await backend.close();
  return fake.images;
}

describe('module images', () => {
  it('a Hopper loads every module as machine code by default', async () => {
    expect(await imagesLoaded(new FakeCuda())).toEqual(MODULES.map(() => 'cubin'));
  });

  it('machineCode false (VLC_CUDA_CUBIN=0) loads the PTX', async () => {
    expect(cudaOptionsFromEnv({ VLC_CUDA_CUBIN: '0' }).machineCode).toBe(false);
    expect(cudaOptionsFromEnv({}).machineCode).toBe(true);
    expect(() => cudaOptionsFromEnv({ VLC_CUDA_CUBIN: 'yes' })).toThrow(/VLC_CUDA_CUBIN=yes: expected 0 or 1/);
    expect(await imagesLoaded(new FakeCuda(), false)).toEqual(MODULES.map(() => 'ptx'));
  });

  it('an Ampere (8.0) has no machine code in build/ and loads the PTX (Hopper-only modules not at all)', async () => {
    const images = await imagesLoaded(new FakeCuda({ devices: [{ name: 'Fake A100', cc: [8, 0], sms: 4, memBytes: 2 ** 34 }] }));
    expect(images).toEqual(MODULES.filter((m) => m !== 'screen_h90').map(() => 'ptx'));
  });

  it('machine code the driver refuses falls back to the PTX', async () => {
    const fake = new FakeCuda();
    const load = fake.api.cuModuleLoadData;
    fake.api.cuModuleLoadData = (out, image) => (image[0] === 0x7f ? (fake.images.push('cubin'), 209) : load(out, image));
    const images = await imagesLoaded(fake);
    expect(images.filter((x) => x === 'ptx').length).toBe(MODULES.length);
    expect(images.filter((x) => x === 'cubin').length).toBe(MODULES.length);
  });
});
