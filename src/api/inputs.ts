// The inputs of search() and evaluate(): a .vlc file (a path, '-' for stdin, or one already opened)
// and vectors (paths read as compress reads them, vectors in memory, or a Dataset already read),
// each read as a step of the caller's progress display.
import type { ReadOptions } from '../io/read.js';
import { readVlc } from '../io/vlc/file.js';
import { openVlcOnDiskThreaded } from '../io/vlc/on-disk.js';
import type { VlcFile } from '../io/vlc/format.js';
import { quoteName } from '../io/names.js';
import type { Reporter, ReportStep } from '../log.js';
import type { Dataset } from '../vectors/dataset.js';
import { datasetOf, type Vectors } from './compress.js';

/** A .vlc file to read ('-': stdin), or one read already (openVlc()). */
export type VlcInput = string | VlcFile;
/** Embedding files (read as compress reads them), n × d values in memory, or a Dataset from readVectors(). */
export type VectorsInput = string | string[] | Vectors | Dataset;

/**
 * An onBytes callback for a reader that shows "reading <name>" as a step of `progress`, opened on
 * its first report and ended by the next step (or `end()`).
 */
export function reportBytes(progress: Reporter, input: string, verb = 'reading'): ((read: number, total?: number) => void) & { end(): void } {
  let step: ReportStep | undefined;
  const onBytes = (read: number, total?: number) => {
    step ??= progress.step(`${verb} ${input === '-' ? 'stdin' : quoteName(input)}`, 'bytes', total);
    step.update(read, total);
  };
  return Object.assign(onBytes, { end: () => step?.end() });
}

/** The .vlc file, read and validated (every checksum) unless already opened. */
export async function vlcOf(vlc: VlcInput, progress: Reporter): Promise<VlcFile> {
  if (typeof vlc !== 'string') return vlc;
  const reading = reportBytes(progress, vlc);
  const checking = reportBytes(progress, vlc, 'checking');
  try {
    return await readVlc(vlc, reading, checking);
  } finally {
    reading.end();
    checking.end();
  }
}

/**
 * The .vlc file with its codes left on disk when it is a path to a regular file (io/vlc/on-disk.ts:
 * checked as vlcOf checks it, its residuals read a block of rows at a time, `rowsHint` rows about);
 * otherwise as vlcOf reads it. close() closes the file.
 */
export async function vlcOnDiskOf(vlc: VlcInput, progress: Reporter, rowsHint?: number): Promise<{ file: VlcFile; close(): void }> {
  if (typeof vlc === 'string') {
    const checking = reportBytes(progress, vlc, 'checking');
    try {
      const opened = await openVlcOnDiskThreaded(vlc, checking, rowsHint);
      if (opened) return opened;
    } finally {
      checking.end();
    }
  }
  return { file: await vlcOf(vlc, progress), close: () => {} };
}

/** The vectors as a Dataset: files read (NaN/Inf refused or dropped, as for compress), memory checked, a Dataset as it is. */
export async function vectorsOf(input: VectorsInput, o: ReadOptions, progress: Reporter): Promise<Dataset> {
  if (isDataset(input)) return input;
  if (typeof input !== 'string' && !Array.isArray(input)) return datasetOf(input, o);
  const reading = reportBytes(progress, typeof input === 'string' ? input : input.join(' '));
  try {
    return await datasetOf(input, { ...o, onBytes: reading });
  } finally {
    reading.end();
  }
}

/** How messages name an input: its path (quoted when odd), several paths, or what was given in memory. */
export function nameOf(input: VectorsInput | VlcInput): string {
  if (typeof input === 'string') return quoteName(input);
  if (Array.isArray(input)) return input.map(quoteName).join(' ');
  return 'version' in input && 'manifest' in input ? 'the .vlc file given' : 'the vectors given';
}

function isDataset(input: VectorsInput): input is Dataset {
  return typeof input === 'object' && !Array.isArray(input) && 'buffer' in input && 'dtype' in input;
}
