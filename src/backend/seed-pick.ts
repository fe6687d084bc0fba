// D² sampling's search for many targets at once (Engine.seedPickMany), shared by the engines: for
// each target the smallest i whose prefix of units D[0] + … + D[i] exceeds floor(target·scale);
// at or past the total, the last i with a share — the rule of Engine.seedPick, target by target.
// blockSums[b] holds the units of block b (`block` points each), so the walk skips whole blocks and
// scans point by point only the blocks that hold a target; the targets are visited in ascending
// order, so the walk passes over the data once.

/**
 * The picks for `targets` (in the order given). `units(i)` is point i's share in whole units
 * (fixed.ts fixedSeed of its D), the same integers blockSums add up.
 */
export function pickIndexes(
  targets: Float64Array, scale: number, blockSums: ArrayLike<number>, block: number, n: number, units: (i: number) => number,
): Int32Array {
  const T = Float64Array.from(targets, (t) => Math.floor(t * scale));
  const order = Array.from(T.keys()).sort((a, b) => T[a] - T[b] || a - b);
  const out = new Int32Array(targets.length);
  const blocks = blockSums.length;
  let b = 0;
  let acc = 0; // units of the blocks before b
  let scanning = -1; // the block whose points the cursor below walks
  let i = 0;
  let accI = 0; // units of the points before i
  let last = -1; // the last point with a share, found on first need
  for (const j of order) {
    while (b < blocks && acc + blockSums[b] <= T[j]) acc += blockSums[b++];
    if (b === blocks) {
      if (last < 0) last = lastShare(blockSums, block, n, units);
      out[j] = last;
      continue;
    }
    if (scanning !== b) {
      scanning = b;
      i = b * block;
      accI = acc;
    }
    // Ends inside block b: its units take the prefix past T[j].
    for (let u = units(i); accI + u <= T[j]; u = units(i)) {
      accI += u;
      i++;
    }
    out[j] = i;
  }
  return out;
}

/** The last point with a non-zero share (the first point of block 0 when none has one). */
function lastShare(blockSums: ArrayLike<number>, block: number, n: number, units: (i: number) => number): number {
  let b = blockSums.length - 1;
  while (b > 0 && !(blockSums[b] > 0)) b--;
  for (let i = Math.min(n, (b + 1) * block) - 1; i > b * block; i--) if (units(i) > 0) return i;
  return b * block;
}
