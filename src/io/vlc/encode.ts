// Encoding a .vlc file (the layout: format.ts): the header and manifest, then each section with
// its checksums, as a list of byte chunks (payloads are views, not copies); the anchors as a reader
// will see them. Split from format.ts along the encoder / validating-decoder seam.
import { f16ToF32 } from '../../vectors/dataset.js';
import { f32ToF16Into } from '../writers/half.js';
import { largeBuffer } from '../../vectors/huge-pages.js';
import { sectionOf, hasResiduals } from '../../codecs/sections.js';
import { crc32c } from './crc32c.js';
import { assignmentWidthFor, canonicalManifest } from './manifest.js';
import { narrowInto, outsideError } from './narrow-ids.js';
import { up8 } from './payload.js';
import { FILE_HEADER_BYTES, FLAG_REQUIRED, MAGIC, SECTION_HEADER_BYTES, versionFor, type Assignments, type VlcContent } from './format.js';

const align8 = up8;
const bytesOf = (a: ArrayBufferView) => new Uint8Array(a.buffer, a.byteOffset, a.byteLength);

/**
 * The file as a list of byte chunks, in order (payloads are views, not copies). Deterministic:
 * the same content gives the same bytes.
 */
export function encodeVlc(content: VlcContent, residualCrc?: number): Uint8Array[] {
  return encodeVlcParts(content, undefined, residualCrc).before;
}

/**
 * A residual payload that continues past what `residuals.payload()` gives: `bytes` more, which
 * the writer copies in itself (a streamed compress spills the codes to a file: io/vlc/file.ts
 * writeVlcStreamed), and the CRC32C of the whole payload.
 */
export interface PayloadTail {
  bytes: number;
  crc: number;
}

/**
 * encodeVlc's chunks (`residualCrc`: the residual payload's checksum, computed by the caller when
 * the residuals do not carry one), split where the residual payload's `tail` goes: `before` (everything up to
 * it), then the tail's bytes, then `after` (its padding and the sections after it). Without a
 * tail, `after` is empty and `before` is the whole file.
 */
export function encodeVlcParts(
  content: VlcContent, tail?: PayloadTail, residualCrc?: number, narrowed?: { ids: Assignments; crc: number },
): { before: Uint8Array[]; after: Uint8Array[]; residualHeader?: Uint8Array } {
  const { anchors, assignments } = content;
  const base = content.manifest;
  const { n, d, m } = base;
  if (anchors.length !== m * d) throw new Error(`encodeVlc: ${anchors.length} anchor values, expected m×d = ${m * d}`);
  if (assignments.length !== n) throw new Error(`encodeVlc: ${assignments.length} assignments, expected n = ${n}`);
  const width = assignmentWidthFor(m);
  const extra = content.extra ?? [];
  const res = content.residuals;
  if (hasResiduals(base.residual) !== (res !== undefined) || (res && res.mode !== base.residual))
    throw new Error(`encodeVlc: manifest.residual is '${base.residual}' but residuals are ${res ? res.mode : 'absent'}`);
  const manifest = canonicalManifest({
    ...base,
    assignmentWidth: width,
    sections: ['anchors', 'assignments', ...(res ? ['residuals'] : []), ...(content.norms ? ['norms'] : []), ...extra.map((s) => s.name)],
  });
  if ((base.metric === 'cosine') !== (content.norms !== undefined) || (content.norms && content.norms.length !== n))
    throw new Error(`encodeVlc: metric '${base.metric}' ${content.norms ? `with ${content.norms.length} norms` : 'without norms'} (cosine needs n, the others none)`);

  if (content.anchorHalves && content.anchorHalves.length !== anchors.length) throw new Error(`encodeVlc: ${content.anchorHalves.length} anchor halves for ${anchors.length} anchor values`);
  const anchorPayload = base.anchorDtype === 'f16' ? bytesOf(content.anchorHalves ?? toF16(anchors)) : bytesOf(Float32Array.from(anchors));
  const assignPayload = bytesOf(narrowed?.ids ?? narrowAssignments(assignments, width, m));

  const json = new TextEncoder().encode(JSON.stringify(manifest));
  const head = new Uint8Array(align8(FILE_HEADER_BYTES + json.length));
  head.set(MAGIC, 0);
  const hv = new DataView(head.buffer);
  hv.setUint32(8, versionFor(base.residual, res, base.metric), true);
  hv.setUint32(12, json.length, true);
  hv.setUint32(16, manifest.sections.length, true);
  head.set(json, FILE_HEADER_BYTES);
  hv.setUint32(20, crc32c(json, crc32c(head.subarray(8, 20))), true);

  const before: Uint8Array[] = [head];
  const after: Uint8Array[] = [];
  let chunks = before;
  let residualHeader: Uint8Array | undefined;
  // A payload may come in pieces (a large section is not copied into one buffer): written in turn, checksummed as one.
  const addSection = (tag: string, required: boolean, payload: Uint8Array | Uint8Array[], crc?: number, more?: PayloadTail) => {
    const pieces = Array.isArray(payload) ? payload : [payload];
    const length = pieces.reduce((s, p) => s + p.length, 0) + (more?.bytes ?? 0);
    const sh = new Uint8Array(SECTION_HEADER_BYTES);
    const v = new DataView(sh.buffer);
    for (let i = 0; i < 4; i++) sh[i] = tag.charCodeAt(i) & 0x7f;
    v.setUint32(4, required ? FLAG_REQUIRED : 0, true);
    v.setBigUint64(8, BigInt(length), true);
    sealSectionHeader(sh, more ? more.crc : crc ?? pieces.reduce((c, p) => crc32c(p, c), 0));
    chunks.push(sh, ...pieces);
    if (more) chunks = after; // the tail's bytes go between the two lists
    const pad = align8(length) - length;
    if (pad) chunks.push(new Uint8Array(pad));
    return sh;
  };
  addSection('ANCH', true, anchorPayload);
  addSection('ASGN', true, assignPayload, narrowed?.crc);
  if (tail && !res) throw new Error('encodeVlcParts: a payload tail without residuals');
  if (res) residualHeader = addSection(sectionOf(res.mode)!.tag, true, res.payload(), res.payloadCrc ?? residualCrc, tail);
  if (content.norms) addSection('NRMS', true, bytesOf(Float32Array.from(content.norms)));
  for (const s of extra) {
    if (!/^[\x20-\x7e]{4}$/.test(s.tag)) throw new Error(`encodeVlc: section tag must be 4 ASCII characters`);
    addSection(s.tag, s.required, s.payload);
  }
  return { before, after, residualHeader };
}

/**
 * Puts a section's payload checksum into its 24-byte header, and the header's own checksum after
 * it: a writer that learns the payload's checksum only while writing (io/vlc/file.ts) seals the
 * header again then and writes it over the first.
 */
export function sealSectionHeader(sh: Uint8Array, payloadCrc: number): void {
  const v = new DataView(sh.buffer, sh.byteOffset, SECTION_HEADER_BYTES);
  v.setUint32(16, payloadCrc, true);
  v.setUint32(20, crc32c(sh.subarray(0, 20)), true);
}

/** The whole file in one buffer (tests, small files). */
export function encodeVlcBytes(content: VlcContent): Uint8Array {
  const chunks = encodeVlc(content);
  const out = new Uint8Array(chunks.reduce((s, c) => s + c.length, 0));
  let off = 0;
  for (const c of chunks) {
    out.set(c, off);
    off += c.length;
  }
  return out;
}

/** The anchors as a reader will see them: rounded through f16 when stored as f16. */
export function storedAnchors(anchors: Float32Array, dtype: 'f16' | 'f32'): Float32Array {
  return storedAnchorsAndHalves(anchors, dtype).values;
}

/** storedAnchors, with the f16 bits they were rounded through (for VlcContent.anchorHalves: one conversion, not two). */
export function storedAnchorsAndHalves(anchors: Float32Array, dtype: 'f16' | 'f32'): { values: Float32Array; halves?: Uint16Array } {
  if (dtype === 'f32') return { values: anchors };
  const halves = toF16(anchors);
  return { values: fromF16(halves), halves };
}

function toF16(a: Float32Array): Uint16Array {
  const out = new Uint16Array(a.length);
  f32ToF16Into(a, 0, out); // through the float bits: a quarter of the time of value-by-value conversion (8.4M anchor values at m 65,536)
  return out;
}

export function fromF16(half: Uint16Array): Float32Array {
  const out = new Float32Array(half.length);
  for (let i = 0; i < half.length; i++) out[i] = f16ToF32(half[i]);
  return out;
}

function narrowAssignments(a: ArrayLike<number>, width: 'u8' | 'u16' | 'u32', m: number): Assignments {
  const n = a.length;
  // Many 16-bit ids (m ≤ 65,536: the usual width) go into memory on 2 MiB pages: 100M ids faulted 100,000 fresh 4 KiB pages in.
  const out = width === 'u8' ? new Uint8Array(n) : width === 'u32' ? new Uint32Array(n) : new Uint16Array(largeBuffer(n * 2));
  const bad = narrowInto(a, out, m);
  if (bad >= 0) throw outsideError(bad, a[bad], m);
  return out;
}

