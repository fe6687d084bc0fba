// Inputs in several files: `vlc compress a.npy b.npy`, a directory, or a glob ('shards/*.parquet',
// quoted so that vlc expands it; the shell's own expansion gives the same list). The files' rows
// are concatenated in name order (plain code-point order of the paths: zero-padded shard names
// sort as written), and every file must hold vectors of the same dimension and element type.
//
// Memory: when every file's row count can be read from its header or footer (npy, safetensors,
// fvecs, bvecs, raw, Parquet), the whole dataset is allocated once and each file, read on its own,
// is copied into its rows and dropped: the peak is the dataset plus one file. Otherwise (CSV,
// JSONL, Arrow, HDF5, npz) the files are read first and then copied together (twice the vectors).
import * as fs from 'node:fs';
import * as path from 'node:path';
import { UsageError } from '../errors.js';
import { log } from '../log.js';
import { allocStore, elementBytes, elements, forEachPiece, inputDtypeOf, type Dataset, type InputDtype } from '../vectors/dataset.js';
import { badInput } from './readers/source.js';
import { probeRows, readDataset, type ReadOptions } from './read.js';
import { concatBlockReaders, openBlockReader, type BlockReader } from './readers/blocks.js';
import { quoteName } from './names.js';

const WILDCARD = /[*?[]/;

/**
 * The files an input names: '-' alone; a directory's regular, non-hidden files; a glob's matches
 * (`*`, `?` and `[...]` in any path component; no `**`); or the path itself. Sorted by name.
 * One file named twice — by the same path, a hard or symbolic link, a glob that also matches it —
 * is refused (its rows would be stored twice) unless `allowDuplicates` says it is meant.
 */
export function expandInputs(args: string[], allowDuplicates = false): string[] {
  if (args.length === 0) throw new UsageError('no input given');
  if (args.includes('-') && args.length > 1) throw new UsageError('- (stdin) must be the only input');
  const out: string[] = [];
  for (const arg of args) out.push(...expandOne(arg));
  if (!allowDuplicates) refuseDuplicates(out);
  return args.length === 1 && !isDirectory(args[0]) && !hasWildcard(args[0]) ? out : [...out].sort(byName);
}

/** The same file twice, compared by device and inode (links followed): a usage error naming both. */
function refuseDuplicates(files: string[]): void {
  if (files.length < 2) return;
  const seen = new Map<string, string>();
  for (const f of files) {
    let id: string;
    try {
      const st = fs.statSync(f);
      id = `${st.dev}:${st.ino}`;
    } catch {
      continue; // missing or unreadable: its reader says so
    }
    const first = seen.get(id);
    if (first !== undefined)
      throw new UsageError(
        `${first === f ? `${quoteName(f)} is given twice` : `${quoteName(first)} and ${quoteName(f)} are the same file`}: its rows would be read twice; ` +
          'drop one, or pass --allow-duplicate-inputs if that is meant',
      );
    seen.set(id, f);
  }
}

function byName(a: string, b: string): number {
  return a < b ? -1 : a > b ? 1 : 0;
}

function hasWildcard(p: string): boolean {
  return WILDCARD.test(p) && !fs.existsSync(p);
}

/** What p names, links followed; undefined where it cannot be stat'ed (absent, no permission). */
function statOf(p: string): fs.Stats | undefined {
  try {
    return fs.statSync(p);
  } catch {
    return undefined;
  }
}

const isDirectory = (p: string) => statOf(p)?.isDirectory() === true;
const isFile = (p: string) => statOf(p)?.isFile() === true;

function expandOne(arg: string): string[] {
  if (isDirectory(arg)) {
    const files = fs
      .readdirSync(arg, { withFileTypes: true })
      .filter((e) => !e.name.startsWith('.') && (e.isFile() || (e.isSymbolicLink() && isFile(path.join(arg, e.name)))))
      .map((e) => path.join(arg, e.name));
    if (files.length === 0) throw new UsageError(`${quoteName(arg)}: the directory holds no files to read`);
    return files;
  }
  if (!hasWildcard(arg)) return [arg];
  if (arg.includes('**')) throw new UsageError(`${quoteName(arg)}: ** is not supported; name the directory or use * within one level`);
  const matches = glob(arg);
  if (matches.length === 0) throw new UsageError(`${quoteName(arg)}: no file matches this pattern`);
  return matches;
}

/** Files matching a pattern with wildcards, walking one path component at a time. */
function glob(pattern: string): string[] {
  const absolute = path.isAbsolute(pattern);
  const parts = pattern.split('/').filter((p, i) => p !== '' || i === 0);
  let bases = [absolute ? '/' : '.'];
  for (let i = absolute ? 1 : 0; i < parts.length; i++) {
    const part = parts[i];
    const last = i === parts.length - 1;
    const next: string[] = [];
    for (const base of bases) {
      const join = (name: string) => (base === '.' && !absolute ? name : path.join(base, name));
      if (!WILDCARD.test(part)) {
        next.push(join(part));
        continue;
      }
      const re = globRegExp(part);
      let names: string[];
      try {
        names = fs.readdirSync(base);
      } catch {
        continue;
      }
      for (const name of names) if (re.test(name) && (part.startsWith('.') || !name.startsWith('.'))) next.push(join(name));
    }
    bases = last ? next.filter(isFile) : next.filter(isDirectory);
  }
  return bases;
}

/** One path component's wildcards as a regular expression: * any run, ? one character, [...] a set. */
function globRegExp(part: string): RegExp {
  let re = '';
  for (let i = 0; i < part.length; i++) {
    const c = part[i];
    if (c === '*') re += '[^/]*';
    else if (c === '?') re += '[^/]';
    else if (c === '[') {
      const end = part.indexOf(']', i + 1);
      if (end < 0) re += '\\[';
      else {
        const set = part.slice(i + 1, end).replace(/^!/, '^').replace(/\\/g, '\\\\');
        re += `[${set}]`;
        i = end;
      }
    } else re += c.replace(/[.+^${}()|\\]/g, '\\$&');
  }
  return new RegExp(`^${re}$`);
}

/**
 * Read every file an input names (expandInputs) as one dataset: one file is read as it is;
 * several are concatenated in name order (see the top of the file for memory).
 */
export async function readInputs(input: string | string[], o: ReadOptions = {}): Promise<Dataset> {
  const files = expandInputs(Array.isArray(input) ? input : [input], o.allowDuplicateInputs);
  if (files.length === 1) return readDataset(files[0], o);
  const inPlace = await readInPlace(files, o);
  if (inPlace) {
    const { r0: _r0, of: _of, ...ds } = inPlace;
    return ds;
  }
  const first = await readDataset(files[0], o);
  const counts = await Promise.all(files.slice(1).map((f) => probeRows(f, o)));
  // Room for every row when the counts are known (a file may still come out shorter: rows dropped).
  const room = counts.every((c) => c !== undefined) ? first.n + counts.reduce((a, b) => a! + b!, 0)! : undefined;
  if (room === undefined) log().info(`${files.length} input files whose row counts only their contents give: each is read, then all are copied together (twice the vectors in memory)`);
  let whole: Dataset | undefined = room === undefined ? undefined : { ...first, ...allocStore(room, first.d, first.dtype), n: 0 };
  const parts: Dataset[] = [];
  const droppedRows: number[] = []; // input ids over all files: a file's ids follow every row of the files before it
  let inputRows = 0;
  // Files in different element types (u8 and f64, both held as f32) are restored as they are held.
  let inputDtype: InputDtype | undefined = inputDtypeOf(first);
  const take = (part: Dataset) => {
    for (const r of part.droppedRows ?? []) droppedRows.push(inputRows + r);
    inputRows += part.n + part.dropped;
    if (inputDtypeOf(part) !== inputDtype) inputDtype = undefined;
    if (whole && whole.n + part.n <= room!) append(whole, part);
    else if (whole) {
      // More rows than the header promised (never for a well-formed file): gather, then copy.
      parts.push(whole, part);
      whole = undefined;
    } else parts.push(part);
  };
  take(first);
  for (const f of files.slice(1)) {
    const part = await readDataset(f, o);
    sameShape(f, part, files[0], first);
    take(part);
  }
  const format = `${files.length} files, ${first.format}`;
  const rowFacts = { dropped: droppedRows.length, ...(droppedRows.length ? { droppedRows } : {}), inputDtype };
  if (whole) return { ...whole, format, ...rowFacts };
  const out: Dataset = { ...first, ...allocStore(parts.reduce((s, p) => s + p.n, 0), first.d, first.dtype), n: 0, format, ...rowFacts };
  for (const p of parts) append(out, p);
  return out;
}

/** Rows a piece of the in-place read holds: the threads' share is large, and progress moves. */
const PIECE_BYTES = 1 << 30;

/**
 * Fixed-layout files (.npy f32/f16 in C order, .fvecs: io/readers/blocks.ts) read straight into
 * their rows of one dataset, a piece at a time on the reader threads, each value checked as it
 * arrives: one copy of the bytes, where reading each file into memory of its own and copying it
 * over made two (and faulted in a file's worth of fresh pages each time). `range` picks rows
 * [r0, r1) of the files' n rows (an MPI rank's share); default all. Undefined when a file is not of
 * such a layout, or a bad value meets --drop-invalid (dropping renumbers the rows: the file-by-file
 * path does it). A bad value otherwise is the file-by-file path's error.
 */
export async function readInPlace(files: string[], o: ReadOptions, range?: (n: number) => { r0: number; r1: number }): Promise<(Dataset & { r0: number; of: number }) | undefined> {
  const reader = openInputBlocks(files, o);
  if (!reader) return undefined;
  try {
    const { d, dtype } = reader;
    const { r0, r1 } = range ? range(reader.n) : { r0: 0, r1: reader.n };
    const n = r1 - r0;
    const ds: Dataset = { ...allocStore(n, d, dtype), n, d, format: reader.format, dropped: 0, inputDtype: reader.inputDtype };
    const rowBytes = d * elementBytes(dtype);
    const per = Math.max(1, Math.floor(PIECE_BYTES / rowBytes));
    for (let a = 0; a < n; a += per) {
      const b = Math.min(n, a + per);
      const got = await reader.readChecked(r0 + a, r0 + b, { ...ds, byteOffset: ds.byteOffset + a * rowBytes, n: b - a });
      if (got.ds.buffer !== ds.buffer) throw new Error('readInPlace: a piece was read outside the dataset');
      if (got.problem) {
        if (o.dropInvalid) return undefined;
        throw badInput(got.problem.file, `${got.problem.what}; fix the data or pass --drop-invalid to skip such rows`);
      }
      o.onBytes?.(b * rowBytes, n * rowBytes);
    }
    return { ...ds, r0, of: reader.n };
  } finally {
    reader.close();
  }
}

/** A usage error unless file f's vectors have the first file's dimension and element type. */
function sameShape(f: string, part: { d: number; dtype: string }, first: string, of: { d: number; dtype: string }): void {
  if (part.d !== of.d)
    throw new UsageError(`${quoteName(f)}: ${part.d}-dimensional vectors, but ${quoteName(first)} holds ${of.d}; every file of a sharded input must have the same dimension`);
  if (part.dtype !== of.dtype)
    throw new UsageError(`${quoteName(f)}: ${part.dtype} vectors, but ${quoteName(first)} holds ${of.dtype}; every file of a sharded input must have the same element type`);
}

/** Copy `part`'s rows after the `into.n` rows `into` already holds, a view at a time. */
function append(into: Dataset, part: Dataset): void {
  const d = into.d;
  forEachPiece(part, (v, r0, r1) => elements(into, (into.n + r0) * d, (r1 - r0) * d).set(v));
  into.n += part.n;
}

/**
 * Every file an input names (expandInputs) read where it lies, a block of rows at a time, as one
 * reader whose rows are the files' rows concatenated in the order readInputs reads them; undefined
 * when some file is not in a layout that allows it (io/readers/blocks.ts: the whole-file readers
 * then read the input and say what is wrong, if anything).
 */
export function openInputBlocks(input: string | string[], o: Pick<ReadOptions, 'format' | 'allowDuplicateInputs'> = {}): BlockReader | undefined {
  const files = expandInputs(Array.isArray(input) ? input : [input], o.allowDuplicateInputs);
  const parts: BlockReader[] = [];
  try {
    for (const f of files) {
      const r = openBlockReader(f, o.format);
      if (!r) {
        parts.forEach((p) => p.close());
        return undefined;
      }
      parts.push(r);
    }
    for (const [k, p] of parts.entries()) if (k > 0) sameShape(files[k], p, files[0], parts[0]);
    return concatBlockReaders(parts);
  } catch (e) {
    parts.forEach((p) => p.close());
    throw e;
  }
}
