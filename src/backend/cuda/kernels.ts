// The kernel interface, written once: for every kernel of cuda/*.cu its module, whether it is
// built per vector dtype (name_f32 / name_f16), the threads per block it is launched with (its
// __launch_bounds__ where it has one), the points one block covers where the grid is sized by
// points, and its arguments in order, named and typed as in the .cu signature. The engine
// launches through launch() below; the fake driver of the tests decodes arguments by the same
// table; test/cuda-host/kernels.test.ts checks the table against the .cu sources and the PTX
// built from them (names, types, order, launch bounds, constants, and that nothing else ships).
import type { CudaContext } from './context.js';
import type { ModuleName } from './ptx.js';

/** How an argument is passed: a device pointer, or a scalar of the C type. */
export type ArgKind = 'ptr' | 'i32' | 'i64' | 'f32' | 'f64';

export interface KernelSpec {
  readonly module: ModuleName;
  /** Built twice, for f32 and for f16 vectors (suffix _f32 / _f16). */
  readonly perDtype: boolean;
  /** Threads per block at every launch. */
  readonly threads: number;
  /** __launch_bounds__(threads, minBlocks): absent when the kernel declares none. */
  readonly bounds?: { readonly minBlocks?: number };
  /** Points per block when the grid is sized by points, and the .cu constant that says so. */
  readonly points?: { readonly value: number; readonly constant: string };
  readonly args: ReadonlyArray<readonly [name: string, kind: ArgKind]>;
}

const X_N_D = [['X', 'ptr'], ['n', 'i32'], ['d', 'i32']] as const;
const TOP2 = [['j1', 'ptr'], ['d1', 'ptr'], ['j2', 'ptr'], ['d2', 'ptr']] as const;
const ASSIGN = [['X', 'ptr'], ['C', 'ptr'], ['n', 'i32'], ['d', 'i32'], ['m', 'i32'], ...TOP2] as const;
const EXACT_H = [
  ['X', 'ptr'], ['C', 'ptr'], ['xn', 'ptr'], ['keys', 'ptr'], ['scalars', 'ptr'], ['c1', 'f32'], ['c2', 'f32'], ['c3', 'f32'],
  ['c4', 'f32'], ['s2', 'f32'], ['imask', 'i32'], ['n', 'i32'], ['d', 'i32'], ['m', 'i32'],
  ['J1', 'ptr'], ['D1', 'ptr'], ['J2', 'ptr'], ['D2', 'ptr'], ['list', 'ptr'], ['thr', 'ptr'], ['ccount', 'ptr'], ['cap', 'i32'],
] as const;
const COLLECT_H = [
  ['Xh', 'ptr'], ['Ch', 'ptr'], ['xn', 'ptr'], ['cn', 'ptr'], ['list', 'ptr'], ['scalars', 'ptr'], ['thr', 'ptr'], ['cap', 'i32'],
  ['dp', 'i32'], ['mpad', 'i32'], ['cand', 'ptr'], ['ccount', 'ptr'], ['ncand', 'i32'],
] as const;
const SCREEN_H = [
  ['Xh', 'ptr'], ['Ch', 'ptr'], ['xn', 'ptr'], ['cn', 'ptr'], ['scalars', 'ptr'], ['n', 'i32'], ['dp', 'i32'], ['mpad', 'i32'],
  ['hmask', 'i32'], ['keys', 'ptr'],
] as const;

/** A kernel of screen_h90.cu that runs blocks of W9_P points in two warpgroups. */
function hopperScreen<A extends KernelSpec['args']>(args: A) {
  return { module: 'screen_h90', perDtype: false, threads: 256, bounds: { minBlocks: 2 }, points: { value: 128, constant: 'W9_P' }, args } as const;
}

export const KERNELS = {
  // seed.cu: k-means++ support; each block owns SEED_POINTS consecutive points.
  seed_dist: {
    module: 'seed', perDtype: true, threads: 256, bounds: {}, points: { value: 256, constant: 'SEED_POINTS' },
    args: [...X_N_D, ['c', 'ptr'], ['D', 'ptr'], ['mode', 'i32'], ['seedScale', 'f64'], ['partial', 'ptr']],
  },
  seed_try: {
    module: 'seed', perDtype: true, threads: 256, bounds: {}, points: { value: 256, constant: 'SEED_POINTS' },
    args: [...X_N_D, ['C', 'ptr'], ['L', 'i32'], ['D', 'ptr'], ['seedScale', 'f64'], ['partial', 'ptr']],
  },
  // k-means++ in rounds: the nearest of L candidates by assign.cu's tiled loop; blocks of 64 points.
  seed_many: {
    module: 'seed', perDtype: true, threads: 256, bounds: { minBlocks: 2 }, points: { value: 64, constant: 'SM_P' },
    args: [...X_N_D, ['C', 'ptr'], ['L', 'i32'], ['D', 'ptr'], ['seedScale', 'f64'], ['partial', 'ptr']],
  },
  // k-means++ in rounds through the screen: D = min(D, D1), D1 the screened assign's exact nearest distance.
  seed_min: {
    module: 'seed', perDtype: false, threads: 256, bounds: {}, points: { value: 256, constant: 'SEED_POINTS' },
    args: [['D', 'ptr'], ['D1', 'ptr'], ['n', 'i32'], ['seedScale', 'f64'], ['partial', 'ptr']],
  },
  // Init's sample gathered from the parent engine's resident vectors (CudaEngine.subset).
  gather_rows: {
    module: 'seed', perDtype: true, threads: 256,
    args: [['src', 'ptr'], ['list', 'ptr'], ['count', 'i32'], ['d', 'i32'], ['dst', 'ptr']],
  },
  max_abs: { module: 'seed', perDtype: true, threads: 256, args: [['X', 'ptr'], ['count', 'i64'], ['out', 'ptr']] },
  // assign.cu: the exact top-2 by direct differences, over every point or over a list of points.
  assign_top2: {
    module: 'assign', perDtype: true, threads: 256, bounds: { minBlocks: 2 }, points: { value: 64, constant: 'AS_P' },
    args: ASSIGN,
  },
  assign_list: {
    module: 'assign', perDtype: true, threads: 256, bounds: { minBlocks: 2 }, points: { value: 64, constant: 'AS_P' },
    args: [...ASSIGN, ['list', 'ptr'], ['count', 'ptr']],
  },
  // screen_h.cu: the exact fp16 tensor-core screen (mma.sync, any GPU since Ampere) and the steps
  // around it that every screen shares: fp16 copies, the exact decision, the split fallback.
  prep_points: {
    module: 'screen_h', perDtype: true, threads: 256, bounds: {},
    args: [['X', 'ptr'], ['mu', 'ptr'], ['s', 'f32'], ['n', 'i32'], ['d', 'i32'], ['dp', 'i32'], ['npad', 'i32'], ['Xh', 'ptr'], ['xn', 'ptr']],
  },
  screen_reset: { module: 'screen_h', perDtype: false, threads: 32, bounds: {}, args: [['scalars', 'ptr'], ['first', 'i32']] },
  prep_anchors: {
    module: 'screen_h', perDtype: false, threads: 256, bounds: {},
    args: [['C', 'ptr'], ['mu', 'ptr'], ['s', 'f32'], ['m', 'i32'], ['d', 'i32'], ['dp', 'i32'], ['mpad', 'i32'], ['Ch', 'ptr'], ['cn', 'ptr'], ['scalars', 'ptr']],
  },
  screen_h: {
    module: 'screen_h', perDtype: false, threads: 256, bounds: { minBlocks: 2 }, points: { value: 128, constant: 'SH_P' },
    args: SCREEN_H,
  },
  exact_h: {
    module: 'screen_h', perDtype: true, threads: 256, bounds: {}, points: { value: 64, constant: 'EX_P' },
    args: EXACT_H,
  },
  // The same over the 16-key rows of screen_h90 / screen_h90m (SH_ROW_WIDE).
  exact_h16: {
    module: 'screen_h', perDtype: true, threads: 256, bounds: { minBlocks: 3 }, points: { value: 64, constant: 'EX_P' },
    args: EXACT_H,
  },
  collect_h: {
    module: 'screen_h', perDtype: false, threads: 256, bounds: { minBlocks: 2 }, points: { value: 128, constant: 'SH_P' },
    args: COLLECT_H,
  },
  exact_collect: {
    module: 'screen_h', perDtype: true, threads: 256, bounds: {}, points: { value: 64, constant: 'EX_P' },
    args: [
      ['X', 'ptr'], ['C', 'ptr'], ['list', 'ptr'], ['scalars', 'ptr'], ['thr', 'ptr'], ['cap', 'i32'], ['cand', 'ptr'], ['ccount', 'ptr'],
      ['ncand', 'i32'], ['d', 'i32'], ['J1', 'ptr'], ['D1', 'ptr'], ['J2', 'ptr'], ['D2', 'ptr'], ['list2', 'ptr'],
    ],
  },
  fallback_split: {
    module: 'screen_h', perDtype: true, threads: 256, bounds: { minBlocks: 2 }, points: { value: 64, constant: 'FB_P' },
    args: [['X', 'ptr'], ['C', 'ptr'], ['d', 'i32'], ['m', 'i32'], ['slice', 'i32'], ['list', 'ptr'], ['count', 'ptr'], ['cap', 'i32'], ['part', 'ptr']],
  },
  fallback_merge: {
    module: 'screen_h', perDtype: false, threads: 256, bounds: {},
    args: [
      ['part', 'ptr'], ['slices', 'i32'], ['cap', 'i32'], ['list', 'ptr'], ['count', 'ptr'], ['rest', 'ptr'],
      ['J1', 'ptr'], ['D1', 'ptr'], ['J2', 'ptr'], ['D2', 'ptr'],
    ],
  },
  // screen_h90.cu (sm_90a, Hopper only): the same screen on warpgroup instructions (wgmma); the
  // points streamed with the anchors (screen_h90, and collect_h90 over the uncertain points), or
  // resident in shared memory with the anchors bulk-copied from their tiled copy (screen_h90m,
  // dp 256; screen_h90mo, dp <= 192, 8 keys per lane, _k3 and _k2 3 or 2 without a branch per key;
  // 'Ch' is then tile_anchors' Ct). Dynamic shared memory (sharedBytes) beyond the 48 KB default.
  screen_h90: hopperScreen(SCREEN_H),
  collect_h90: hopperScreen(COLLECT_H),
  screen_h90m: hopperScreen(SCREEN_H),
  screen_h90mo: hopperScreen(SCREEN_H),
  screen_h90mo_k3: hopperScreen(SCREEN_H),
  screen_h90mo_k2: hopperScreen(SCREEN_H),
  tile_anchors: {
    module: 'screen_h90', perDtype: false, threads: 256, bounds: {},
    args: [['Ch', 'ptr'], ['dp', 'i32'], ['mpad', 'i32'], ['Ct', 'ptr']],
  },
  // reduce.cu: per-anchor statistics from each point's top-2, and the pass's scalars.
  reduce_points: {
    module: 'reduce', perDtype: true, threads: 256, bounds: {},
    args: [
      ...X_N_D, ['J1', 'ptr'], ['D1', 'ptr'], ['J2', 'ptr'], ['D2', 'ptr'], ['assign', 'ptr'], ['H', 'ptr'],
      ['temperature', 'f64'], ['accumulate', 'i32'], ['sScale', 'f64'], ['wScale', 'f64'], ['eScale', 'f64'],
      ['S', 'ptr'], ['W', 'ptr'], ['count', 'ptr'], ['sse', 'ptr'], ['far', 'ptr'], ['partial', 'ptr'], ['first', 'i32'],
    ],
  },
  // The sorted reduce (the default, CudaOptions.reduce): the same sums in four steps per span.
  reduce_tally: {
    module: 'reduce', perDtype: false, threads: 256, bounds: {},
    args: [
      ['n', 'i32'], ['J1', 'ptr'], ['D1', 'ptr'], ['J2', 'ptr'], ['D2', 'ptr'], ['assign', 'ptr'], ['H', 'ptr'],
      ['temperature', 'f64'], ['accumulate', 'i32'], ['eScale', 'f64'],
      ['count', 'ptr'], ['sse', 'ptr'], ['far', 'ptr'], ['fill', 'ptr'], ['rank', 'ptr'], ['partial', 'ptr'], ['first', 'i32'],
    ],
  },
  reduce_offsets: {
    module: 'reduce', perDtype: false, threads: 1024, bounds: {},
    args: [['fill', 'ptr'], ['m', 'i32'], ['off', 'ptr']],
  },
  reduce_scatter: {
    module: 'reduce', perDtype: false, threads: 256, bounds: {},
    args: [
      ['n', 'i32'], ['J1', 'ptr'], ['D1', 'ptr'], ['J2', 'ptr'], ['D2', 'ptr'], ['H', 'ptr'], ['temperature', 'f64'],
      ['rank', 'ptr'], ['off', 'ptr'], ['list', 'ptr'],
    ],
  },
  reduce_sums: {
    module: 'reduce', perDtype: true, threads: 256, bounds: { minBlocks: 2 },
    args: [
      ['X', 'ptr'], ['d', 'i32'], ['list', 'ptr'], ['off', 'ptr'], ['m', 'i32'], ['sScale', 'f64'], ['wScale', 'f64'], ['eScale', 'f64'],
      ['S', 'ptr'], ['W', 'ptr'], ['count', 'ptr'], ['sse', 'ptr'], ['far', 'ptr'], ['first', 'i32'],
    ],
  },
  pass_end: {
    module: 'reduce', perDtype: false, threads: 256, bounds: {},
    args: [['partial', 'ptr'], ['blocks', 'i32'], ['fallback', 'ptr'], ['out', 'ptr']],
  },
  // update.cu: the per-anchor steps around a pass.
  pass_begin: {
    module: 'update', perDtype: false, threads: 256,
    args: [
      ['m', 'i32'], ['d', 'i32'], ['huber', 'f64'], ['hasPrev', 'i32'], ['eScale', 'f64'],
      ['count', 'ptr'], ['sse', 'ptr'], ['far', 'ptr'], ['W', 'ptr'], ['S', 'ptr'], ['H', 'ptr'],
    ],
  },
  update_anchors: {
    module: 'update', perDtype: false, threads: 256,
    args: [['C', 'ptr'], ['S', 'ptr'], ['W', 'ptr'], ['m', 'i32'], ['d', 'i32'], ['step', 'f64'], ['sScale', 'f64'], ['wScale', 'f64']],
  },
  // residual.cu: the scalar residual codec (codecs/scalar-rows.ts) on the GPU, bit for bit.
  residual_ranges: {
    module: 'residual', perDtype: true, threads: 256, bounds: {},
    args: [['X', 'ptr'], ['n', 'i32'], ['d', 'i32'], ['C', 'ptr'], ['assign', 'ptr'], ['blockRows', 'i32'], ['maxAbs', 'ptr'], ['sumSq', 'ptr']],
  },
  residual_rows: {
    module: 'residual', perDtype: true, threads: 256, bounds: {},
    args: [
      ['X', 'ptr'], ['n', 'i32'], ['d', 'i32'], ['C', 'ptr'], ['assign', 'ptr'], ['scales', 'ptr'], ['L', 'i32'], ['codes', 'ptr'], ['rowErr', 'ptr'],
    ],
  },
  residual_bits_rows: {
    module: 'residual', perDtype: true, threads: 256, bounds: {},
    args: [
      ['X', 'ptr'], ['n', 'i32'], ['d', 'i32'], ['C', 'ptr'], ['assign', 'ptr'], ['bits', 'ptr'], ['steps', 'ptr'], ['R', 'i32'], ['codes', 'ptr'], ['rowErr', 'ptr'],
    ],
  },
  residual_block_errs: {
    module: 'residual', perDtype: false, threads: 256, bounds: {},
    args: [['rowErr', 'ptr'], ['n', 'i32'], ['blockRows', 'i32'], ['blockErr', 'ptr']],
  },
  residual_row_sums: {
    module: 'residual', perDtype: true, threads: 256, bounds: {},
    args: [
      ['X', 'ptr'], ['d', 'i32'], ['C', 'ptr'], ['assign', 'ptr'], ['scales', 'ptr'], ['codes', 'ptr'], ['rows', 'ptr'], ['count', 'i32'], ['sums', 'ptr'],
    ],
  },
  crc_slices: {
    module: 'residual', perDtype: false, threads: 256, bounds: {},
    args: [['bytes', 'ptr'], ['total', 'i64'], ['slice', 'i32'], ['out', 'ptr']],
  },
  // decode.cu: a .vlc's rows reconstructed on the device as io/vlc/reconstruct.ts does (decode.ts).
  decode_scalar: {
    module: 'decode', perDtype: false, threads: 256, bounds: {},
    args: [['anchors', 'ptr'], ['assign', 'ptr'], ['codes', 'ptr'], ['scales', 'ptr'], ['r0', 'i32'], ['rows', 'i32'], ['d', 'i32'], ['out', 'ptr']],
  },
  decode_pq: {
    module: 'decode', perDtype: false, threads: 256, bounds: {},
    args: [
      ['anchors', 'ptr'], ['assign', 'ptr'], ['codes', 'ptr'], ['bounds', 'ptr'], ['codebooks', 'ptr'], ['scales', 'ptr'], ['M', 'i32'], ['K', 'i32'],
      ['r0', 'i32'], ['rows', 'i32'], ['d', 'i32'], ['out', 'ptr'],
    ],
  },
  decode_pq_projected: {
    module: 'decode', perDtype: false, threads: 256, bounds: {},
    args: [
      ['anchors', 'ptr'], ['assign', 'ptr'], ['codes', 'ptr'], ['bounds', 'ptr'], ['codebooks', 'ptr'], ['projection', 'ptr'], ['scales', 'ptr'],
      ['M', 'i32'], ['K', 'i32'], ['r0', 'i32'], ['rows', 'i32'], ['d', 'i32'], ['out', 'ptr'],
    ],
  },
  decode_bits: {
    module: 'decode', perDtype: false, threads: 256, bounds: {},
    args: [
      ['anchors', 'ptr'], ['assign', 'ptr'], ['codes', 'ptr'], ['bits', 'ptr'], ['start', 'ptr'], ['steps', 'ptr'], ['R', 'i32'],
      ['r0', 'i32'], ['rows', 'i32'], ['d', 'i32'], ['out', 'ptr'],
    ],
  },
  // ec.cu: the entropy-coded residual section (ec.ts): one warp per block of rows decodes its rANS
  // lanes into integer codes (EC_WARPS blocks per thread block); then the rows from anchors and codes,
  // on the axes (one thread per element) or along principal directions (a thread block per row), grid-stride.
  ec_decode: {
    module: 'ec', perDtype: false, threads: 128, bounds: {}, points: { value: 4, constant: 'EC_WARPS' },
    args: [
      ['bytes', 'ptr'], ['blockAt', 'ptr'], ['b0', 'i32'], ['blocks', 'i32'], ['blockRows', 'i32'], ['n', 'i32'], ['D', 'i32'],
      ['scaleBits', 'i32'], ['slots', 'ptr'], ['state', 'ptr'], ['lo', 'ptr'], ['size', 'ptr'], ['codes', 'ptr'], ['err', 'ptr'],
    ],
  },
  ec_axis: {
    module: 'ec', perDtype: false, threads: 256, bounds: {},
    args: [
      ['anchors', 'ptr'], ['assign', 'ptr'], ['codes', 'ptr'], ['colOf', 'ptr'], ['steps', 'ptr'], ['offsets', 'ptr'], ['D', 'i32'],
      ['c0', 'i32'], ['r0', 'i32'], ['rows', 'i32'], ['d', 'i32'], ['out', 'ptr'],
    ],
  },
  ec_rotated: {
    module: 'ec', perDtype: false, threads: 128, bounds: {},
    args: [
      ['anchors', 'ptr'], ['assign', 'ptr'], ['codes', 'ptr'], ['dims', 'ptr'], ['P', 'ptr'], ['steps', 'ptr'], ['offsets', 'ptr'],
      ['D', 'i32'], ['c0', 'i32'], ['r0', 'i32'], ['rows', 'i32'], ['d', 'i32'], ['out', 'ptr'],
    ],
  },
  // knn.cu: exact k-NN (the GPU's ExactKnn, knn.ts): each block a group of queries × a chunk of
  // the base (grid: groups × chunks), each query's top-k kept in registers; then one warp per query
  // merges the chunks' lists.
  knn_scan: {
    module: 'knn', perDtype: false, threads: 256, bounds: { minBlocks: 2 }, points: { value: 32, constant: 'KN_Q' },
    args: [
      ['QT', 'ptr'], ['nqPad', 'i32'], ['nq', 'i32'], ['X', 'ptr'], ['nb', 'i32'], ['d', 'i32'], ['k', 'i32'], ['chunkRows', 'i32'],
      ['partD', 'ptr'], ['partI', 'ptr'],
    ],
  },
  knn_merge: {
    module: 'knn', perDtype: false, threads: 256, bounds: {},
    args: [['partD', 'ptr'], ['partI', 'ptr'], ['nq', 'i32'], ['chunks', 'i32'], ['k', 'i32'], ['outD', 'ptr'], ['outI', 'ptr']],
  },
  add_partials: {
    module: 'update', perDtype: false, threads: 256,
    args: [
      ['S', 'ptr'], ['W', 'ptr'], ['sse', 'ptr'], ['far', 'ptr'], ['count', 'ptr'],
      ['S2', 'ptr'], ['W2', 'ptr'], ['sse2', 'ptr'], ['far2', 'ptr'], ['count2', 'ptr'], ['m', 'i32'], ['d', 'i32'],
    ],
  },
} as const satisfies Record<string, KernelSpec>;

export type KernelName = keyof typeof KERNELS;

/** The named arguments of kernel K: pointers as bigint device addresses, scalars as numbers. */
export type KernelArgs<K extends KernelName> = {
  [A in (typeof KERNELS)[K]['args'][number] as A[0]]: A[1] extends 'ptr' ? bigint : number;
};

/** The function name in the PTX: `name_f32` / `name_f16` for the per-dtype kernels. */
export function buildName(k: KernelName, dtype: 'f32' | 'f16'): string {
  return KERNELS[k].perDtype ? `${k}_${dtype}` : k;
}

/** Every function the PTX modules must contain, with the table entry it comes from. */
export function allBuilds(): Array<{ name: string; kernel: KernelName; spec: KernelSpec }> {
  return (Object.keys(KERNELS) as KernelName[]).flatMap((kernel) => {
    const spec: KernelSpec = KERNELS[kernel];
    const names = spec.perDtype ? [`${kernel}_f32`, `${kernel}_f16`] : [kernel];
    return names.map((name) => ({ name, kernel, spec }));
  });
}

/** The table entry of a function name of the PTX (name_f32 / name_f16 / name), or undefined. */
export function specOf(name: string): { kernel: KernelName; spec: KernelSpec } | undefined {
  const b = allBuilds().find((x) => x.name === name);
  return b && { kernel: b.kernel, spec: b.spec };
}

/** One kernel argument as cuLaunchKernel takes it: a one-element typed array holding the C value. */
function packArg(kind: ArgKind, v: bigint | number): ArrayBufferView {
  switch (kind) {
    case 'ptr':
      return new BigUint64Array([v as bigint]);
    case 'i32':
      return new Int32Array([v as number]);
    case 'i64':
      return new BigInt64Array([BigInt(v)]);
    case 'f32':
      return new Float32Array([v as number]);
    case 'f64':
      return new Float64Array([v as number]);
  }
}

/** The packed arguments of `spec` in declaration order (a missing one is a programming error). */
export function packArgs(spec: KernelSpec, args: Record<string, bigint | number>): ArrayBufferView[] {
  return spec.args.map(([name, kind]) => {
    const v = args[name];
    if (v === undefined) throw new Error(`kernel argument ${name} missing`);
    return packArg(kind, v);
  });
}

/**
 * packArgs for a launch, into typed arrays kept per kernel and refilled: launches are the hot path
 * of small problems, and cuLaunchKernel copies the values before it returns, so reuse is safe.
 */
const reused = new Map<KernelSpec, ArrayBufferView[]>();
function packArgsReused(spec: KernelSpec, args: Record<string, bigint | number>): ArrayBufferView[] {
  let out = reused.get(spec);
  if (!out) reused.set(spec, (out = spec.args.map(([, kind]) => packArg(kind, kind === 'ptr' || kind === 'i64' ? 0n : 0))));
  for (let i = 0; i < spec.args.length; i++) {
    const [name, kind] = spec.args[i];
    const v = args[name];
    if (v === undefined) throw new Error(`kernel argument ${name} missing`);
    (out[i] as unknown as Array<bigint | number>)[0] = kind === 'i64' ? BigInt(v) : v;
  }
  return out;
}

/** The named arguments back from packed ones (the fake driver's side of packArgs). */
export function unpackArgs(spec: KernelSpec, packed: ArrayBufferView[]): Record<string, bigint | number> {
  if (packed.length !== spec.args.length) throw new Error(`expected ${spec.args.length} kernel arguments, got ${packed.length}`);
  const out: Record<string, bigint | number> = {};
  spec.args.forEach(([name, kind], i) => {
    const p = packed[i] as unknown as ArrayLike<bigint | number>;
    out[name] = kind === 'i64' ? Number(p[0]) : p[0];
  });
  return out;
}

/** A grid beyond one dimension, or dynamic shared memory (bytes). */
export interface LaunchShape {
  gridY?: number;
  sharedBytes?: number;
}

/**
 * Launch kernel k (the build for `dtype` when it has one) on `grid` blocks of its threads. No
 * blocks (an engine over no rows: a shard's part of a subset may be empty) is no work, not a launch.
 */
export function launch<K extends KernelName>(
  ctx: CudaContext, k: K, dtype: 'f32' | 'f16', grid: number, args: KernelArgs<K>, shape: LaunchShape = {},
): void {
  if (grid === 0) return;
  const spec: KernelSpec = KERNELS[k];
  ctx.launch(spec.module, buildName(k, dtype), grid, spec.threads, packArgsReused(spec, args as Record<string, bigint | number>), shape.sharedBytes ?? 0, shape.gridY ?? 1);
}
