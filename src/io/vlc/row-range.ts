// Rows [first, end) of a decodable file as a file of their own (row i of the view is row first + i
// of the file): what a GPU of a multi-GPU search decodes and ranks (backend/cuda/split-knn.ts). On
// the host the view decodes through the file's residuals at the shifted row; a device decoder asks
// rangeOf() for the file and the first row, and uploads only the range's assignments and codes.
// rowCuts() says where a file's rows may be cut: never inside a block the file reads or codes as a
// whole (a block of a file read where it lies, an ec block), so no block is read or uploaded twice.
import { EcResiduals } from '../../codecs/ec/residuals.js';
import type { CodedResiduals } from '../../codecs/types.js';
import { BlockedResiduals } from './on-disk.js';
import type { Decodable } from './reconstruct.js';

/** The residuals of rows [first, first + n) of `inner`, numbered from 0. */
class ShiftedResiduals implements CodedResiduals {
  readonly mode: CodedResiduals['mode'];
  readonly addRange?: CodedResiduals['addRange'];

  constructor(readonly inner: CodedResiduals, readonly first: number) {
    this.mode = inner.mode;
    // Only where the inner residuals have it: reconstructRange decodes row by row otherwise.
    if (inner.addRange) this.addRange = (i0, i1, out, at) => inner.addRange!(first + i0, first + i1, out, at);
  }

  addTo(i: number, out: Float32Array, at?: number): void {
    this.inner.addTo(this.first + i, out, at);
  }

  payload(): never {
    throw new Error('a range of rows is not written back: write the whole file');
  }
}

interface RangeView {
  of: Decodable;
  first: number;
}

const views = new WeakMap<Decodable, RangeView>();

/** Rows [first, end) of `file` as a Decodable of end − first rows; a view of a view is a view of the file. */
export function rowRange(file: Decodable, first: number, end: number): Decodable {
  if (!(Number.isInteger(first) && Number.isInteger(end) && 0 <= first && first <= end)) throw new Error(`rowRange: bad rows ${first} .. ${end}`);
  const outer = rangeOf(file);
  const of = outer.of, at = outer.first + first;
  const view: Decodable = {
    manifest: { d: of.manifest.d },
    anchors: of.anchors,
    assignments: subarray(of.assignments, at, outer.first + end),
    ...(of.residuals ? { residuals: at === 0 ? of.residuals : new ShiftedResiduals(of.residuals, at) } : {}),
    ...(of.norms ? { norms: of.norms.subarray(at, outer.first + end) } : {}),
  };
  views.set(view, { of, first: at });
  return view;
}

/** The file a Decodable shows rows of, and the first of them (a file that is no view: itself, 0). */
export function rangeOf(file: Decodable): RangeView {
  return views.get(file) ?? { of: file, first: 0 };
}

function subarray(a: Decodable['assignments'], r0: number, r1: number): Decodable['assignments'] {
  return (a as Uint32Array).subarray(r0, r1);
}

/**
 * Rows the cuts between ranges must be multiples of: a file read where it lies, its blocks of rows
 * (for ec whole ec blocks); ec in memory, its blocks (a device decodes whole blocks); else 1.
 */
export function rowGrain(file: Decodable): number {
  const r = file.residuals;
  if (r instanceof BlockedResiduals) return r.rows;
  if (r instanceof EcResiduals) return r.layout.blockRows;
  return 1;
}

/**
 * Rows [0, n) split into `parts` contiguous ranges [a, b), balanced by rows and cut only at
 * multiples of rowGrain(file); ranges left empty (fewer grains than parts) are dropped.
 */
export function rowCuts(file: Decodable, n: number, parts: number): Array<[number, number]> {
  const grain = rowGrain(file), grains = Math.ceil(n / grain); // the last may be short
  const cuts: Array<[number, number]> = [];
  let a = 0;
  for (let p = 1; p <= parts; p++) {
    const b = p === parts ? n : Math.min(n, Math.round((grains * p) / parts) * grain);
    if (b > a) cuts.push([a, b]);
    a = Math.max(a, b);
  }
  return cuts;
}
