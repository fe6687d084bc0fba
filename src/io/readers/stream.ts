// Inputs that cannot be read by position: pipes, FIFOs, sockets, character devices (/dev/zero),
// including stdin. Their bytes arrive through the event loop — never a blocking read on the main
// thread — so Ctrl-C and SIGTERM are handled while vlc waits for a writer or for data. The bytes
// are kept as they arrive, in shared-memory blocks (decoder workers read them without a copy),
// and never past a bound: the size the format's header promises, or the memory budget when the
// format has no such header. A stream that never ends is refused, not read into memory.
import * as fs from 'node:fs';
import * as net from 'node:net';
import * as os from 'node:os';
import type { Readable } from 'node:stream';
import { isatty } from 'node:tty';
import { InterruptedError, UsageError } from '../../errors.js';
import { interruptSignal } from '../../interrupt.js';
import { log } from '../../log.js';
import { quoteName } from '../names.js';
import { badInput, memorySource, type ByteSource } from './source.js';

const BLOCK_BYTES = 16 << 20;

/**
 * Most bytes of an input without a size in its header (raw, fvecs, JSONL, Arrow, Parquet through
 * a pipe) that vlc holds in memory: half the memory the process may use. Past it the stream is
 * refused rather than read until the machine runs out.
 */
export function streamBudget(): number {
  const constrained = process.constrainedMemory?.() ?? 0;
  const total = constrained > 0 && constrained < os.totalmem() ? constrained : os.totalmem();
  return Math.floor(total / 2);
}

export class StreamInput {
  private readonly blocks: Uint8Array[] = [];
  private current: Uint8Array | undefined;
  private used = 0;
  /** Bytes held, over all blocks. */
  held = 0;
  ended = false;
  private readonly chunks: AsyncIterator<Buffer>;
  /** Pieces of the last chunk not yet stored (fill() stores only what it must). */
  private pending: Buffer | undefined;
  private announced = false;

  constructor(readonly name: string, private readonly stream: Readable, private readonly onBytes?: (held: number) => void) {
    this.chunks = stream[Symbol.asyncIterator]();
  }

  /** Read until at least `k` bytes are held or the input ends; returns the bytes held. */
  async fill(k: number, limit = Number.MAX_SAFE_INTEGER): Promise<number> {
    while (this.held < k && !this.ended) {
      const chunk = this.pending ?? (await this.nextChunk());
      this.pending = undefined;
      if (!chunk) break;
      const room = limit - this.held;
      if (chunk.length > room) {
        this.store(chunk.subarray(0, room));
        this.pending = chunk.subarray(room);
        break;
      }
      this.store(chunk);
    }
    return this.held;
  }

  /** The first `k` bytes held, as a fresh copy (k <= held). */
  prefix(k: number): Uint8Array {
    return memorySource(this.name, this.blocks).read(0, Math.min(k, this.held));
  }

  /**
   * Read to the end of the input and serve it as a ByteSource. More than `limit` bytes is refused
   * with `tooMuch()` as soon as the first byte past it arrives.
   */
  async readToEnd(limit: number, tooMuch: () => UsageError): Promise<ByteSource> {
    await this.fill(limit + 1, limit + 1);
    if (this.held > limit) throw tooMuch();
    return memorySource(this.name, this.blocks);
  }

  close(): void {
    this.stream.destroy();
  }

  private async nextChunk(): Promise<Buffer | undefined> {
    if (interruptSignal.aborted) throw new InterruptedError();
    if (this.held === 0 && !this.announced) {
      this.announced = true;
      log().debug(`${quoteName(this.name)}: waiting for input`);
    }
    let onAbort: (() => void) | undefined;
    const aborted = new Promise<never>((_, reject) => {
      onAbort = () => reject(new InterruptedError());
      interruptSignal.addEventListener('abort', onAbort, { once: true });
    });
    try {
      const r = await Promise.race([this.chunks.next(), aborted]);
      if (r.done) {
        this.ended = true;
        return undefined;
      }
      return r.value;
    } catch (e) {
      if (e instanceof InterruptedError) throw e;
      throw badInput(this.name, `cannot read (${(e as NodeJS.ErrnoException).code ?? (e as Error).message})`);
    } finally {
      interruptSignal.removeEventListener('abort', onAbort!);
    }
  }

  /** Append bytes, filling the current block before starting a new one. */
  private store(bytes: Uint8Array): void {
    let done = 0;
    while (done < bytes.length) {
      if (!this.current || this.used === this.current.length) {
        try {
          this.current = new Uint8Array(new SharedArrayBuffer(BLOCK_BYTES));
        } catch {
          throw badInput(this.name, `ran out of memory holding the input after ${this.held} bytes; give a regular file instead of a stream`);
        }
        this.used = 0;
        this.blocks.push(this.current.subarray(0, 0));
      }
      const k = Math.min(this.current.length - this.used, bytes.length - done);
      this.current.set(bytes.subarray(done, done + k), this.used);
      this.used += k;
      this.held += k;
      done += k;
      this.blocks[this.blocks.length - 1] = this.current.subarray(0, this.used);
    }
    this.onBytes?.(this.held);
  }
}

/** What an input path turned out to be: a file read by position, or a stream. */
export type Opened = { file: true; fd: number; size: number; owned: boolean } | { file: false; stream: StreamInput };

/**
 * Open an input by path, or stdin for '-'. Regular files (and stdin redirected from one) are read
 * by position; everything else becomes a StreamInput. A FIFO is opened without blocking, so
 * waiting for its writer keeps the event loop (and the signal handlers) running.
 */
export function openInput(path: string, onBytes?: (held: number) => void, expected = 'an embedding file (.npy, .fvecs, .arrow, .parquet, ...)'): Opened {
  const name = path === '-' ? 'stdin' : path;
  if (path === '-') {
    if (isatty(0)) throw badInput(name, 'is a terminal; pipe a file in (vlc ... - < vectors.npy) or give a path');
    const st = fs.fstatSync(0);
    if (st.isFile()) return { file: true, fd: 0, size: st.size, owned: false };
    return { file: false, stream: new StreamInput(name, streamOf(0, st, name), onBytes) };
  }
  let st: fs.Stats;
  try {
    st = fs.statSync(path);
  } catch (e) {
    const code = (e as NodeJS.ErrnoException).code;
    if (code === 'ENOENT') throw badInput(name, 'no such file (check the path)');
    throw badInput(name, `cannot open (${code ?? (e as Error).message})`);
  }
  if (st.isDirectory()) throw badInput(name, `is a directory; give ${expected}`);
  let fd: number;
  try {
    // O_NONBLOCK: opening a FIFO would otherwise wait for a writer inside open(2), out of reach of Ctrl-C.
    fd = fs.openSync(path, st.isFIFO() ? fs.constants.O_RDONLY | fs.constants.O_NONBLOCK : 'r');
  } catch (e) {
    throw badInput(name, `cannot open (${(e as NodeJS.ErrnoException).code ?? (e as Error).message})`);
  }
  if (st.isFile()) return { file: true, fd, size: st.size, owned: true };
  if (isatty(fd)) {
    fs.closeSync(fd);
    throw badInput(name, 'is a terminal; give a file or pipe one in');
  }
  return { file: false, stream: new StreamInput(name, streamOf(fd, st, name), onBytes) };
}

/** A readable stream over a non-seekable descriptor: libuv's pipe handle for FIFOs and sockets. */
function streamOf(fd: number, st: fs.Stats, name: string): Readable {
  if (st.isFIFO() || st.isSocket()) return new net.Socket({ fd, readable: true, writable: false }).on('error', () => {});
  if (st.isCharacterDevice() || st.isBlockDevice()) return fs.createReadStream('', { fd, autoClose: fd !== 0, highWaterMark: 1 << 20 });
  throw badInput(name, 'is neither a file nor a stream vlc can read');
}
