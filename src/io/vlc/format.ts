// The .vlc file format, version 6: its layout and the validating decoder (the encoder: encode.ts). Layout (all little-endian, every
// section payload 8-byte aligned so it can be viewed in place as a typed array):
//
//   offset  size  field
//   0       8     magic  89 'V' 'L' 'C' 0D 0A 1A 0A   (PNG-style: catches text-mode mangling)
//   8       4     u32 format version: the lowest that holds the file's sections (6 with metric ip or
//                   cosine (manifest.metric; older files are l2), 5 with 'RSDE', 4 with
//                   a projected 'RSPQ', 3 with 'RSDB', else 2; version 1 files, which cannot hold 'RSPQ', still read)
//   12      4     u32 manifest length L in bytes
//   16      4     u32 section count S
//   20      4     u32 CRC32C of bytes 8..20 followed by the manifest bytes (the "header checksum")
//   24      L     manifest, UTF-8 JSON (src/io/vlc/manifest.ts), then zero padding to a multiple of 8
//   then S sections, each:
//   +0      4     type tag, 4 ASCII bytes: 'ANCH' anchors, 'ASGN' assignments, 'RSD8'/'RSD4'/'RSPQ'/'RSDB'/'RSDE' residuals,
//                 'NRMS' norms
//   +4      4     u32 flags; bit 0 = required (a reader that does not know the tag must refuse)
//   +8      8     u64 payload length P
//   +16     4     u32 CRC32C of the payload
//   +20     4     u32 CRC32C of bytes +0..+20 of this section header
//   +24     P     payload, then zero padding to a multiple of 8
//
//   ANCH payload: m×d anchors, row-major, f16 or f32 (manifest.anchorDtype).
//   ASGN payload: n anchor ids, u8 / u16 / u32 (manifest.assignmentWidth).
//   RSD8 / RSD4 payload (only with manifest.residual int8 / int4): d f32 scales, then n×d int8
//     codes, or n×ceil(d/2) bytes of two int4 codes each (low nibble first) — src/codecs/scalar.ts.
//   RSPQ payload (version 2, manifest.residual pq): product-quantized residuals — anchor scales,
//     codebooks and codes, laid out in src/codecs/pq.ts; from version 4 optionally a projection
//     (the k directions the codes cover).
//   RSDB payload (version 3, manifest.residual bits): residuals with bits allocated per dimension —
//     bits, steps and packed codes, laid out in src/codecs/bits.ts.
//   RSDE payload (version 5, manifest.residual ec): entropy-coded residuals — steps, models, an
//     offset table and blocks of rANS-coded rows, laid out in src/codecs/ec/blocks.ts.
//   NRMS payload (version 6, only and always with manifest.metric cosine, last): n f32 norms, each
//     vector's length before it was scaled to unit length for training and coding; decoding
//     multiplies the reconstruction by it (reconstruct.ts), so decompress gives the input's scale.
//
// Every byte is covered: magic, checksums, zero padding and the exact end of file. The decoder
// names what is wrong in one line ("section 'assignments' checksum mismatch: file is corrupted").
import { UsageError } from '../../errors.js';
import { quoteName } from '../names.js';
import { crc32c } from './crc32c.js';
import type { PayloadCrc } from './checksums.js';
import { asPayload, up8, type Payload, type PayloadLike } from './payload.js';
import { viewLimitBytes } from '../../vectors/dataset.js';
import {
  DTYPE_BYTES,
  WIDTH_BYTES,
  validateManifest,
  type VlcManifest,
} from './manifest.js';
import { hasResiduals, sectionOf, sectionSince, sectionTags } from '../../codecs/sections.js';
import type { CodedResiduals } from '../../codecs/types.js';

export const MAGIC = Uint8Array.of(0x89, 0x56, 0x4c, 0x43, 0x0d, 0x0a, 0x1a, 0x0a);
export const FORMAT_VERSION = 6;
/**
 * The oldest version this vlc reads. Version 2 added the product-quantized residual section 'RSPQ',
 * version 3 the bit-allocated one, 'RSDB', version 4 a projection inside 'RSPQ', version 5 the
 * entropy-coded one, 'RSDE', version 6 the metrics ip and cosine (a vlc before it reads every
 * file as l2, so it must refuse these with "upgrade vlc") and cosine's 'NRMS'. A file is written
 * with the lowest version that holds it, so files without these stay readable by a vlc of version
 * 2 and keep their bytes.
 */
const OLDEST_VERSION = 1;
/** The first version that records a metric other than l2. */
export const METRIC_SINCE = 6;
/** The version a file is written with: 2, or the later one its residual section (codecs/sections.ts) or its metric needs. */
export const versionFor = (residual: VlcManifest['residual'], res?: CodedResiduals, metric: VlcManifest['metric'] = 'l2'): number =>
  Math.max(2, sectionSince(residual), res?.formatVersion ?? 2, metric === 'l2' ? 2 : METRIC_SINCE);
export const FILE_HEADER_BYTES = 24;
export const SECTION_HEADER_BYTES = 24;
export const FLAG_REQUIRED = 1;

/** The name a known section tag has in the manifest and in messages (undefined: a tag this vlc does not know). */
function sectionNameOf(tag: string): string | undefined {
  if (tag === 'ANCH') return 'anchors';
  if (tag === 'ASGN') return 'assignments';
  if (tag === 'NRMS') return 'norms';
  return sectionTags().includes(tag) ? 'residuals' : undefined;
}

export type Assignments = Uint8Array | Uint16Array | Uint32Array;

/** What compress hands to the encoder. `sections` in the manifest is filled in by the encoder. */
export interface VlcContent {
  manifest: Omit<VlcManifest, 'sections' | 'assignmentWidth'>;
  /** m×d anchors in f32; stored as manifest.anchorDtype. */
  anchors: Float32Array;
  /** With anchorDtype f16, the anchors' f16 bits when the caller has them already (storedAnchorsAndHalves): written as they are. */
  anchorHalves?: Uint16Array;
  /** n anchor ids (any unsigned width); stored in the narrowest width for m. */
  assignments: ArrayLike<number>;
  /** Coded residuals, when manifest.residual is not 'none'. */
  residuals?: CodedResiduals;
  /** n vector norms (f32), with manifest.metric cosine and only then. */
  norms?: Float32Array;
  /** Extra sections (tests; future residual sections). */
  extra?: ExtraSection[];
}

export interface ExtraSection {
  tag: string;
  name: string;
  required: boolean;
  payload: Uint8Array;
}

export interface SectionInfo {
  name: string;
  tag: string;
  /** Payload bytes. */
  bytes: number;
  /** File offset of the payload. */
  offset: number;
}

export interface VlcFile {
  /** The file's format version (1 to 4). */
  version: number;
  manifest: VlcManifest;
  /** m×d anchors decoded to f32. */
  anchors: Float32Array;
  /** n anchor ids in the stored width. */
  assignments: Assignments;
  /** Present when manifest.residual is not 'none'. */
  residuals?: CodedResiduals;
  /** n vector norms, present when manifest.metric is cosine: decoding scales each reconstruction by its own (reconstruct.ts). */
  norms?: Float32Array;
  fileBytes: number;
  sections: SectionInfo[];
  /** Non-fatal findings (unknown optional sections skipped). */
  warnings: string[];
  /** The residual section's payload, checked but not read (decodeVlc's `residualsLater`): the caller reads it in blocks. */
  residualPayload?: Payload;
}

// Number arithmetic, not `& ~7`: sections and files pass 2^32 bytes.
const align8 = up8;

// Encoding: encode.ts (the file as chunks, its sizes, the anchors as stored).
export { encodeVlc, encodeVlcBytes, storedAnchors, storedAnchorsAndHalves } from './encode.js';
import { fromF16 } from './encode.js';

// ---------------------------------------------------------------------------------------------
// Decoding

/** No manifest comes near this; a larger length field is damage, refused before anything is read. */
const MAX_MANIFEST_BYTES = 16 << 20;

/**
 * Validate the fixed header and the manifest (checksum, fields) from the file's first bytes —
 * at least FILE_HEADER_BYTES, then manifestEnd (a whole file's Payload: its first bytes are read).
 * Throws the same one-line errors as decodeVlc. Returns the manifest and where it ends (undefined
 * manifest: `buf` is too short to hold it).
 */
export function decodeVlcHeader(input: PayloadLike, source = '<input>'): { manifest?: VlcManifest; manifestEnd: number } {
  const buf = headOf(input);
  const fail = (what: string) => new UsageError(`${quoteName(source)}: ${what}`);
  const corrupt = (what: string) => fail(`${what}: file is corrupted`);
  const len = buf.length;

  if (len === 0) throw fail('file is empty; expected a .vlc file made by `vlc compress`');
  const magicLen = Math.min(len, MAGIC.length);
  if (!MAGIC.subarray(0, magicLen).every((b, i) => buf[i] === b)) throw fail(`not a .vlc file (wrong magic bytes${sniff(buf)})`);
  if (len < FILE_HEADER_BYTES) throw fail(`file is truncated (${len} bytes; the .vlc header alone is ${FILE_HEADER_BYTES})`);

  const view = new DataView(buf.buffer, buf.byteOffset, buf.byteLength);
  const version = view.getUint32(8, true);
  const manifestLen = view.getUint32(12, true);
  const sectionCount = view.getUint32(16, true);
  const headerCrc = view.getUint32(20, true);
  const manifestEnd = FILE_HEADER_BYTES + manifestLen;
  const newer = () =>
    fail(`file format version ${version} is newer than this vlc reads (version ${FORMAT_VERSION}); upgrade vlc`);
  if (manifestLen > MAX_MANIFEST_BYTES) {
    if (version > FORMAT_VERSION && version < 256) throw newer();
    throw corrupt(`manifest length ${manifestLen} is implausible (vlc writes a few hundred bytes)`);
  }
  if (manifestEnd > len) return { manifestEnd };
  const manifestBytes = buf.subarray(FILE_HEADER_BYTES, manifestEnd);
  const crcOk = crc32c(manifestBytes, crc32c(buf.subarray(8, 20))) === headerCrc;
  // A later version may lay its header out differently, so its checksum need not verify here;
  // a small version number that is not ours is most likely a newer file, anything else damage.
  const readable = version >= OLDEST_VERSION && version <= FORMAT_VERSION;
  if (!readable && (crcOk || (version > FORMAT_VERSION && version < 256))) {
    if (version > FORMAT_VERSION) throw newer();
    throw corrupt(`format version ${version} is not valid`);
  }
  if (!crcOk) throw corrupt('header checksum mismatch');

  let raw: unknown;
  try {
    raw = JSON.parse(new TextDecoder('utf-8', { fatal: true }).decode(manifestBytes));
  } catch {
    throw corrupt('manifest is not valid JSON');
  }
  const manifest = validateManifest(raw, source);
  const since = sectionSince(manifest.residual);
  if (version < since)
    throw corrupt(`residual mode '${manifest.residual}' in a format version ${version} file (${manifest.residual} needs version ${since})`);
  if (manifest.metric !== 'l2' && version < METRIC_SINCE)
    throw corrupt(`metric '${manifest.metric}' in a format version ${version} file (it needs version ${METRIC_SINCE})`);
  const wantNorms = manifest.metric === 'cosine';
  if (manifest.sections.includes('norms') !== wantNorms)
    throw corrupt(wantNorms ? `section 'norms' is missing (metric cosine keeps each vector's norm)` : `section 'norms' in a file of metric '${manifest.metric}'`);
  if (manifest.sections.length !== sectionCount)
    throw corrupt(`header says ${sectionCount} sections but the manifest lists ${manifest.sections.length}`);
  return { manifest, manifestEnd };
}

/**
 * The exact size of a file with this manifest, when every section it lists has a size this
 * version knows (undefined when an unknown, optional section's size only its own header gives).
 */
export function expectedVlcBytes(mf: VlcManifest, manifestEnd: number): number | undefined {
  const sizes: Record<string, number | undefined> = {
    anchors: mf.m * mf.d * DTYPE_BYTES[mf.anchorDtype],
    assignments: mf.n * WIDTH_BYTES[mf.assignmentWidth],
    // pq: only the section's own header gives M and bits, so its size (and the file's) is left open.
    ...(hasResiduals(mf.residual) ? { residuals: sectionOf(mf.residual)?.payloadBytes(mf.n, mf.d) } : {}),
    norms: mf.n * 4,
  };
  let total = up8(manifestEnd);
  for (const name of mf.sections) {
    if (sizes[name] === undefined) return undefined;
    total += SECTION_HEADER_BYTES + up8(sizes[name]!);
  }
  return total;
}

/** The file's first bytes, as many as a header and the largest manifest take (a view: no copy). */
function headOf(input: PayloadLike): Uint8Array {
  if (input instanceof Uint8Array) return input;
  return input.view(0, Math.min(input.length, FILE_HEADER_BYTES + MAX_MANIFEST_BYTES));
}

/** Bytes checksummed between two progress reports of decodeVlc. */
const CHECK_CHUNK = 1 << 24;

/** A payload's CRC32C on this thread, a piece at a time, telling `onChecked` after each (large payloads). */
function checksumInLine(payload: Payload, start: number, len: number, onChecked?: (bytes: number, total: number) => void): number {
  const size = payload.length;
  const report = size > CHECK_CHUNK && onChecked ? (end: number) => onChecked(start + end, len) : undefined;
  return payload.crc(0, size, report, Math.min(CHECK_CHUNK, viewLimitBytes()));
}

/**
 * Parse and fully validate a .vlc file held in memory: one array, or a Payload of any size (read
 * through views: file.ts reads files over 4 GiB so). `source` names the file in messages. Every
 * problem is a UsageError (exit 2) with one line saying what is wrong.
 *
 * The file in `buf`, every checksum and field validated. `onChecked(bytes, total)` is told how far
 * the payload checksums have come (a large file's take seconds): called between chunks, in line.
 * `computed`: payload checksums already computed over `buf` (checksums.ts, on other threads),
 * compared here instead of computed again. `residualsLater`: the residual section is checked
 * (checksum, tag, padding) but not read: it comes back as `residualPayload` (file.ts openVlcRows
 * reads its codes a block of rows at a time).
 */
export function decodeVlc(
  input: PayloadLike, source = '<input>', onChecked?: (bytes: number, total: number) => void, computed: readonly PayloadCrc[] = [],
  residualsLater = false,
): VlcFile {
  const fail = (what: string) => new UsageError(`${quoteName(source)}: ${what}`);
  const corrupt = (what: string) => fail(`${what}: file is corrupted`);
  const buf = asPayload(input);
  const len = buf.length;
  const head = headOf(buf);
  const { manifest, manifestEnd } = decodeVlcHeader(head, source);
  if (!manifest) {
    const version = new DataView(head.buffer, head.byteOffset, head.byteLength).getUint32(8, true);
    if (version > FORMAT_VERSION && version < 256)
      throw fail(`file format version ${version} is newer than this vlc reads (version ${FORMAT_VERSION}); upgrade vlc`);
    throw fail(`file is truncated in the manifest (needs ${manifestEnd} bytes, file has ${len})`);
  }
  const sectionCount = manifest.sections.length;
  const version = new DataView(head.buffer, head.byteOffset, head.byteLength).getUint32(8, true); // checked by decodeVlcHeader: 1..FORMAT_VERSION
  const manifestLen = manifestEnd - FILE_HEADER_BYTES;
  let off = FILE_HEADER_BYTES + manifestLen;
  checkPadding(buf, off, align8(off), 'the manifest', corrupt);
  off = align8(off);

  const warnings: string[] = [];
  const sections: SectionInfo[] = [];
  let anchorsBytes: Payload | undefined;
  let assignBytes: Payload | undefined;
  let residualBytes: Payload | undefined;
  let normBytes: Payload | undefined;
  for (let s = 0; s < sectionCount; s++) {
    const name = manifest.sections[s];
    if (off + SECTION_HEADER_BYTES > len)
      throw fail(
        off === len
          ? `file is truncated: section '${name}' is missing (${s} of ${sectionCount} sections present)`
          : `file is truncated in the header of section '${name}'`,
      );
    const sh = buf.view(off, SECTION_HEADER_BYTES);
    const view = new DataView(sh.buffer, sh.byteOffset, SECTION_HEADER_BYTES);
    if (crc32c(sh.subarray(0, 20)) !== view.getUint32(20, true)) throw corrupt(`section '${name}' header checksum mismatch`);
    const tag = String.fromCharCode(...sh.subarray(0, 4));
    const flags = view.getUint32(4, true);
    const big = view.getBigUint64(8, true);
    const payloadCrc = view.getUint32(16, true);
    const start = off + SECTION_HEADER_BYTES;
    if (big > BigInt(len - start))
      throw fail(`file is truncated in section '${name}' (needs ${big} bytes, ${len - start} remain)`);
    const size = Number(big);
    const payload = buf.sub(start, size);
    const precomputed = computed.find((p) => p.start === start && p.size === size);
    const crc = precomputed ? precomputed.crc : checksumInLine(payload, start, len, onChecked);
    if (crc !== payloadCrc) throw corrupt(`section '${name}' checksum mismatch`);
    const end = align8(start + size);
    if (end > len) throw fail(`file is truncated after section '${name}'`);
    checkPadding(buf, start + size, end, `section '${name}'`, corrupt);
    off = end;

    const known = sectionNameOf(tag);
    if (known === undefined) {
      if (flags & FLAG_REQUIRED)
        throw fail(`section '${name}' (type '${tag}') is required but this vlc does not know it; upgrade vlc`);
      warnings.push(`skipping unknown section '${name}' (type '${tag}'), probably written by a newer vlc`);
      continue;
    }
    if (known !== name) throw corrupt(`section ${s + 1} has type '${tag}' (${known}) but the manifest says '${name}'`);
    if (known === 'residuals' && tag !== (sectionOf(manifest.residual)?.tag ?? ''))
      throw corrupt(`section '${name}' has type '${tag}' but the manifest says residual mode '${manifest.residual}'`);
    sections.push({ name, tag, bytes: size, offset: start });
    if (known === 'anchors') anchorsBytes = payload;
    else if (known === 'assignments') assignBytes = payload;
    else if (known === 'norms') normBytes = payload;
    else residualBytes = payload;
  }
  if (off !== len) throw corrupt(`${len - off} unexpected bytes after the last section`);
  if (!anchorsBytes) throw corrupt(`section 'anchors' is missing`);
  if (!assignBytes) throw corrupt(`section 'assignments' is missing`);
  if (hasResiduals(manifest.residual) && !residualBytes) throw corrupt(`section 'residuals' is missing`);

  const { n, d, m } = manifest;
  const wantAnchors = m * d * DTYPE_BYTES[manifest.anchorDtype];
  if (anchorsBytes.length !== wantAnchors)
    throw corrupt(`section 'anchors' has ${anchorsBytes.length} bytes, but m×d = ${m}×${d} ${manifest.anchorDtype} needs ${wantAnchors}`);
  const wantAssign = n * WIDTH_BYTES[manifest.assignmentWidth];
  if (assignBytes.length !== wantAssign)
    throw corrupt(`section 'assignments' has ${assignBytes.length} bytes, but n = ${n} ${manifest.assignmentWidth} needs ${wantAssign}`);

  const anchors = decodeAnchors(anchorsBytes.bytes(), manifest.anchorDtype);
  for (let i = 0; i < anchors.length; i++)
    if (!Number.isFinite(anchors[i])) throw corrupt(`section 'anchors': anchor ${Math.floor(i / d)} is not finite`);
  const assignments = viewAssignments(assignBytes.bytes(), manifest.assignmentWidth);
  for (let i = 0; i < n; i++)
    if (assignments[i] >= m) throw corrupt(`section 'assignments': vector ${i} names anchor ${assignments[i]} but m = ${m}`);

  const norms = normBytes ? decodeNorms(normBytes, n, corrupt) : undefined;
  if (residualsLater)
    return { version, manifest, anchors, assignments, ...(norms ? { norms } : {}), fileBytes: len, sections, warnings, ...(residualBytes ? { residualPayload: residualBytes } : {}) };
  const residuals = !hasResiduals(manifest.residual) ? undefined : sectionOf(manifest.residual)!.read(residualBytes!, { n, d, m, assignments, version }, corrupt);
  return { version, manifest, anchors, assignments, residuals, ...(norms ? { norms } : {}), fileBytes: len, sections, warnings };
}

/** The 'norms' section: n finite f32 values, none negative. */
function decodeNorms(payload: Payload, n: number, corrupt: (what: string) => Error): Float32Array {
  if (payload.length !== n * 4) throw corrupt(`section 'norms' has ${payload.length} bytes, but n = ${n} f32 norms need ${n * 4}`);
  const own = copyAligned(payload.bytes());
  const norms = new Float32Array(own.buffer, own.byteOffset, n);
  for (let i = 0; i < n; i++) if (!(norms[i] >= 0 && norms[i] < Infinity)) throw corrupt(`section 'norms': vector ${i}'s norm is ${norms[i]}`);
  return norms;
}

function checkPadding(buf: Payload, from: number, to: number, after: string, corrupt: (w: string) => Error) {
  // Padding cut off by the end of the file counts as not zero (what a truncated manifest's padding has always said).
  if (to > buf.length || !buf.zero(from, to)) throw corrupt(`padding after ${after} is not zero`);
}

/** Says what the file looks like when it is not a .vlc (the commonest mistake: swapped arguments). */
function sniff(buf: Uint8Array): string {
  const head = String.fromCharCode(...buf.subarray(0, 8));
  if (head.startsWith('\x93NUMPY')) return '; this is a .npy file — did you swap the arguments?';
  if (head.startsWith('ARROW1')) return '; this is an Arrow file';
  if (head.startsWith('PAR1')) return '; this is a Parquet file';
  return '';
}

function decodeAnchors(bytes: Uint8Array, dtype: 'f16' | 'f32'): Float32Array {
  const own = copyAligned(bytes);
  if (dtype === 'f32') return new Float32Array(own.buffer, own.byteOffset, own.byteLength / 4);
  return fromF16(new Uint16Array(own.buffer, own.byteOffset, own.byteLength / 2));
}

function viewAssignments(bytes: Uint8Array, width: 'u8' | 'u16' | 'u32'): Assignments {
  if (width === 'u8') return bytes;
  const own = copyAligned(bytes);
  return width === 'u16'
    ? new Uint16Array(own.buffer, own.byteOffset, own.byteLength / 2)
    : new Uint32Array(own.buffer, own.byteOffset, own.byteLength / 4);
}

/** The bytes, 4-byte aligned (a view when they already are, else a copy). */
function copyAligned(bytes: Uint8Array): Uint8Array {
  return bytes.byteOffset % 4 === 0 ? bytes : bytes.slice();
}
