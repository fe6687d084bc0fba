// A .vlc file read where it lies: what info, search (exhaustive, CPU), eval and decompress use so
// that nothing holds the codes. The file is checked as readVlc checks it — header, manifest, every
// section header and padding, every payload's checksum (streamed a piece at a time through
// FilePayload) and the small sections' values (anchors, assignments, norms, which are held) — and
// its residual section is then read a block of rows at a time through its codec's rowBlocks
// (codecs/types.ts), each block's codes checked as they are read. Memory: the anchors, one id and
// (cosine) one norm per vector, and one block.
import * as fs from 'node:fs';
import { UsageError } from '../../errors.js';
import { log } from '../../log.js';
import { quoteName } from '../names.js';
import { hasResiduals, sectionOf } from '../../codecs/sections.js';
import type { CodedResiduals, RowBlocks } from '../../codecs/types.js';
import { parallelFileCrcs, PARALLEL_CHECK_MIN_BYTES, type PayloadCrc } from './checksums.js';
import { decodeVlc, decodeVlcHeader, FILE_HEADER_BYTES, type Assignments, type VlcFile } from './format.js';
import { FilePayload, Payload } from './payload.js';

/**
 * Residuals whose rows are read from the file a block at a time: addTo(i) reads row i's block
 * when it is not the one held. Rows asked in order (decoding, the exhaustive search, eval's
 * passes) read each block once; rows in any order may read a block per row.
 */
export class BlockedResiduals implements CodedResiduals {
  private held = -1;
  private current?: CodedResiduals;
  /** Blocks read so far (tests: a pass in row order reads each once). */
  reads = 0;

  constructor(
    readonly mode: string,
    private readonly blocks: RowBlocks,
    private readonly assignments: Assignments,
    private readonly n: number,
    /** Values a row. */
    private readonly d: number,
    private readonly readWhole: () => CodedResiduals,
  ) {}

  /**
   * Every row's residuals in their coded form, read from the file when asked and not decoded on the
   * host (RowBlocks.coded: ec, for a GPU that decodes its blocks itself), or undefined: the codec
   * gives none, and a device takes the codes a block at a time (block()).
   */
  coded(): CodedResiduals | undefined {
    return this.blocks.coded?.(this.assignments);
  }

  /** Every row's residuals in memory, read and checked as a whole-file read does (a search whose scorer needs them all). */
  whole(): CodedResiduals {
    this.current = undefined;
    this.held = -1;
    return this.readWhole();
  }

  /** Rows per block. */
  get rows(): number {
    return this.blocks.rows;
  }

  /** Block b's residuals (its rows numbered from 0), read unless it is the one held. */
  block(b: number): CodedResiduals {
    if (b !== this.held) {
      this.current = undefined; // the old block's memory goes before the next is read
      this.current = this.blocks.block(b, this.blockAssignments(b));
      this.held = b;
      this.reads++;
    }
    return this.current!;
  }

  /**
   * Block b read on libuv's threads (into `into` when given: page-locked memory a GPU copies from;
   * the result's codes may be views of it, valid until it is reused). The block held, or any block
   * of a codec without an asynchronous read, is block(b).
   */
  async blockAsync(b: number, into?: Uint8Array): Promise<CodedResiduals> {
    if (!this.blocks.blockAsync || b === this.held) return this.block(b);
    this.reads++;
    return this.blocks.blockAsync(b, this.blockAssignments(b), into);
  }

  /** Block b's rows' anchors. */
  private blockAssignments(b: number): ArrayLike<number> {
    const r0 = b * this.blocks.rows;
    return this.assignments.subarray(r0, Math.min(this.n, r0 + this.blocks.rows));
  }

  /** Bytes blockAsync reads a block into, or undefined (the codec reads its blocks itself). */
  get blockBytes(): number | undefined {
    return this.blocks.blockAsync ? this.blocks.blockBytes : undefined;
  }

  addTo(i: number, out: Float32Array, at = 0): void {
    const b = Math.floor(i / this.blocks.rows);
    this.block(b).addTo(i - b * this.blocks.rows, out, at);
  }

  addRange(i0: number, i1: number, out: Float32Array, at = 0): void {
    for (let i = i0, o = at; i < i1; ) {
      const b = Math.floor(i / this.blocks.rows), r0 = b * this.blocks.rows, e = Math.min(i1, r0 + this.blocks.rows), held = this.block(b);
      if (held.addRange) held.addRange(i - r0, e - r0, out, o);
      else for (let r = i; r < e; r++) held.addTo(r - r0, out, o + (r - i) * this.d);
      o += (e - i) * this.d;
      i = e;
    }
  }

  payload(): never {
    throw new Error('the residuals of a file read in blocks are not written back: read the file whole (readVlc)');
  }
}

let rowsForTests: number | undefined;

/** Tests: blocks of about `rows` rows by default (undefined: the codec's own default). */
export function setOnDiskRowsForTests(rows?: number): void {
  rowsForTests = rows;
}

/** A .vlc file checked from disk, its residuals read in blocks (BlockedResiduals); close() closes the file. */
export interface VlcOnDisk {
  file: VlcFile;
  close(): void;
}

/**
 * `path` read where it lies, or undefined when it is not a regular file (stdin, a FIFO: read those
 * whole with readVlc). `onChecked(bytes, total)` hears the checksums; `rowsHint`: about how many
 * rows a block of residuals holds (default: the codec's, a few MiB of codes).
 */
export function openVlcOnDisk(
  path: string, onChecked?: (bytes: number, total: number) => void, rowsHint?: number, computed: readonly PayloadCrc[] = [],
): VlcOnDisk | undefined {
  const size = vlcFileSize(path);
  return size === undefined ? undefined : openAt(path, fs.openSync(path, 'r'), size, onChecked, rowsHint, computed);
}

/**
 * openVlcOnDisk with the large payloads' checksums computed first on worker threads, each reading
 * its slices of the file (checksums.ts parallelFileCrcs); the same checks, the same errors.
 */
export async function openVlcOnDiskThreaded(path: string, onChecked?: (bytes: number, total: number) => void, rowsHint?: number): Promise<VlcOnDisk | undefined> {
  const size = vlcFileSize(path);
  if (size === undefined) return undefined;
  const fd = fs.openSync(path, 'r');
  let computed: PayloadCrc[] = [];
  try {
    if (size >= PARALLEL_CHECK_MIN_BYTES) {
      const whole = new FilePayload(fd, 0, size);
      computed = await parallelFileCrcs(path, whole, decodeVlcHeader(whole, path).manifestEnd, onChecked);
    }
  } catch (e) {
    fs.closeSync(fd);
    throw e;
  }
  return openAt(path, fd, size, onChecked, rowsHint, computed);
}

/** The size of `path` when it is a regular file that can hold a .vlc header, else undefined (stdin, a FIFO, none: readVlc reads those, or says why). */
function vlcFileSize(path: string): number | undefined {
  if (path === '-') return undefined;
  try {
    const st = fs.statSync(path);
    return st.isFile() && st.size >= FILE_HEADER_BYTES ? st.size : undefined;
  } catch {
    return undefined;
  }
}

/** The file open at `fd` (`size` bytes) checked and its residuals readied; `fd` is the result's to close, or closed here on an error. */
function openAt(
  path: string, fd: number, size: number, onChecked: ((bytes: number, total: number) => void) | undefined, rowsHint: number | undefined, computed: readonly PayloadCrc[],
): VlcOnDisk {
  try {
    const whole = new FilePayload(fd, 0, size);
    const file = decodeVlc(whole, path, onChecked, computed, true);
    for (const w of file.warnings) log().warn(w);
    const { residualPayload, ...rest } = file;
    const residuals = residualPayload && blockedResiduals(rest, residualPayload, path, rowsHint ?? rowsForTests);
    return { file: { ...rest, ...(residuals ? { residuals } : {}) }, close: () => fs.closeSync(fd) };
  } catch (e) {
    fs.closeSync(fd);
    throw e;
  }
}

function blockedResiduals(file: VlcFile, payload: Payload, path: string, rowsHint?: number): BlockedResiduals | undefined {
  const { residual, n, d, m } = file.manifest;
  if (!hasResiduals(residual)) return undefined;
  const section = sectionOf(residual)!;
  const corrupt = (what: string) => new UsageError(`${quoteName(path)}: ${what}: file is corrupted`);
  const context = { n, d, m, version: file.version };
  const whole = () => section.read(Payload.of(payload.view(0, payload.length)), { ...context, assignments: file.assignments }, corrupt);
  // A codec without rowBlocks (one registered by a program) is read whole: one block of n rows.
  const blocks: RowBlocks = section.rowBlocks?.(payload, context, corrupt, rowsHint) ?? { rows: Math.max(1, n), block: () => whole() };
  return new BlockedResiduals(residual, blocks, file.assignments, n, d, whole);
}
