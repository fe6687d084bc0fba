// The layering of docs/architecture.md, checked on the sources: every folder of src/ is one layer
// (the table below has no entry for a part of a folder), every file imports only from its own layer
// or the layers below, and the algorithm (anneal/), the search (search/) and the file formats (io/)
// see the backends only through their contracts (backend/engine.ts, backend/device.ts), never a
// concrete backend (backend/cpu, backend/cuda); the commands reach everything through api/.
import { readdirSync, readFileSync } from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';

const SRC = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..', '..', 'src');

/** Layer of a source path (relative to src/, without extension), lowest first. */
const LAYERS: Array<[RegExp, number, string]> = [
  [/^(errors|log|interrupt|version|limits)$/, 0, 'errors/log/interrupt/version/limits'],
  [/^vectors\//, 0, 'vectors (the block types every layer uses)'],
  // The residual codecs' coded forms, sections and host encoders sit beside the file format that stores them.
  [/^(io|codecs)\//, 1, 'io, codecs'],
  [/^backend\//, 2, 'backend'],
  // The codecs as objects (plans, encoding through the backend, search scorers) and their training
  // (which runs the annealing engine) sit above the backend contract, with anneal/ and search/.
  [/^(anneal|search|quality|codec-registry|codec-train)\//, 3, 'anneal, search, quality, codec-registry, codec-train'],
  [/^bench\//, 4, 'bench'],
  [/^api\//, 5, 'api'],
  [/^commands\//, 6, 'commands'],
  [/^(cli|index)$/, 7, 'cli, index (the library entry)'],
];

function layerOf(rel: string): { rank: number; name: string } {
  for (const [re, rank, name] of LAYERS) if (re.test(rel)) return { rank, name };
  throw new Error(`src/${rel}.ts belongs to no layer: add it to LAYERS in test/layers/imports.test.ts`);
}

function sources(dir: string): string[] {
  return readdirSync(dir, { withFileTypes: true }).flatMap((e) => {
    const p = path.join(dir, e.name);
    return e.isDirectory() ? sources(p) : e.name.endsWith('.ts') ? [p] : [];
  });
}

/** Relative module specifiers of static imports, re-exports and dynamic import()s, resolved to src/-relative paths without extension. */
function imports(file: string): string[] {
  const text = readFileSync(file, 'utf8');
  const specs = [...text.matchAll(/(?:\bfrom\s*|\bimport\s*\(\s*|^\s*import\s+)['"](\.[^'"]+)['"]/gm)].map((m) => m[1]);
  return specs.map((s) => path.relative(SRC, path.resolve(path.dirname(file), s)).replace(/\\/g, '/').replace(/\.(js|ts)$/, ''));
}

const files = sources(SRC).map((f) => ({ rel: path.relative(SRC, f).replace(/\\/g, '/').replace(/\.ts$/, ''), deps: imports(f) }));

describe('layering of src/', () => {
  it('finds the sources and their imports', () => {
    expect(files.length).toBeGreaterThan(50);
    expect(files.find((f) => f.rel === 'anneal/index')?.deps).toContain('backend/engine');
  });

  it('every folder of src/ is one layer: no part of a folder sits in another', () => {
    const ranks = new Map<string, Set<number>>();
    for (const f of files) {
      const top = f.rel.split('/')[0];
      ranks.set(top, (ranks.get(top) ?? new Set()).add(layerOf(f.rel).rank));
    }
    expect([...ranks].filter(([, r]) => r.size > 1).map(([top]) => top)).toEqual([]);
    // Each pattern is ^folder\/ or ^(folder|folder)\/ (or top-level files, ...$): never a path inside a folder.
    expect(LAYERS.map(([re]) => re.source).filter((s) => !/^\^(?:\([\w|-]+\)|[\w-]+)(?:\\\/|\$)$/.test(s))).toEqual([]);
  });

  it('anneal/, search/, quality/ and io/ import no concrete backend (backend/cpu, backend/cuda)', () => {
    const bad = files.flatMap((f) =>
      /^(anneal|search|quality|io)\//.test(f.rel) ? f.deps.filter((d) => /^backend\/(cpu|cuda)\//.test(d)).map((d) => `${f.rel} -> ${d}`) : [],
    );
    expect(bad).toEqual([]);
  });

  it('every file imports only its own layer or the layers below', () => {
    const bad = files.flatMap((f) => {
      const own = layerOf(f.rel);
      return f.deps.filter((d) => layerOf(d).rank > own.rank).map((d) => `${f.rel} (${own.name}) -> ${d} (${layerOf(d).name})`);
    });
    expect(bad).toEqual([]);
  });

  it('anneal/ and search/ are independent of each other, search/ of quality/ (which measures through it), and the CPU and CUDA backends too', () => {
    const apart: Array<[RegExp, RegExp]> = [
      [/^anneal\//, /^search\//], [/^search\//, /^anneal\//], [/^search\//, /^quality\//],
      [/^backend\/cpu\//, /^backend\/cuda\//], [/^backend\/cuda\//, /^backend\/cpu\//],
    ];
    const bad = files.flatMap((f) =>
      apart.flatMap(([from, to]) => (from.test(f.rel) ? f.deps.filter((d) => to.test(d)).map((d) => `${f.rel} -> ${d}`) : [])),
    );
    expect(bad).toEqual([]);
  });

  it('commands/ only parse flags and print: they import api/, the output helpers of io/, errors, log and each other', () => {
    const allowed = /^(api\/|commands\/|io\/(names|output|vlc\/stats)$|errors$|log$)/;
    const bad = files.flatMap((f) => (/^commands\//.test(f.rel) ? f.deps.filter((d) => !allowed.test(d)).map((d) => `${f.rel} -> ${d}`) : []));
    expect(bad).toEqual([]);
  });

  it('the backend contracts have no optional member: a device implements each kernel or the host does (backend/host.ts)', () => {
    const text = ['engine', 'device', 'types'].map((f) => readFileSync(path.join(SRC, 'backend', `${f}.ts`), 'utf8')).join('\n');
    const optional = ['TrainEngine', 'Engine', 'CodecDevice', 'ExactKnn', 'Backend'].flatMap((name) => {
      const body = new RegExp(`export interface ${name}\\b[^{]*\\{([\\s\\S]*?)\\n\\}`).exec(text)?.[1];
      if (body === undefined) return [`${name}: not found`];
      return [...body.matchAll(/^\s*(?:readonly\s+)?(\w+)\?[(:]/gm)].map((m) => `${name}.${m[1]}`);
    });
    expect(optional).toEqual([]);
  });
});
