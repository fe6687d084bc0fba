// Ctrl-C and SIGTERM handling in one place: the first signal aborts `interruptSignal` (long loops
// and waits on input check it) and runs the registered cleanups (temp files); src/cli.ts then
// exits 130 (SIGINT) or 143 (SIGTERM), the shell's 128 + signal number. Nothing on the main thread
// blocks for long — input is read through the event loop (io/readers/stream.ts) — so the handler
// always runs; should the program still not have ended shortly after, it exits from here.
import { InterruptedError } from './errors.js';

const controller = new AbortController();
const cleanups = new Set<() => void>();
let installed = false;
let received: NodeJS.Signals | undefined;

export const interruptSignal: AbortSignal = controller.signal;

/** How long the program may take to notice the abort and exit by itself. */
const GRACE_MS = 300;

/** The exit status for the signal received: 130 for SIGINT, 143 for SIGTERM. */
export function interruptExitCode(): number {
  return received === 'SIGTERM' ? 143 : 130;
}

export function installInterruptHandlers(): void {
  if (installed) return;
  installed = true;
  const onSignal = (sig: NodeJS.Signals) => {
    received ??= sig;
    if (controller.signal.aborted) {
      runCleanups();
      process.exit(interruptExitCode()); // second signal: leave now
    }
    controller.abort();
    runCleanups();
    setTimeout(() => process.exit(interruptExitCode()), GRACE_MS).unref();
  };
  process.on('SIGINT', onSignal);
  process.on('SIGTERM', onSignal);
}

/** How often a long loop on the main thread lets pending events run (signals among them). */
const CHECKPOINT_MS = 50;
let lastCheckpoint = 0;

/**
 * Call often from a long loop on the main thread: about every CHECKPOINT_MS it yields to the event
 * loop so a Ctrl-C or SIGTERM is handled; once one was, it throws InterruptedError.
 */
export async function checkpoint(): Promise<void> {
  const now = performance.now();
  if (now - lastCheckpoint >= CHECKPOINT_MS) {
    lastCheckpoint = now;
    await new Promise((r) => setImmediate(r));
  }
  if (controller.signal.aborted) throw new InterruptedError();
}

/** Register a synchronous cleanup (e.g. unlink a temp file); returns a function that unregisters it. */
export function onCleanup(fn: () => void): () => void {
  cleanups.add(fn);
  return () => cleanups.delete(fn);
}

export function runCleanups(): void {
  for (const fn of [...cleanups]) {
    cleanups.delete(fn);
    try {
      fn();
    } catch {
      /* best effort: we are already failing */
    }
  }
}
