// Reading and writing .vlc files: from a path or stdin ('-'), to a path (atomically) or stdout ('-').
// Typed arrays are viewed in place, which assumes a little-endian host — every platform Node.js
// ships for (x86-64, arm64) is.
import * as fs from 'node:fs';
import { UsageError } from '../../errors.js';
import { writeAtomic } from '../atomic.js';
import { log } from '../../log.js';
import { decodeVlc, encodeVlc, type VlcContent, type VlcFile } from './format.js';

/** Read and validate a .vlc file; warnings (unknown optional sections) go to the log. */
export async function readVlc(path: string): Promise<VlcFile> {
  const bytes = path === '-' ? await readStdin() : readFileOrExplain(path);
  const file = decodeVlc(bytes, path === '-' ? '<stdin>' : path);
  for (const w of file.warnings) log().warn(w);
  return file;
}

/** Write a .vlc file atomically (temp + rename), or stream it to stdout when target is '-'. Returns its size. */
export async function writeVlc(target: string, content: VlcContent): Promise<number> {
  const chunks = encodeVlc(content);
  await writeAtomic(target, async (sink) => {
    for (const c of chunks) await sink.write(c);
  });
  return chunks.reduce((s, c) => s + c.length, 0);
}

function readFileOrExplain(path: string): Uint8Array {
  let st: fs.Stats;
  try {
    st = fs.statSync(path);
  } catch (e) {
    const code = (e as NodeJS.ErrnoException).code;
    if (code === 'ENOENT') throw new UsageError(`${path}: no such file`);
    throw new UsageError(`${path}: cannot read (${code ?? (e as Error).message})`);
  }
  if (st.isDirectory()) throw new UsageError(`${path} is a directory; give a .vlc file`);
  try {
    return fs.readFileSync(path);
  } catch (e) {
    throw new UsageError(`${path}: cannot read (${(e as NodeJS.ErrnoException).code ?? (e as Error).message})`);
  }
}

async function readStdin(): Promise<Uint8Array> {
  // Waiting for a binary file to be typed in is never what was meant.
  if (process.stdin.isTTY) throw new UsageError('- reads a .vlc file from stdin, but stdin is a terminal; pipe one in or give its path');
  const parts: Buffer[] = [];
  for await (const chunk of process.stdin) parts.push(chunk as Buffer);
  return Buffer.concat(parts);
}
