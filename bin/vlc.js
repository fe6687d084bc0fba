#!/usr/bin/env node
// The `vlc` command. Two things happen here, before vlc's own code loads, because nothing later
// can do them:
//  - Under an address-space limit (`ulimit -v`, common on shared HPC login nodes), V8 cannot
//    reserve the 8 GiB+ of virtual memory it puts around each WebAssembly memory to catch
//    out-of-bounds accesses by trapping, so the CPU kernels cannot start even on a tiny input.
//    Node's --disable-wasm-trap-handler makes V8 check bounds in code instead and reserve only
//    what each memory holds; it can only be given when Node starts, so vlc starts itself again
//    with it (once; VLC_REEXEC marks the second start).
//  - When vlc's compiled code is missing or Node cannot start it, one `vlc: ...` line says so
//    instead of a stack trace.
import { spawn } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { availableParallelism } from 'node:os';

/** The soft address-space limit in bytes (/proc/self/limits; `ulimit -v` is in KiB), or undefined when unlimited or unknown. */
function addressLimitBytes() {
  try {
    const line = readFileSync('/proc/self/limits', 'utf8').split('\n').find((l) => l.startsWith('Max address space'));
    const soft = line?.split(/\s{2,}/)[1];
    return soft && soft !== 'unlimited' ? Number(soft) : undefined;
  } catch {
    return undefined;
  }
}

function addressLimit() {
  const b = addressLimitBytes();
  return b === undefined ? undefined : `${(b / 2 ** 30).toFixed(1)} GiB`;
}

/**
 * The most 64 KiB pages one WebAssembly memory may grow to under the limit: what is left after
 * Node and its threads (about 3 GiB of address space measured with 2 workers), shared among
 * two kernel memories per worker thread and the main thread's; between 16 MiB and 4 GiB.
 */
function wasmPagesFor(limit) {
  const memories = 2 * availableParallelism() + 2;
  const pages = Math.floor((limit - 3 * 2 ** 30) / memories / 65536);
  return Math.max(256, Math.min(65536, pages));
}

function wasmMemoryWorks() {
  try {
    new WebAssembly.Memory({ initial: 1 });
    return true;
  } catch {
    return false;
  }
}

// libuv's thread pool runs the positional reads of a file read where it lies (io/vlc/payload.ts
// readInto): a search on four GPUs keeps a dozen in flight, more than the default four threads.
// libuv reads this once, when the pool first starts, which nothing before this line has made it do.
process.env.UV_THREADPOOL_SIZE ??= String(Math.max(4, Math.min(16, availableParallelism())));

const FLAG = '--disable-wasm-trap-handler';

if (!wasmMemoryWorks() && !process.env.VLC_REEXEC && !process.execArgv.includes(FLAG)) {
  const limit = addressLimit();
  const bytes = addressLimitBytes();
  const pages = bytes === undefined ? [] : [`--wasm-max-mem-pages=${wasmPagesFor(bytes)}`];
  const child = spawn(process.execPath, [...process.execArgv, FLAG, ...pages, ...process.argv.slice(1)], {
    stdio: 'inherit',
    env: { ...process.env, VLC_REEXEC: '1' },
  });
  // Ctrl-C reaches both through the terminal; a signal sent to this process alone is passed on.
  for (const sig of ['SIGINT', 'SIGTERM', 'SIGHUP']) process.on(sig, () => child.kill(sig));
  child.on('error', (e) => {
    process.stderr.write(`vlc: cannot start Node.js again under the address-space limit${limit ? ` (ulimit -v: ${limit})` : ''}: ${e.message}; raise it with ulimit -v unlimited\n`);
    process.exit(1);
  });
  child.on('exit', (code, signal) => {
    // Node aborting at start (SIGABRT, SIGSEGV before vlc ran) prints no vlc line: this one does.
    if (signal === 'SIGABRT' || signal === 'SIGSEGV' || signal === 'SIGBUS' || signal === 'SIGTRAP' || signal === 'SIGILL')
      process.stderr.write(`vlc: Node.js could not run vlc under the address-space limit${limit ? ` (ulimit -v: ${limit})` : ''} (it stopped with ${signal}); raise it with ulimit -v unlimited\n`);
    process.exitCode = signal ? 128 + ({ SIGINT: 2, SIGTERM: 15, SIGHUP: 1, SIGABRT: 6, SIGSEGV: 11, SIGBUS: 7, SIGKILL: 9, SIGTRAP: 5, SIGILL: 4 }[signal] ?? 1) : (code ?? 1);
  });
} else {
  let main;
  try {
    ({ main } = await import('../dist/cli.js'));
  } catch (e) {
    const missing = e?.code === 'ERR_MODULE_NOT_FOUND' && String(e.message).includes('dist');
    process.stderr.write(
      missing
        ? 'vlc: its compiled code (dist/) is missing; run npm ci (or npm run build) in the vlc checkout\n'
        : `vlc: Node.js could not load vlc: ${String(e?.message ?? e).split('\n')[0]}${wasmMemoryWorks() ? '' : ` (under the address-space limit${addressLimit() ? ` ulimit -v ${addressLimit()}` : ''}; raise it with ulimit -v unlimited)`}\n`,
    );
    process.exit(1);
  }
  const code = await main(process.argv);
  // Leave as soon as what was printed has left: a natural exit first tears down V8's heaps and
  // every large buffer one by one, after the report (a wall no phase holds), where the operating
  // system frees a process's memory at once (.dev/exit-cost.py; bench/results/2026-11-28-write31-local.json).
  // Every output file is closed by now (the commands await their writes); only stdout and stderr may
  // still hold bytes. A program using vlc as a library frees what it holds as before.
  await Promise.all([flushed(process.stdout), flushed(process.stderr)]);
  process.exit(code);
}

/** Resolves once `stream` has handed every byte written to it to the system (or cannot: closed, failed). */
function flushed(stream) {
  return new Promise((resolve) => {
    if (!stream.writableLength || stream.destroyed) return resolve();
    stream.once('drain', resolve);
    stream.once('close', resolve);
    stream.once('error', resolve);
  });
}
