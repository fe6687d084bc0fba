// Arrow, Parquet and HDF5 bytes are decoded by third-party libraries that trust the file: a corrupted
// length can make apache-arrow allocate until the heap runs out, and a corrupted page can send
// hyparquet's RLE decoder into an endless loop (both found by fuzzing). So they run in a worker
// thread with a memory cap and a watchdog: no progress for a while, or out of memory, becomes one
// clear error line instead of a hang or a V8 crash.
import * as os from 'node:os';
import { Worker } from 'node:worker_threads';
import { InterruptedError } from '../../errors.js';
import { interruptSignal } from '../../interrupt.js';
import { badInput, type ByteSource, type SourceRef } from './source.js';
import type { RawDataset } from './types.js';

export interface GuardedJob {
  kind: 'arrow' | 'parquet' | 'hdf5';
  name: string;
  ref: SourceRef;
  /** The column (Arrow, Parquet) or dataset (HDF5) asked for. */
  column?: string;
  dropInvalid: boolean;
}

const limits = {
  /** Seconds without a heartbeat (one per Arrow batch / Parquet page) before giving up. */
  stallMs: 60_000,
  /** Heap cap for the decoder; vectors themselves live outside the heap, in shared memory. */
  maxHeapMb: Math.max(2048, Math.floor(os.totalmem() / 2 ** 20 / 2)),
};

/** For tests: trip the guard quickly. */
export function setDecodeGuardLimits(l: Partial<typeof limits>): void {
  Object.assign(limits, l);
}

const KIND_NAME = { arrow: 'Arrow', parquet: 'Parquet', hdf5: 'HDF5' };

export function readGuarded(src: ByteSource, kind: GuardedJob['kind'], column: string | undefined, dropInvalid: boolean): Promise<RawDataset> {
  const job: GuardedJob = { kind, name: src.name, ref: src.ref, column, dropInvalid };
  const worker = new Worker(new URL('./decode-worker.js', import.meta.url), {
    workerData: job,
    resourceLimits: { maxOldGenerationSizeMb: limits.maxHeapMb },
    execArgv: [], // the parent's flags (e.g. --input-type of `node -e`) can be invalid for a worker file
    stdout: false,
    stderr: false,
  });
  return new Promise<RawDataset>((resolve, reject) => {
    let settled = false;
    let timer: NodeJS.Timeout | undefined;
    const finish = (fn: () => void) => {
      if (settled) return;
      settled = true;
      clearTimeout(timer);
      interruptSignal.removeEventListener('abort', onAbort);
      void worker.terminate();
      fn();
    };
    const arm = () => {
      clearTimeout(timer);
      timer = setTimeout(
        () => finish(() => reject(badInput(src, `the ${KIND_NAME[kind]} decoder made no progress for ${limits.stallMs / 1000} s; the file is probably corrupt`))),
        limits.stallMs,
      );
    };
    const onAbort = () => finish(() => reject(new InterruptedError()));
    interruptSignal.addEventListener('abort', onAbort);
    arm();
    worker.on('message', (m: { type: string; result?: RawDataset; name?: string; message?: string }) => {
      if (m.type === 'beat') arm();
      else if (m.type === 'done') finish(() => resolve(m.result!));
      else if (m.type === 'error') {
        // Reader errors are UsageErrors already prefixed with the input's name; anything else
        // escaped from deep inside a decoder on bytes it did not expect.
        const e = m.name === 'UsageError'
          ? badInput(src, m.message!.replace(`${src.name}: `, ''))
          : badInput(src, `cannot decode this ${KIND_NAME[kind]} data (${m.message}); the file is probably corrupt`);
        finish(() => reject(e));
      }
    });
    worker.on('error', (e: Error & { code?: string }) => {
      const why = e.code === 'ERR_WORKER_OUT_OF_MEMORY'
        ? `the ${KIND_NAME[kind]} decoder ran out of memory (${limits.maxHeapMb} MB); the file is probably corrupt`
        : `the ${KIND_NAME[kind]} decoder failed (${e.message})`;
      finish(() => reject(badInput(src, why)));
    });
    worker.on('exit', (code) => finish(() => reject(badInput(src, `the ${KIND_NAME[kind]} decoder stopped unexpectedly (exit ${code})`))));
  });
}
