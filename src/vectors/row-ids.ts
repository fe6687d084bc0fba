// Input row ids after --drop-invalid: the kept rows are renumbered 0..n-1, and the input rows
// dropped are kept as one ascending list, so any kept row's input id can be found again (search
// results, decompress, --stats) without an n-sized map.

/**
 * The input row id of kept row `k`, given the ascending input ids of the rows dropped. With
 * dropped ids d_0 < d_1 < …, d_j lies before kept row k exactly when d_j − j ≤ k (the kept rows
 * before d_j number d_j − j), a non-decreasing sequence: a binary search counts them.
 */
export function inputRowId(k: number, dropped: readonly number[]): number {
  let lo = 0;
  let hi = dropped.length;
  while (lo < hi) {
    const mid = (lo + hi) >> 1;
    if (dropped[mid] - mid <= k) lo = mid + 1;
    else hi = mid;
  }
  return k + lo;
}

/**
 * Rows dropped in two steps as input ids: `first` (input ids, ascending) were dropped, then
 * `then` (ascending indices among the rows that were left). Returns every dropped input id, ascending.
 */
export function composeDropped(first: readonly number[], then: readonly number[]): number[] {
  if (first.length === 0) return [...then];
  const second = then.map((k) => inputRowId(k, first));
  const out: number[] = [];
  let i = 0;
  let j = 0;
  while (i < first.length || j < second.length) {
    if (j >= second.length || (i < first.length && first[i] < second[j])) out.push(first[i++]);
    else out.push(second[j++]);
  }
  return out;
}

/** "17, 45 and 3 more": the first few ids of a list, for one log line. */
export function fewIds(ids: readonly number[], shown = 5): string {
  const head = ids.slice(0, shown).join(', ');
  return ids.length > shown ? `${head} and ${ids.length - shown} more` : head;
}
