// The CPU backend: worker threads over shared memory, distances in a WebAssembly SIMD kernel.
import os from 'node:os';
import { selectRows, type Dataset } from '../../vectors/dataset.js';
import { hostDevice } from '../host.js';
import type { Backend } from '../types.js';
import type { Engine } from '../engine.js';
import { CpuEngine } from './engine.js';
import type { KernelKind } from './kernel.js';

export { cpuKnn, knn, prewarmKnn } from './knn.js';
export { CpuEngine } from './engine.js';

export interface CpuOptions {
  /** Worker threads (default: os.availableParallelism()). Results do not depend on it. */
  threads?: number;
  /** 'wasm' (default) or 'js' — the plain-JS kernel, for speed comparisons. */
  kernel?: KernelKind;
  /**
   * Skip work that provably changes nothing: the search for points whose anchor (or two nearest,
   * at T > 0) provably stays nearest — group bounds at T = 0 (groups.ts), Hamerly's bounds at
   * T > 0, with a margin for f32 rounding — and, between hard passes, the sums of the points that
   * kept their anchor. Same results, much less work once Lloyd settles. Default true; false times
   * the plain brute-force pass (bench/cpu_speed.mjs).
   */
  bounds?: boolean;
}

export function createCpuBackend(o: CpuOptions = {}): Backend {
  const threads = Math.max(1, Math.floor(o.threads ?? os.availableParallelism()));
  const kernel = o.kernel ?? 'wasm';
  const engines = new Set<Engine>();
  const backend: Backend = {
    // The codec and search kernels are the host's: this is the host.
    ...hostDevice,
    kind: 'cpu',
    label: `cpu (${threads} thread${threads === 1 ? '' : 's'}${kernel === 'js' ? ', js kernel' : ''}${o.bounds === false ? ', no bounds' : ''})`,
    async open(data: Dataset, m: number): Promise<Engine> {
      if (!(m >= 1 && Number.isInteger(m))) throw new Error(`cpu backend: m must be a positive integer, got ${m}`);
      const e = await CpuEngine.create(data, m, threads, kernel, o.bounds ?? true);
      engines.add(e);
      const dispose = e.dispose.bind(e);
      e.dispose = async () => {
        engines.delete(e);
        await dispose();
      };
      return e;
    },
    /** Nothing to release: the CPU reads the rows where they are. */
    rowsUploadedOnce: () => undefined,
    uploadsOver: () => undefined,
    /** The rows copied (selectRows): the CPU reads them from the copy as from any dataset. */
    openRows: (data: Dataset, rows: Int32Array, m: number) => backend.open(selectRows(data, rows), m),
    smallEnginesAtOnce: 1, // each engine takes every core
    async close(): Promise<void> {
      await Promise.all([...engines].map((e) => e.dispose()));
    },
  };
  return backend;
}
