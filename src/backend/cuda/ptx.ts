// The prebuilt PTX in build/ (compiled by `npm run build:ptx` for compute_80; screen_h90 for
// compute_90a, Hopper's arch-specific target), Hopper machine code compiled from it (build/sm_90/),
// and what to say when the installed driver is too old to JIT the PTX.
import { existsSync, readFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';

/** Kernel families, one PTX module each (cuda/<name>.cu → build/<name>.ptx). */
export const MODULES = ['seed', 'assign', 'screen_h', 'screen_h90', 'reduce', 'update', 'residual', 'knn', 'decode', 'ec'] as const;
export type ModuleName = (typeof MODULES)[number];

/**
 * Modules that run only on one compute capability: sm_90a code (wgmma) exists for 9.0 alone. The
 * context loads them on that device and the engine uses them only when they are loaded.
 */
const ONLY_ON: Partial<Record<ModuleName, string>> = { screen_h90: '9.0' };

/** Whether module `name` runs on a device of compute capability `cc` ("9.0"). */
export function moduleRunsOn(name: ModuleName, cc: string): boolean {
  const only = ONLY_ON[name];
  return only === undefined || only === cc;
}

/** build/ at the package root (this file runs from dist/backend/cuda/). */
export function ptxPath(name: ModuleName): string {
  return fileURLToPath(new URL(`../../../build/${name}.ptx`, import.meta.url));
}

/**
 * Hopper machine code of module `name` (build/sm_90/<name>.cubin, compiled by ptxas from the
 * committed PTX: scripts/build-ptx.mjs; test/cuda-host/ptx-fresh.test.ts ties it to that PTX), for
 * a device of compute capability `cc`; undefined where there is none for it. Loading it skips the
 * driver's JIT compilation of the PTX, which a process with a cold JIT cache pays on every GPU.
 */
export function readCubin(name: ModuleName, cc: string): Uint8Array | undefined {
  if (cc !== '9.0') return undefined;
  const path = fileURLToPath(new URL(`../../../build/sm_90/${name}.cubin`, import.meta.url));
  if (!existsSync(path)) return undefined;
  return readFileSync(path);
}

/** The PTX as a NUL-terminated image, ready for cuModuleLoadData. */
export function readPtx(name: ModuleName): Uint8Array {
  const text = readFileSync(ptxPath(name));
  const image = new Uint8Array(text.length + 1);
  image.set(text);
  return image;
}

/** ".version 9.0" of a PTX text, or undefined. */
export function ptxIsaOf(image: Uint8Array): string | undefined {
  const head = Buffer.from(image.buffer, image.byteOffset, Math.min(image.length, 4096)).toString('latin1');
  return /^\.version\s+(\d+\.\d+)/m.exec(head)?.[1];
}

/**
 * The CUDA release that introduced a PTX ISA version, and the oldest Linux driver of that release
 * (NVIDIA's release notes, "CUDA Toolkit and Corresponding Driver Versions").
 */
const ISA_TO_CUDA: Record<string, [cuda: string, driver: string]> = {
  '7.0': ['11.0', '450'],
  '7.1': ['11.1', '455'],
  '7.2': ['11.2', '460'],
  '7.3': ['11.3', '465'],
  '7.4': ['11.4', '470'],
  '7.5': ['11.5', '495'],
  '7.6': ['11.6', '510'],
  '7.7': ['11.7', '515'],
  '7.8': ['11.8', '520'],
  '8.0': ['12.0', '525'],
  '8.1': ['12.1', '530'],
  '8.2': ['12.2', '535'],
  '8.3': ['12.3', '545'],
  '8.4': ['12.4', '550'],
  '8.5': ['12.5', '555'],
  '8.6': ['12.7', '565'],
  '8.7': ['12.8', '570'],
  '8.8': ['12.9', '575'],
  '9.0': ['13.0', '580'],
};

/** "12.4" from cuDriverGetVersion's 12040. */
export function cudaVersionText(v: number): string {
  return `${Math.floor(v / 1000)}.${Math.floor((v % 1000) / 10)}`;
}

/** The user-facing explanation of a PTX the driver cannot JIT. */
export function ptxTooNewMessage(name: ModuleName, isa: string | undefined, driverVersion: number): string {
  const need = isa ? ISA_TO_CUDA[isa] : undefined;
  const needs = need
    ? `PTX ISA ${isa} (CUDA ${need[0]}), which needs NVIDIA driver ${need[1]} or newer`
    : `PTX ISA ${isa ?? 'unknown'}`;
  return (
    `the GPU kernels in build/${name}.ptx need a newer NVIDIA driver: they are ${needs}; ` +
    `this driver supports CUDA ${cudaVersionText(driverVersion)}. Update the driver, ` +
    `rebuild the PTX with an older CUDA toolkit (npm run build:ptx), or use --device cpu`
  );
}
