// Ctrl-C handling in one place: the first SIGINT/SIGTERM aborts `interruptSignal` (long loops check
// it between backend calls) and runs the registered cleanups (temp files); src/cli.ts then exits 130.
const controller = new AbortController();
const cleanups = new Set<() => void>();
let installed = false;

export const interruptSignal: AbortSignal = controller.signal;

export function installInterruptHandlers(): void {
  if (installed) return;
  installed = true;
  const onSignal = () => {
    if (controller.signal.aborted) {
      runCleanups();
      process.exit(130); // second Ctrl-C: leave now
    }
    controller.abort();
    runCleanups();
    // If nothing notices the abort within 2 s (a blocking read, say), exit anyway.
    setTimeout(() => process.exit(130), 2000).unref();
  };
  process.on('SIGINT', onSignal);
  process.on('SIGTERM', onSignal);
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
