// The residual codecs' common shape (docs/quality.md, "The codecs"; the codecs as objects: docs/architecture.md, "Adding a codec"). A .vlc file stores each vector as its
// anchor id and, optionally, a coded residual r = x − (anchor as stored). Each codec owns one
// checksummed section of the file: it knows how to train and encode (its own file), how to turn its
// codes back into residuals, and how to write and read its section payload.

import type { Rows, VectorsLike } from '../vectors/dataset.js';
import type { Payload } from '../io/vlc/payload.js';
import type { CodeKind, Codes } from '../vectors/codes.js';

/**
 * A residual mode: 'none' (anchor ids alone) or a codec's name (codecs/sections.ts lists those a
 * file may name; codec-registry/ the codecs themselves).
 */
export type ResidualMode = string;
/** The mode of a codec that stores a residual section. */
export type CodedMode = string;

/** What every codec encodes: n×d vectors, the anchors as a reader will see them, each vector's anchor. */
export interface ResidualInput {
  /** The vectors, read a piece at a time (any size, f32 or f16: src/vectors/dataset.ts), or one small array. */
  x: VectorsLike;
  n: number;
  d: number;
  /** m×d anchors as stored (f16-rounded when the file holds f16), so decoding reproduces the encoder. */
  anchors: Float32Array;
  assign: ArrayLike<number>;
  /**
   * Rows whose reconstruction figures the caller will report (quality/measure.ts; null: every row).
   * An encoder that holds the vectors and codes anyway may return their row sums
   * (EncodedResiduals.rowSums): the GPU's does, so the host need not decode those rows again.
   */
  measureRows?: readonly number[] | null;
}

/** An encoder's answer: the residuals, their mean squared error, and the row sums of measureRows when it made them. */
export interface EncodedResiduals<R extends CodedResiduals = CodedResiduals> {
  residuals: R;
  residualEnergy: number;
  /** Per measured row, in measureRows' order: Σ (x − x̂)², Σ x², Σ x̂², Σ x·x̂ (quality/reconstruction.ts figuresFromRowSums). */
  rowSums?: Float64Array;
}

/** The residuals of n vectors in one codec's form: decodable, and writable as a section payload. */
export interface CodedResiduals {
  readonly mode: CodedMode;
  /**
   * Adds vector i's decoded residual to out[at .. at + d), which holds its anchor; f32 arithmetic as
   * stored. (`at` lets a block of rows be decoded into one array without a view per row.)
   */
  addTo(i: number, out: Float32Array, at?: number): void;
  /**
   * addTo of vectors i0 .. i1 − 1 into out[at ..), row after row (d values each): the same bits,
   * for a codec that decodes rows faster together (ec). Absent: addTo row by row.
   */
  addRange?(i0: number, i1: number, out: Float32Array, at?: number): void;
  /**
   * The section payload (deterministic: the same residuals give the same bytes), as one array or a
   * list of pieces written in turn: the codes come as pieces of at most viewLimitBytes() (1 GiB),
   * so a payload of any size is never copied into one buffer.
   */
  payload(): Uint8Array | Uint8Array[];
  /** The payload's CRC32C when the encoder already computed it (on its threads); undefined: the writer computes it. */
  readonly payloadCrc?: number;
  /** The file format version this payload needs, when later than its mode's (pq with a projection: 4). */
  readonly formatVersion?: number;
}

/** What a section reader knows from the rest of the file (already validated). */
export interface SectionContext {
  n: number;
  d: number;
  m: number;
  /** Each vector's anchor. */
  assignments: ArrayLike<number>;
  /** The file's format version (a section's layout may depend on it). */
  version: number;
}

/** A section's rows in blocks: block b is rows [b·rows, min(n, (b + 1)·rows)). */
export interface RowBlocks {
  /** Rows per block (the last holds the rest). */
  readonly rows: number;
  /** Block b's residuals, its rows numbered from 0; `assignments`: those rows' anchors. */
  block(b: number, assignments: ArrayLike<number>): CodedResiduals;
  /**
   * block(b) with the read made asynchronously (several at once, the caller's thread free
   * meanwhile) into `into` when given (at least `blockBytes` long: e.g. page-locked memory a GPU
   * copies from), the codes then views of it where the codec keeps them as stored. Absent: block().
   */
  blockAsync?(b: number, assignments: ArrayLike<number>, into?: Uint8Array): Promise<CodedResiduals>;
  /** Bytes blockAsync reads a block into (the largest block's); set with blockAsync. */
  readonly blockBytes?: number;
  /**
   * Every row's residuals in their coded form, their bytes read from the payload when asked and
   * not decoded on the host: for a device that decodes them itself (ec: a GPU's decoder over its
   * blocks' bytes, backend/cuda/ec.ts). Absent: a device takes the codes block by block.
   */
  coded?(assignments: ArrayLike<number>): CodedResiduals;
}

/** Reads one codec's section back. `corrupt(what)` builds the error for a payload that makes no sense. */
export interface ResidualSection {
  /** The 4-character section tag in the file. */
  readonly tag: string;
  /**
   * The payload's exact size for n vectors of d dims, which readers bound their input by before
   * reading; undefined when only the payload's own header says (pq: its M and bits).
   */
  payloadBytes(n: number, d: number): number | undefined;
  /**
   * The section read a block of rows at a time from a payload that stays where it lies (a file:
   * io/vlc/payload.ts FilePayload), its head checked now and each block's codes when read — so a
   * file of any size is decoded, searched and measured holding one block (io/vlc/blocks.ts).
   * `rowsHint`: about how many rows a block should hold. Codecs whose payload is a head then fixed
   * bytes per row get it from fixedRowBlocks (codecs/row-blocks.ts). Without it, a reader holds the payload whole.
   */
  rowBlocks?(payload: Payload, context: Omit<SectionContext, 'assignments'>, corrupt: (what: string) => Error, rowsHint?: number): RowBlocks;
  /**
   * The residuals from the section's payload, every field checked. The payload may be larger than
   * one typed array holds: read it through views (payload.view for fixed fields, pieces() or views
   * of whole rows for the codes; codes may also be viewed in place: vectors/codes.ts).
   */
  read(payload: Payload, context: SectionContext, corrupt: (what: string) => Error): CodedResiduals;
}

/**
 * A codec's encoder for rows that come a block at a time (api/compress-stream.ts: inputs larger
 * than memory), writing the same bytes as its encode(). Blocks come in row order, each starting at
 * a multiple of the encoders' 16,384-row blocks (codecs/scalar-rows.ts BLOCK_ROWS), in two passes: scan() sees every row
 * (what the codes' parameters need), then encode() gives each block's file bytes.
 */
/**
 * The scalar codec's loops over one stream block (rows whose first is a multiple of the encoder's
 * BLOCK_ROWS, codecs/scalar-rows.ts), where a device runs them (backend/device.ts CodecDevice: a
 * GPU's kernels, or the host's threads): the same figures, codes, errors and checksum bit for bit.
 * An encoder gives every block the same `input.anchors` array, never changed in between: a device
 * may keep its copy of them from one block to the next (a GPU does: backend/cuda/residual-blocks.ts).
 */
export interface ScalarBlockDevice {
  /** Each encoder block's per-dimension largest |r| and Σ r² (blocks × d, as blockRanges makes them). */
  scalarRanges(input: ResidualInput): Promise<{ maxAbs: Float64Array; sumSq: Float64Array }>;
  /** The rows' int8 codes under `scales` (levels L), each encoder block's error (blockCodes's), and the codes' CRC32C. */
  scalarCodes(input: ResidualInput, scales: Float32Array, L: number): Promise<{ codes: Codes<Int8Array>; blockErrs: Float64Array; crc: number }>;
}

export interface BlockEncoder {
  /**
   * First pass: rows [r0, r0 + x.n), their anchors `assign` (blocks in any order, several at
   * once), on `device` (a streamed compress's lane: its GPU, or the host).
   */
  scan(x: Rows, r0: number, assign: Uint32Array, device: ScalarBlockDevice): Promise<void>;
  /** After the scan: fixes the parameters; `sample(list)` reads the listed rows and their anchors. */
  finish(sample: (list: number[]) => { x: Rows; assign: Uint32Array }): void;
  /** The section payload's bytes before the rows' codes. */
  head(): Uint8Array;
  /** The bytes every row's codes take after head(): what the codes' store must hold. */
  readonly codesBytes: number;
  /** Shared memory encode() fills for a block of `rows` rows (its codes before packing): the caller may have it touched ahead (io/prefault.ts prefaultAhead). */
  scratchBytes?(rows: number): number;
  /**
   * Second pass: the payload bytes of rows [r0, r0 + x.n)'s codes and their CRC32C (blocks in any
   * order, several at once; the error is summed in row order all the same).
   */
  encode(x: Rows, r0: number, assign: Uint32Array, device: ScalarBlockDevice): Promise<{ pieces: Uint8Array[]; crc: number }>;
  /** Mean squared error of every row encoded (after the second pass), as encode() measures it. */
  residualEnergy(): number;
  /** The coded residuals of a few rows (x, their anchors `assign`): decoding the quality sample. */
  residualsOf(x: Rows, assign: Uint32Array): Promise<CodedResiduals>;
}

/**
 * One process's share of an encode whose rows are spread over several processes (MPI ranks:
 * api/rank-encode.ts): the whole data's shape, the anchors as stored and every row's anchor, and
 * this process's rows as runs of whole encoder blocks (codecs/scalar-rows.ts BLOCK_ROWS), each
 * starting at a multiple of BLOCK_ROWS (the last block of the data ends at n). Every block is in
 * exactly one process's runs, so the per-block sums each makes are the one-process encoder's.
 */
export interface SpreadPart {
  n: number;
  d: number;
  anchors: Float32Array;
  /** Every row's anchor (n). */
  assign: Uint32Array;
  /** This process's runs, ascending: rows [r0, r0 + x.n) of the whole data, each run's rows following the last's. */
  runs: Array<{ x: Rows; r0: number }>;
  /**
   * Where the runs' codes go, rows × width of `kind`, the runs' rows one after the other: the
   * caller's memory (at the gathering process, its place among every row's codes: nothing copied there).
   */
  place(kind: CodeKind, width: number, rows: number): Codes;
}

/** What a spread encoder asks of the other processes: collectives every process calls in the same order. */
export interface SpreadPeers {
  /** The element-wise sum over every process (each fills the entries of its own blocks or rows, zero elsewhere). */
  sum(a: Float64Array): Promise<Float64Array>;
  /** The listed rows of the whole data (global ids), in that order, as f32, from the processes that hold them. */
  rows(list: readonly number[]): Promise<Rows>;
}

/** A spread encoder's answer on each process: its runs' codes, and the whole data's error. */
export interface SpreadEncoded {
  /** Kind and bytes of each row's codes as held in memory (int4: one code a byte, packed only in the file). */
  kind: 'i8' | 'u8';
  width: number;
  /** The runs' codes, their rows one after the other (part.place's). */
  codes: Codes;
  /** Mean squared error over every row of every process (the encoder's sums, in its order). */
  residualEnergy: number;
  /** The coded residuals of all n rows from their codes in row order (where they are gathered). */
  residuals(codes: Codes): CodedResiduals;
}
