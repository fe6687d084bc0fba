// Running out of memory under a process limit: which limit, and how to raise it. An allocation
// that fails (a WebAssembly memory, an ArrayBuffer, a worker's heap) says only "Out of memory";
// on a shared machine the cause is usually `ulimit -v` (address space) or `ulimit -d` (data), far
// below the memory the machine has. src/cli.ts adds this to such a failure's one line (exit 1: the
// input is fine, the environment is short).
import { readFileSync } from 'node:fs';

const OUT_OF_MEMORY = /out of memory|allocation failed|could not allocate|cannot allocate memory|not enough memory|maximum memory size exceeded|ENOMEM/i;

/** The process's soft limits that cap memory, as `ulimit` names them: [flag, what, bytes]. */
function memoryLimits(): Array<[string, string, number]> {
  let text: string;
  try {
    text = readFileSync('/proc/self/limits', 'utf8');
  } catch {
    return []; // not Linux: nothing to name
  }
  const out: Array<[string, string, number]> = [];
  for (const [label, flag, what] of [
    ['Max address space', '-v', 'address-space'],
    ['Max data size', '-d', 'data-size'],
  ] as const) {
    const soft = text.split('\n').find((l) => l.startsWith(label))?.split(/\s{2,}/)[1];
    if (soft && soft !== 'unlimited') out.push([flag, what, Number(soft)]);
  }
  return out;
}

/** `message`, and when it is an out-of-memory failure under a memory limit, that limit and how to raise it. */
export function withLimit(message: string): string {
  if (!OUT_OF_MEMORY.test(message)) return message;
  const limits = memoryLimits();
  if (limits.length === 0) return `${message} (the machine's memory ran short: free some, or use a smaller input)`;
  const named = limits.map(([flag, what, bytes]) => `the ${what} limit (ulimit ${flag}: ${(bytes / 2 ** 30).toFixed(1)} GiB)`).join(' and ');
  const raise = limits.map(([flag]) => `ulimit ${flag} unlimited`).join('; ');
  return `${message}: this process is under ${named}; raise it (${raise}, or ask for more on a batch node) and run again`;
}
