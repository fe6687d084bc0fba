// The residual sections a .vlc file may hold, by residual mode: the part of each codec that a
// reader needs (its tag, the first format version holding it, its reader), so that reading a file
// never loads a trainer. The built-in codecs' sections are listed here; a codec added later
// registers its own (codec-registry/index.ts does, for every codec it is given), and files that
// name an unknown mode are refused with "upgrade vlc".
import { bitsSection } from './bits.js';
import { ecSection } from './ec/residuals.js';
import { pqSection } from './pq.js';
import { scalarSection } from './scalar.js';
import type { ResidualSection } from './types.js';

/** The residual mode of files that store anchor ids alone (no residual section). */
export const NO_RESIDUAL = 'none';

interface SectionEntry {
  section: ResidualSection;
  /** The first file format version that holds this section. */
  since: number;
}

const table = new Map<string, SectionEntry>([
  ['int8', { section: scalarSection('int8'), since: 1 }],
  ['int4', { section: scalarSection('int4'), since: 1 }],
  ['pq', { section: pqSection, since: 2 }],
  ['bits', { section: bitsSection, since: 3 }],
  ['ec', { section: ecSection, since: 5 }],
]);

/** A codec's section, under its mode; a mode or tag already taken by another codec is a programming error. */
export function registerSection(mode: string, section: ResidualSection, since: number): void {
  const had = table.get(mode);
  if (had?.section === section) return;
  if (had || mode === NO_RESIDUAL) throw new Error(`residual mode '${mode}' is registered twice`);
  const clash = [...table.entries()].find(([, e]) => e.section.tag === section.tag);
  if (clash) throw new Error(`section tag '${section.tag}' of '${mode}' is already '${clash[0]}''s`);
  table.set(mode, { section, since });
}

/** Whether files of this mode hold a residual section. */
export function hasResiduals(mode: string): boolean {
  return mode !== NO_RESIDUAL;
}

/** Every mode a file may name: 'none', then the modes with a section. */
export function knownModes(): string[] {
  return [NO_RESIDUAL, ...table.keys()];
}

/** The section of a mode with residuals (undefined: unknown to this vlc). */
export function sectionOf(mode: string): ResidualSection | undefined {
  return table.get(mode)?.section;
}

/** The first format version holding the mode's section (2, the oldest version written, for 'none' and unknown modes). */
export function sectionSince(mode: string): number {
  return table.get(mode)?.since ?? 1;
}

/** Every residual section's tag. */
export function sectionTags(): string[] {
  return [...table.values()].map((e) => e.section.tag);
}
