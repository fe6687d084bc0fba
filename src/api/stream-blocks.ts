// The passes of a streamed compress (compress-stream.ts) over the blocks of an input read where it
// lies: a few blocks in flight at once ("lanes", each reading its next block while it works on
// this one), the exact final pass spread over the backend's parts (one GPU a lane), and where the
// codes of the last pass are kept until the file is written (host memory, or a temp file beside
// the output when memory is short). Every result is put in its block's place, so the bytes do not
// depend on the order the blocks finish in.
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { addInt64, maxInt64 } from '../backend/fixed.js';
import type { Backend, Engine, IterParams, Partials } from '../backend/types.js';
import { checkpoint, onCleanup } from '../interrupt.js';
import type { OutputPlan } from '../io/output.js';
import { crc32cCombine } from '../io/vlc/crc32c.js';
import type { Dataset } from '../vectors/dataset.js';

const FINAL: IterParams = { temperature: 0, step: 0, huber: 0 };

/** Blocks of `per` rows of n, `lanes` at a time: `read` fills a block (into one of its lane's two buffers), `work` takes it. */
export interface BlockPlan {
  n: number;
  per: number;
  lanes: number;
  read(r0: number, r1: number, into?: Dataset): Promise<Dataset>;
  /** Whether block b (from 0) should still be read: false stops the pass at the blocks already begun. */
  wanted?(b: number): boolean;
}

/**
 * Every block through `work(lane, x, r0, r1)`, each lane taking the next block not yet taken and
 * reading the one after while it works. A failure stops the lanes from taking more blocks; every
 * read and work begun is waited for, then the first failure (by block) is thrown.
 */
export async function overBlocks(p: BlockPlan, work: (lane: number, x: Dataset, r0: number, r1: number) => Promise<void>): Promise<void> {
  const blocks = Math.ceil(p.n / p.per);
  let next = 0;
  let stop = false;
  const failures: Array<{ b: number; e: unknown }> = [];
  const lane = async (k: number) => {
    const slot: Array<Dataset | undefined> = [undefined, undefined];
    let s = 0;
    const issue = () => {
      if (stop || next >= blocks || (p.wanted && !p.wanted(next))) return undefined;
      const b = next++, r0 = b * p.per, r1 = Math.min(p.n, r0 + p.per), at = s;
      s ^= 1;
      const got = p.read(r0, r1, slot[at]).then((ds) => (slot[at] = ds));
      got.catch(() => {}); // heard where it is awaited: not an unhandled rejection meanwhile
      return { b, r0, r1, got };
    };
    let cur = issue();
    while (cur) {
      const c = cur;
      cur = undefined;
      let ahead: ReturnType<typeof issue> = undefined;
      try {
        const x = await c.got;
        await checkpoint();
        ahead = issue();
        await work(k, x, c.r0, c.r1);
        cur = ahead;
      } catch (e) {
        stop = true;
        failures.push({ b: c.b, e });
        if (ahead) await ahead.got.catch(() => {});
      }
    }
  };
  await Promise.all(Array.from({ length: Math.max(1, Math.min(p.lanes, blocks)) }, (_, k) => lane(k)));
  if (failures.length) throw failures.sort((a, b) => a.b - b.b)[0].e;
}

/**
 * The exact hard pass over every row: each block on an engine of one of `parts` (lane k on part
 * k), told the whole data's figures (setGlobal: the whole data's n and largest |x|, its rows'
 * offset, as a shard of a sharded engine is told) so that its fixed-point sums are the one
 * engine's; the parts' partial sums added exactly (integers: any order), the energy taken from the
 * total (as a sharded engine does). `scan` sees each block (as read) with its anchors and the part it ran on.
 */
export async function finalPass(
  parts: Backend[], plan: Omit<BlockPlan, 'lanes'>, m: number, maxAbs: number, anchors: Float32Array,
  scaled: (x: Dataset) => Dataset, scan: (x: Dataset, r0: number, assign: Uint32Array, part: Backend) => Promise<void>,
): Promise<{ energy: number; assignments: Uint32Array }> {
  const { n } = plan;
  const assignments = new Uint32Array(n);
  let total: Partials | undefined;
  let seen = 0;
  let rows = 0;
  // Each lane's last engine stays open until the end: one of them turns the total into the energy.
  const last: Array<Engine | undefined> = parts.map(() => undefined);
  try {
    await overBlocks({ ...plan, lanes: parts.length }, async (k, x, r0, r1) => {
      await last[k]?.dispose();
      last[k] = undefined;
      const engine = await parts[k].open(scaled(x), m);
      last[k] = engine;
      engine.setGlobal({ n, maxAbs, rowOffset: r0 });
      await engine.setAnchors(anchors);
      const part = await engine.accumulate(FINAL);
      if (!total) total = { sums: part.sums.slice(), far: part.far.slice() };
      else {
        addInt64(total.sums, part.sums);
        maxInt64(total.far, part.far);
      }
      seen = Math.max(seen, engine.maxAbs);
      const assign = await engine.assignments();
      assignments.set(assign, r0);
      rows += r1 - r0;
      await scan(x, r0, assign, parts[k]);
    });
    if (rows !== n || !total) throw new Error(`streamed final pass: ${rows} of ${n} rows`);
    // The blocks were told the largest |x| the first pass found: it must be theirs.
    if (seen !== maxAbs) throw new Error(`streamed final pass: the blocks' largest |x| is ${seen}, the first pass found ${maxAbs}`);
    const engine = last.find((e) => e !== undefined)!;
    return { energy: (await engine.applyUpdate(total, FINAL)).energy, assignments };
  } finally {
    await Promise.allSettled(last.map((e) => e?.dispose()));
  }
}

/** The codes of the last pass until the file is written: each block's bytes put in its place. */
export interface CodesStore {
  readonly where: 'memory' | 'temp file';
  /** Rows [r0, r0 + rows)'s codes, in pieces (kept as they are in memory), and their CRC32C. */
  put(r0: number, rows: number, pieces: Uint8Array[], crc: number): void;
  /** Every row's codes put: their size, and their CRC32C after `crc` (the payload's head). */
  tail(crc: number): { bytes: number; crc: number; write(sink: { write(chunk: Uint8Array): Promise<void> }): Promise<void> };
  discard(): void;
}

let inMemoryForTests: boolean | undefined;

/** Tests: keep the codes in memory (true) or in a temp file (false); undefined: as memory allows. */
export function setCodesInMemoryForTests(v?: boolean): void {
  inMemoryForTests = v;
}

/**
 * Where `bytes` of codes are kept: in host memory when they take at most 60 % of the memory
 * available now (a billion 128-d int8 codes are 128 GB: no second copy on a disk that holds the
 * output), else in a temp file beside the output (the same disk), or in the temp directory for stdout.
 */
export function openCodesStore(out: OutputPlan, n: number, bytes: number): CodesStore {
  const memory = inMemoryForTests ?? bytes <= 0.6 * os.freemem();
  return memory ? memoryStore(n) : spillStore(out, n);
}

/** Blocks' CRCs, in row order, as one. */
function crcOf(crc: number, blocks: Map<number, { len: number; crc: number; rows: number }>, n: number): { bytes: number; crc: number } {
  let bytes = 0;
  let rows = 0;
  for (const [r0, b] of [...blocks.entries()].sort((a, c) => a[0] - c[0])) {
    if (r0 !== rows) throw new Error(`streamed codes: rows ${rows}..${r0} missing`);
    crc = crc32cCombine(crc, b.crc, b.len);
    bytes += b.len;
    rows = r0 + b.rows;
  }
  if (rows !== n) throw new Error(`streamed codes: ${rows} of ${n} rows`);
  return { bytes, crc };
}

function memoryStore(n: number): CodesStore {
  const blocks = new Map<number, { len: number; crc: number; rows: number; pieces: Uint8Array[] }>();
  return {
    where: 'memory',
    put: (r0, rows, pieces, crc) => void blocks.set(r0, { len: lengthOf(pieces), crc, rows, pieces }),
    tail(crc) {
      const t = crcOf(crc, blocks, n);
      return {
        ...t,
        async write(sink) {
          for (const r0 of [...blocks.keys()].sort((a, c) => a - c)) {
            for (const data of blocks.get(r0)!.pieces) {
              for (let at = 0; at < data.length; at += COPY_CHUNK) await sink.write(data.subarray(at, at + COPY_CHUNK));
            }
          }
        },
      };
    },
    discard: () => blocks.clear(),
  };
}

const COPY_CHUNK = 16 << 20;

const lengthOf = (pieces: Uint8Array[]) => pieces.reduce((s, p) => s + p.length, 0);

/** A temp file for the codes: each block written at its rows' place (every row the same size). */
function spillStore(out: OutputPlan, n: number): CodesStore {
  const dir = out.kind === 'file' ? path.dirname(path.resolve(out.path)) : os.tmpdir();
  const file = path.join(dir, `.vlc-codes-${process.pid}-${Date.now().toString(36)}.tmp`);
  let fd: number | undefined = fs.openSync(file, 'wx+', 0o600);
  const blocks = new Map<number, { len: number; crc: number; rows: number }>();
  let rowBytes: number | undefined;
  const drop = () => {
    if (fd !== undefined) fs.closeSync(fd);
    fd = undefined;
    fs.rmSync(file, { force: true });
  };
  const unregister = onCleanup(drop);
  return {
    where: 'temp file',
    put(r0, rows, pieces, crc) {
      const len = lengthOf(pieces);
      rowBytes ??= len / rows;
      if (len !== rowBytes * rows) throw new Error(`streamed codes: ${len} bytes for ${rows} rows`);
      let at0 = r0 * rowBytes;
      for (const b of pieces) {
        for (let at = 0; at < b.length; ) at += fs.writeSync(fd!, b, at, b.length - at, at0 + at);
        at0 += b.length;
      }
      blocks.set(r0, { len, crc, rows });
    },
    tail(crc) {
      const t = crcOf(crc, blocks, n);
      return {
        ...t,
        async write(sink) {
          const buf = new Uint8Array(Math.min(COPY_CHUNK, Math.max(1, t.bytes)));
          for (let at = 0; at < t.bytes; ) {
            const want = Math.min(buf.length, t.bytes - at);
            let got = 0;
            while (got < want) {
              const k = fs.readSync(fd!, buf, got, want - got, at + got);
              if (k === 0) throw new Error(`the codes' temp file ended at ${at + got} of ${t.bytes} bytes`);
              got += k;
            }
            await sink.write(buf.slice(0, want));
            at += want;
          }
        },
      };
    },
    discard() {
      unregister();
      drop();
    },
  };
}
