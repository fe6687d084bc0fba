// Reading and writing .vlc files: from a path or stdin ('-'), to a path (atomically) or stdout ('-').
// Typed arrays are viewed in place, which assumes a little-endian host — every platform Node.js
// ships for (x86-64, arm64) is.
import * as fs from 'node:fs';
import { UsageError } from '../../errors.js';
import { planOutput, writeOutput, type OutputPlan } from '../output.js';
import { log } from '../../log.js';
import { quoteName } from '../names.js';
import { openInput, streamBudget, type StreamInput } from '../readers/stream.js';
import { parallelPayloadCrcs, parallelPiecesCrc, PARALLEL_CHECK_MIN_BYTES } from './checksums.js';
import { encodeVlcParts, sealSectionHeader, type PayloadTail } from './encode.js';
import { decodeVlc, decodeVlcHeader, expectedVlcBytes, FILE_HEADER_BYTES, type VlcContent, type VlcFile } from './format.js';
import { Payload } from './payload.js';
import { openVlcOnDiskThreaded } from './on-disk.js';
import { reconstructRange } from './reconstruct.js';
import { narrowIdsOnThreads } from './narrow-ids.js';
import { assignmentWidthFor } from './manifest.js';

/**
 * Read and validate a .vlc file (a path, '-' for stdin, a FIFO or a device); warnings (unknown
 * optional sections) go to the log. The header and manifest are checked first, from the first
 * bytes, so a wrong or forged file fails before the rest is read; the rest is never read past the
 * size the manifest accounts for.
 */
/**
 * Read and validate a .vlc file: `onBytes` hears the reading (bytes read, file size), `onChecked`
 * the checksums that follow (bytes checked, file size).
 */
export async function readVlc(
  path: string, onBytes?: (read: number, total?: number) => void, onChecked?: (bytes: number, total: number) => void,
): Promise<VlcFile> {
  const name = path === '-' ? '<stdin>' : path;
  const input = openInput(path, onBytes, 'a .vlc file made by `vlc compress`');
  try {
    const bytes = input.file ? readWhole(name, input.fd, input.size, onBytes) : Payload.of(await readStream(name, input.stream));
    // Large payloads are checksummed on several threads first (a file's bytes are shared with them).
    const computed = await parallelPayloadCrcs(bytes, decodeVlcHeader(bytes, name).manifestEnd, onChecked);
    const file = decodeVlc(bytes, name, onChecked, computed);
    for (const w of file.warnings) log().warn(w);
    return file;
  } finally {
    if (input.file) {
      if (input.owned) fs.closeSync(input.fd);
    } else input.stream.close();
  }
}

/**
 * A file: header first (refusing it early), then the whole file in one buffer of any size — a
 * SharedArrayBuffer when large (its checksums run on worker threads: checksums.ts; and past 4 GiB
 * only a buffer, not one typed array, holds it), read a chunk at a time through views.
 */
function readWhole(name: string, fd: number, size: number, onBytes?: (read: number, total?: number) => void): Payload {
  const pread = (at: number, length: number): Payload => {
    let buffer: ArrayBufferLike;
    try {
      buffer = length >= PARALLEL_CHECK_MIN_BYTES ? new SharedArrayBuffer(length) : new ArrayBuffer(length);
    } catch {
      throw new UsageError(`${quoteName(name)}: not enough memory to read this ${length}-byte .vlc file`);
    }
    let done = 0;
    while (done < length) {
      const got = fs.readSync(fd, new Uint8Array(buffer, done, Math.min(CHUNK, length - done)), 0, Math.min(CHUNK, length - done), at + done);
      if (got === 0) break;
      done += got;
      if (length > CHUNK) onBytes?.(at + done, size);
    }
    return new Payload(buffer, 0, done);
  };
  const first = pread(0, Math.min(size, FILE_HEADER_BYTES));
  const { manifestEnd } = decodeVlcHeader(first, name);
  const { manifest } = decodeVlcHeader(pread(0, Math.min(size, manifestEnd)), name);
  const expected = manifest && expectedVlcBytes(manifest, manifestEnd);
  if (expected !== undefined && size > expected)
    throw new UsageError(`${quoteName(name)}: ${size - expected} unexpected bytes after the last section: file is corrupted`);
  return pread(0, size);
}

/** A stream: header first, then exactly the bytes the manifest accounts for (or the budget). */
async function readStream(name: string, stream: StreamInput): Promise<Uint8Array> {
  await stream.fill(FILE_HEADER_BYTES);
  const { manifestEnd } = decodeVlcHeader(stream.prefix(FILE_HEADER_BYTES), name);
  await stream.fill(manifestEnd);
  const { manifest } = decodeVlcHeader(stream.prefix(manifestEnd), name);
  const expected = manifest && expectedVlcBytes(manifest, manifestEnd);
  const budget = Math.min(streamBudget(), MAX_BUFFER);
  if (expected !== undefined && expected > budget)
    throw new UsageError(`${quoteName(name)}: its manifest describes a ${expected}-byte file, more than vlc can hold in memory here (${budget}); give a regular file`);
  const src = await stream.readToEnd(expected ?? budget, () =>
    new UsageError(`${quoteName(name)}: ${expected !== undefined ? `the input goes on past the ${expected} bytes its manifest accounts for: file is corrupted` : `more than ${budget} bytes without an end; refusing it`}`),
  );
  return src.read(0, src.size);
}

/** Files at least this large, whose codes can be read a block of rows at a time, are decoded from the file (openVlcRows). */
const ROWS_FROM_FILE_MIN_BYTES = 2 ** 30;
let rowsFromFileMin = ROWS_FROM_FILE_MIN_BYTES;

/** Tests: decode files of at least `bytes` from the file (undefined restores the default). */
export function setRowsFromFileMinBytesForTests(bytes?: number): void {
  rowsFromFileMin = bytes ?? ROWS_FROM_FILE_MIN_BYTES;
}

/** A .vlc file, validated, and its vectors rebuilt a block of rows at a time. */
export interface VlcRows {
  /** The file (its `residuals` read from disk a block at a time when it is large: on-disk.ts). */
  file: VlcFile;
  /** Vectors r0 .. r1 − 1 (anchor + residual) into `out` ((r1 − r0) × d), which is returned. */
  rows(r0: number, r1: number, out: Float32Array): Float32Array;
  close(): void;
}

/**
 * readVlc for reading the vectors of a file of any size: a large regular file is checked from the
 * file as readVlc checks it (every checksum, a piece at a time) and its codes are then read a block
 * of rows at a time through its codec's own reader (on-disk.ts): memory holds the anchors, the
 * assignments and one block, never the codes. Any other input is read whole.
 */
export async function openVlcRows(path: string, onBytes?: (read: number, total?: number) => void, onChecked?: (bytes: number, total: number) => void): Promise<VlcRows> {
  const lazy = largeFile(path) ? await openVlcOnDiskThreaded(path, onChecked) : undefined;
  if (lazy) return { file: lazy.file, rows: (r0, r1, out) => reconstructRange(lazy.file, r0, r1, out), close: lazy.close };
  const file = await readVlc(path, onBytes, onChecked);
  return { file, rows: (r0, r1, out) => reconstructRange(file, r0, r1, out), close: () => {} };
}

function largeFile(path: string): boolean {
  try {
    return path !== '-' && fs.statSync(path).size >= rowsFromFileMin;
  } catch {
    return false; // readVlc says why
  }
}

/** The largest single Uint8Array Node allocates: what a stream (stdin), gathered in one array, may hold. */
const MAX_BUFFER = 2 ** 32 - 1;
const CHUNK = 16 << 20;

/**
 * Write a .vlc file where `out` says (a plan from planOutput, or a path planned with the default
 * rules: never over an existing file); '-' streams it to stdout. Returns its size.
 */
export async function writeVlc(out: OutputPlan | string, content: VlcContent, onBytes?: (written: number, total: number) => void): Promise<number> {
  const plan = typeof out === 'string' ? planOutput(out) : out;
  const t0 = performance.now();
  // A large residual payload without its checksum is checksummed on worker threads — while the file
  // is written, when it is a regular file: its section header, written with a placeholder, is
  // written again once the checksum is known. Elsewhere (stdout, a pipe) the header goes first, so
  // the checksum is awaited before the first byte.
  const res = content.residuals;
  const payload = res && res.payloadCrc === undefined ? res.payload() : undefined;
  const crcing = payload && parallelPiecesCrc(Array.isArray(payload) ? payload : [payload]);
  crcing?.catch(() => undefined); // a write that fails first leaves it unawaited: not an unhandled rejection
  const overlap = crcing !== undefined && plan.kind === 'file';
  const { before: chunks, residualHeader } = encodeVlcParts(content, undefined, overlap ? 0 : await crcing, await idsOnThreads(content));
  const total = chunks.reduce((s, c) => s + c.length, 0);
  const t1 = performance.now();
  let crcSeconds = 0;
  await writeOutput(
    plan,
    async (sink) => {
      // Large payloads go in pieces, so progress moves and Ctrl-C is heard between them.
      for (const c of chunks) for (let at = 0; at < c.length; at += WRITE_PIECE) await sink.write(c.subarray(at, at + WRITE_PIECE));
      if (!overlap || !residualHeader) return;
      const tc = performance.now();
      sealSectionHeader(residualHeader, await crcing);
      crcSeconds = (performance.now() - tc) / 1000;
      sink.writeAt!(offsetOf(chunks, residualHeader), residualHeader);
    },
    { onBytes: onBytes && ((written) => onBytes(written, total)) },
  );
  log().debug(
    `${total} bytes of .vlc in ${((performance.now() - t0) / 1000).toFixed(3)} s: laid out in ${((t1 - t0) / 1000).toFixed(3)} s` +
      (crcing ? `, the residual payload checksummed on threads${overlap ? ` while writing (waited ${crcSeconds.toFixed(3)} s for it after the last byte)` : ' first'}` : ''),
  );
  return total;
}

/** Where `chunk` starts in the file that `chunks` make. */
function offsetOf(chunks: Uint8Array[], chunk: Uint8Array): number {
  let at = 0;
  for (const c of chunks) {
    if (c === chunk) return at;
    at += c.length;
  }
  throw new Error('offsetOf: the chunk is not in the file');
}

const WRITE_PIECE = 16 << 20;

/**
 * writeVlc for a file whose residual payload ends with bytes held elsewhere (a streamed compress's
 * codes, spilled to a temp file): `tail.write(sink)` writes exactly `tail.bytes` of them where they
 * belong. The same rules as writeVlc (atomic; nothing left behind on failure). Returns the size.
 */
export async function writeVlcStreamed(
  out: OutputPlan | string, content: VlcContent, tail: PayloadTail & { write(sink: { write(chunk: Uint8Array): Promise<void> }): Promise<void> },
  onBytes?: (written: number, total: number) => void,
): Promise<number> {
  const { before, after } = encodeVlcParts(content, tail, undefined, await idsOnThreads(content));
  const size = (chunks: Uint8Array[]) => chunks.reduce((s, c) => s + c.length, 0);
  const total = size(before) + tail.bytes + size(after);
  await writeOutput(
    out,
    async (sink) => {
      const put = async (chunks: Uint8Array[]) => {
        for (const c of chunks) for (let at = 0; at < c.length; at += WRITE_PIECE) await sink.write(c.subarray(at, at + WRITE_PIECE));
      };
      await put(before);
      let written = 0;
      await tail.write({ write: async (c) => {
        written += c.length;
        if (written > tail.bytes) throw new Error(`writeVlcStreamed: the tail gave more than its ${tail.bytes} bytes`);
        await sink.write(c);
      } });
      if (written !== tail.bytes) throw new Error(`writeVlcStreamed: the tail gave ${written} of its ${tail.bytes} bytes`);
      await put(after);
    },
    { onBytes: onBytes && ((written) => onBytes(written, total)) },
  );
  return total;
}

/** A large file's 16-bit ids and their checksum made on threads (narrow-ids.ts), or undefined: encodeVlcParts makes them. */
function idsOnThreads(content: VlcContent): Promise<{ ids: Uint16Array; crc: number } | undefined> {
  const { assignments: a, manifest } = content;
  if (!(a instanceof Uint32Array) || assignmentWidthFor(manifest.m) !== 'u16' || a.length !== manifest.n) return Promise.resolve(undefined);
  return narrowIdsOnThreads(a, manifest.m);
}
