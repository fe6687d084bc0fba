// Memory planning, pure: from the data's shape, the device and the memory it may use, whether the
// vectors stay resident on the GPU (the fast path) or stream from host memory in tiles, and how
// large the tiles are. No driver calls: the engine passes the free and total bytes it measured.
import { CudaError } from './check.js';
import { fmtBytes } from './pool.js';
import { CU } from './status.js';
import { KERNELS } from './kernels.js';
import { TILE_ALIGN } from './options.js';
import { screenBytes } from './screen.js';

// A tile larger than TILE_MAX_BYTES of vectors gains nothing (one copy and one wait per tile) and
// would take memory other processes may want. TILE_MARGIN stays free when the tile is sized from
// the free memory (allocation granularity, the driver's own needs, seeding candidates that grow
// later); at most 1/16 of the budget.
const TILE_MAX_BYTES = 2 ** 30;
const TILE_MARGIN = 64 * 2 ** 20;

/** Points each block of reduce_points takes per step: one per warp. */
const REDUCE_WARPS = KERNELS.reduce_points.threads / 32;

/**
 * Blocks of the reduce's kernels for `rows` points (and of its partials): one point per warp of
 * reduce_points, at most 8 blocks per SM; the sorted reduce's kernels loop over their points or
 * contributions on the same grid.
 */
export function reduceGrid(rows: number, smCount: number): number {
  return Math.max(1, Math.min(Math.ceil(rows / REDUCE_WARPS), smCount * 8));
}

/**
 * The sorted reduce's buffers (cuda/reduce.cu): per row on the device a rank pair (8 bytes) and two
 * contributions of 24 bytes; per anchor its fill count and offset, and the total. Counted whichever
 * reduce runs: 'atomic' is for A/B runs.
 */
const sortedReduceBytes = (rows: number, m: number): number => rows * (8 + 2 * CONTRIBUTION_BYTES) + (2 * m + 1) * 4;

/** sizeof(Contribution) in cuda/reduce.cu: point, anchor, f64 weight, f32 distance, flag. */
export const CONTRIBUTION_BYTES = 24;

/**
 * Device bytes one engine needs for n×d vectors and m anchors: with all the vectors on the GPU
 * (tileRows 0), or streamed through two buffers of tileRows rows. The vectors and the screen's
 * buffers (its fp16 copy, keys and fallback list hold the rows on the device) shrink with the tile;
 * every other per-point and per-anchor array stays whole, and the reduce partials grow by one grid
 * per tile (the sorted reduce's lists are per tile). The screen's buffers count when the engine
 * screens (screen.ts screens()).
 */
export function engineBytes(n: number, d: number, m: number, dtype: 'f32' | 'f16', smCount: number, tileRows = 0, screened = false): number {
  const rows = Math.max(1, tileRows > 0 ? Math.min(tileRows, n) : n); // rows on the device at once
  // Streamed: two tile buffers, one uploaded while the kernels read the other (spans.ts).
  const vectors = rows * d * (dtype === 'f16' ? 2 : 4) * (tileRows > 0 ? 2 : 1);
  const perPoint = n * 4 * 6; // j1, d1, j2, d2, assign, seed D
  const anchors = m * d * (4 + 8) + m * (8 + 4 + 8 + 8 + 8 + 16); // C, S; W, count, sse, far, H, nearestOther's top-2
  const seedBlocks = Math.ceil(n / KERNELS.seed_dist.points.value);
  const partials = seedBlocks * 8 * 8 + Math.ceil(n / rows) * reduceGrid(rows, smCount) * 16 + 64;
  return vectors + perPoint + anchors + partials + sortedReduceBytes(rows, m) + (screened ? screenBytes(d, m, rows) : 0) + d * 4 * 9;
}

export interface PlanInput {
  n: number;
  d: number;
  m: number;
  dtype: 'f32' | 'f16';
  smCount: number;
  /** Free and total device bytes as the driver reports them (total 0: it cannot say). */
  free: number;
  total: number;
  /** The user's limit (CudaOptions.maxDeviceBytes), and forced tile rows (CudaOptions.tileRows). */
  maxDeviceBytes?: number;
  tileRows?: number;
  /** The device, for messages: "cuda:0". */
  where: string;
  /** Whether the passes screen (their buffers then count): screen.ts screens(). */
  screened?: boolean;
}

export interface MemoryPlan {
  /** Rows per tile, 0 when every vector is resident. */
  tileRows: number;
  tiles: number;
  /** Blocks of reduce_points per launch (one launch per tile). */
  reduceGrid: number;
  /** Why the run is tiled, for the log: 'memory' deserves a warning, 'option' only a debug line. */
  tiledBecause?: 'memory' | 'option';
  /** The sentence the engine logs when tiled. */
  note?: string;
}

/**
 * Resident when everything fits in the free memory, or in maxDeviceBytes when that is lower.
 * Otherwise the vectors stream through a tile buffer as large as the memory left allows (less a
 * margin, at most TILE_MAX_BYTES of vectors), in rows that are a multiple of TILE_ALIGN. When
 * even the per-point and per-anchor state with one tile of TILE_ALIGN rows does not fit: a
 * CudaError (exit 3) with the bytes needed and free.
 */
export function planMemory(p: PlanInput): MemoryPlan {
  const { n, d, m, dtype, smCount: sms, free, total, maxDeviceBytes: limit } = p;
  const sc = p.screened ?? false;
  // A driver that cannot say (total 0) constrains nothing; a limit the user gave still does.
  const budget = Math.min(total > 0 ? free : Infinity, limit ?? Infinity);
  const room =
    (limit !== undefined && limit < free ? `${fmtBytes(budget)} allowed (VLC_CUDA_MAX_BYTES), ` : '') +
    `${fmtBytes(free)} free of ${fmtBytes(total)}`;
  const resident = engineBytes(n, d, m, dtype, sms, 0, sc);
  if (n === 0) return { tileRows: 0, tiles: 1, reduceGrid: reduceGrid(0, sms) }; // a shard's empty part of a subset
  const rowBytes = d * (dtype === 'f16' ? 2 : 4);
  let rows: number;
  if (p.tileRows !== undefined) {
    rows = p.tileRows;
  } else {
    if (resident <= budget) return { tileRows: 0, tiles: 1, reduceGrid: reduceGrid(n, sms) };
    const minimal = engineBytes(n, d, m, dtype, sms, TILE_ALIGN, sc);
    if (minimal > budget) {
      throw new CudaError(
        `the data do not fit on ${p.where}: ${n}×${d} ${dtype} vectors with ${m} anchors need ${fmtBytes(minimal)} ` +
          `of GPU memory even with the vectors streamed from host memory in tiles of ${TILE_ALIGN} rows ` +
          `(${fmtBytes(resident)} with all of them on the GPU), ${room}; ` +
          `use fewer vectors or anchors, another GPU (--gpu), or --device cpu`,
        CU.OUT_OF_MEMORY,
      );
    }
    // The largest tile (in units of TILE_ALIGN rows) that fits beside the rest with the margin: a
    // binary search, engineBytes growing with the rows. One unit always goes (minimal fits).
    const margin = Math.min(TILE_MARGIN, budget / 16);
    let lo = 1;
    let hi = Math.max(1, Math.min(Math.floor(TILE_MAX_BYTES / rowBytes / TILE_ALIGN), Math.ceil(n / TILE_ALIGN)));
    while (lo < hi) {
      const mid = Math.ceil((lo + hi) / 2);
      if (engineBytes(n, d, m, dtype, sms, mid * TILE_ALIGN, sc) + margin <= budget) lo = mid;
      else hi = mid - 1;
    }
    rows = lo * TILE_ALIGN;
  }
  const tileRows = Math.min(rows, Math.ceil(n / TILE_ALIGN) * TILE_ALIGN);
  const tiles = Math.ceil(n / tileRows);
  const how = `streaming the vectors from host memory in ${tiles} tiles of ${tileRows} rows`;
  const forced = p.tileRows !== undefined;
  return {
    tileRows,
    tiles,
    reduceGrid: reduceGrid(Math.min(tileRows, n), sms),
    tiledBecause: forced ? 'option' : 'memory',
    note: forced
      ? `${p.where}: ${how} (tileRows option)`
      : `${n}×${d} ${dtype} vectors with ${m} anchors need ${fmtBytes(resident)} of GPU memory on ${p.where}, ${room}: ` +
        `${how}, which is slower (each pass and each k-means++ step copies the ${fmtBytes(n * rowBytes)} of vectors to the GPU again)`,
  };
}
