// The kernel table of src/backend/cuda/kernels.ts — the one description of the kernels that the
// engine launches with and the fake driver decodes with — against what ships: the committed PTX
// (entries, parameter types and count, .maxntid / .minnctapersm; ptx-fresh.test.ts ties the PTX to
// the sources) and the cuda/*.cu sources themselves (parameter names in order, __launch_bounds__,
// the points-per-block constants). A kernel added, removed, reordered or resized on one side only
// fails here, as stale PTX fails ptx-fresh.test.ts.
import { describe, expect, it } from 'vitest';
import { readFileSync, readdirSync } from 'node:fs';
import { join } from 'node:path';
import { KERNELS, allBuilds, type ArgKind } from '../../dist/backend/cuda/kernels.js';
import { MODULES } from '../../dist/backend/cuda/ptx.js';

const root = join(__dirname, '..', '..');
const cudaDir = join(root, 'cuda');

interface PtxEntry {
  module: string;
  params: string[];
  maxntid?: number;
  minBlocks?: number;
}

/** Every `.entry` of the committed PTX: its module, parameter types, launch bounds. */
function ptxEntries(): Map<string, PtxEntry> {
  const out = new Map<string, PtxEntry>();
  for (const module of MODULES) {
    const ptx = readFileSync(join(root, 'build', `${module}.ptx`), 'utf8');
    const re = /\.visible \.entry (\w+)\(([^)]*)\)\s*((?:\.\w+[^\n]*\n\s*)*)\{/g;
    for (const m of ptx.matchAll(re)) {
      const params = [...m[2].matchAll(/\.param \.(\w+) /g)].map((p) => p[1]);
      const maxntid = /\.maxntid (\d+)/.exec(m[3]);
      const minBlocks = /\.minnctapersm (\d+)/.exec(m[3]);
      out.set(m[1], { module, params, maxntid: maxntid ? Number(maxntid[1]) : undefined, minBlocks: minBlocks ? Number(minBlocks[1]) : undefined });
    }
  }
  return out;
}

/** The #defines of every cuda/*.cu and *.cuh (line continuations joined, comments dropped). */
function defines(): { objects: Map<string, string>; functions: Map<string, { param: string; body: string }> } {
  const objects = new Map<string, string>();
  const functions = new Map<string, { param: string; body: string }>();
  for (const f of readdirSync(cudaDir)) {
    const text = readFileSync(join(cudaDir, f), 'utf8').replace(/\\\r?\n/g, ' ');
    for (const line of text.split('\n')) {
      const fn = /^#define (\w+)\((\w+)\)\s+(.*)$/.exec(line);
      if (fn) functions.set(fn[1], { param: fn[2], body: fn[3].replace(/\/\/.*$/, '').trim() });
      const obj = /^#define (\w+)\s+([^(\s].*)$/.exec(line);
      if (obj && !fn) objects.set(obj[1], obj[2].replace(/\/\/.*$/, '').trim());
    }
  }
  return { objects, functions };
}

const defs = defines();

/** A constant expression of the sources (macros resolved) as a number. */
function evaluate(expr: string): number {
  let e = expr;
  for (let k = 0; k < 10 && /[A-Za-z_]/.test(e); k++) e = e.replace(/\b[A-Za-z_]\w*\b/g, (id) => `(${defs.objects.get(id) ?? id})`);
  if (!/^[\d\s+\-*/()]+$/.test(e)) throw new Error(`cannot evaluate ${expr} (${e})`);
  return Function(`"use strict"; return (${e});`)() as number;
}

/** Function-like macros expanded (ASSIGN_ARGS(float) → its parameter list). */
function expand(text: string): string {
  let t = text;
  for (let k = 0; k < 5; k++) {
    t = t.replace(/\b(\w+)\((\w+)\)/g, (all, name: string, arg: string) => {
      const f = defs.functions.get(name);
      return f ? f.body.replace(new RegExp(`\\b${f.param}\\b`, 'g'), arg) : all;
    });
  }
  return t;
}

interface CuKernel {
  file: string;
  bounds?: string[];
  params: Array<{ name: string; kind: ArgKind }>;
}

function kindOf(type: string): ArgKind {
  if (type.includes('*')) return 'ptr';
  if (/\blong long\b/.test(type)) return 'i64';
  if (/\b(int|unsigned)\b/.test(type)) return 'i32';
  if (/\bfloat\b/.test(type)) return 'f32';
  if (/\bdouble\b/.test(type)) return 'f64';
  throw new Error(`unknown parameter type ${type}`);
}

/** Every `extern "C" __global__` function of cuda/*.cu: bounds and named, typed parameters. */
function cuKernels(): Map<string, CuKernel> {
  const out = new Map<string, CuKernel>();
  for (const file of readdirSync(cudaDir).filter((f) => f.endsWith('.cu'))) {
    const text = readFileSync(join(cudaDir, file), 'utf8').replace(/\\\r?\n/g, ' ');
    const re = /extern "C" __global__ void\s+(?:__launch_bounds__\(([^)]*)\)\s*)?(\w+)\s*\(/g;
    for (const m of text.matchAll(re)) {
      // The parameter list up to its closing parenthesis (macro calls inside nest one level).
      let depth = 1, i = m.index! + m[0].length;
      const start = i;
      for (; depth > 0; i++) depth += text[i] === '(' ? 1 : text[i] === ')' ? -1 : 0;
      const params = expand(text.slice(start, i - 1))
        .split(',')
        .map((p) => p.trim())
        .map((p) => ({ name: /(\w+)\s*$/.exec(p)![1], kind: kindOf(p.replace(/(\w+)\s*$/, '')) }));
      out.set(m[2], { file, bounds: m[1]?.split(',').map((b) => b.trim()), params });
    }
  }
  return out;
}

const PTX_TYPES: Record<ArgKind, string[]> = { ptr: ['u64'], i64: ['u64', 's64'], i32: ['u32', 's32'], f32: ['f32'], f64: ['f64'] };

describe('the kernel table (src/backend/cuda/kernels.ts) is what cuda/*.cu builds', () => {
  const ptx = ptxEntries();
  const cu = cuKernels();
  const builds = allBuilds();

  it('every function name is unique across the modules (the context looks functions up by name)', () => {
    const names = builds.map((b) => b.name);
    expect(new Set(names).size).toBe(names.length);
  });

  it('the PTX ships exactly the kernels of the table, each in its module', () => {
    expect([...ptx.keys()].sort()).toEqual(builds.map((b) => b.name).sort());
    expect([...cu.keys()].sort()).toEqual(builds.map((b) => b.name).sort());
    for (const b of builds) expect(ptx.get(b.name)!.module, b.name).toBe(b.spec.module);
    for (const b of builds) expect(cu.get(b.name)!.file, b.name).toBe(`${b.spec.module}.cu`);
  });

  for (const b of builds) {
    it(`${b.name}: arguments, types and launch bounds`, () => {
      const p = ptx.get(b.name)!;
      const c = cu.get(b.name)!;
      expect(c.params.map((x) => x.name), 'names in the .cu').toEqual(b.spec.args.map(([name]) => name));
      expect(c.params.map((x) => x.kind), 'types in the .cu').toEqual(b.spec.args.map(([, kind]) => kind));
      expect(p.params.length, 'count in the PTX').toBe(b.spec.args.length);
      b.spec.args.forEach(([name, kind], i) => expect(PTX_TYPES[kind], `${name} in the PTX`).toContain(p.params[i]));
      if (b.spec.bounds) {
        expect(c.bounds, '__launch_bounds__ in the .cu').toBeDefined();
        expect(evaluate(c.bounds![0])).toBe(b.spec.threads);
        expect(p.maxntid).toBe(b.spec.threads);
        expect(c.bounds![1] !== undefined ? evaluate(c.bounds![1]) : undefined).toBe(b.spec.bounds.minBlocks);
        expect(p.minBlocks).toBe(b.spec.bounds.minBlocks);
      } else {
        expect(c.bounds, 'no __launch_bounds__ in the .cu').toBeUndefined();
        expect(p.maxntid).toBeUndefined();
      }
      if (b.spec.points) expect(evaluate(b.spec.points.constant), b.spec.points.constant).toBe(b.spec.points.value);
    });
  }

  it('the checks can fail: a wrong name, type or constant is caught', () => {
    expect(evaluate('AS_P')).toBe(64);
    expect(evaluate('SH_P')).toBe(128);
    expect(cu.get('reduce_points_f32')!.params.map((x) => x.name)).toContain('eScale');
    expect(KERNELS.reduce_points.args.map(([n]) => n)).toContain('eScale');
    expect(() => evaluate('NO_SUCH_CONSTANT')).toThrow(/cannot evaluate/);
  });
});
