// The cold phase's swap trials: move the anchors cheapest to remove into the clusters with the
// largest error (maintenance.ts planSwaps), let Lloyd settle, keep the moves only if the energy
// dropped. The trial size halves on each rejection and doubles (up to its first size) on each
// acceptance; a pair that failed as a single swap is not tried again until something is accepted.
import type { AnchorStats, NearestAnchors } from '../backend/engine.js';
import type { AnnealConfig } from './config.js';
import { planSwaps, type Move } from './maintenance.js';

/** The state before a trial's moves: what a rejection restores. */
export interface Snapshot {
  anchors: Float32Array;
  energy: number;
  stats: AnchorStats;
}

export interface Trial extends Snapshot {
  moves: Move[];
}

export class SwapTrials {
  /** The trial under way, until judged. */
  open: Trial | undefined;
  private readonly maxSize: number;
  private size: number;
  private rejectsAtOne = 0;
  private readonly excluded = new Set<number>();

  constructor(m: number, private readonly cfg: AnnealConfig) {
    this.maxSize = Math.max(1, Math.round(m * cfg.swapShare));
    this.size = this.maxSize;
  }

  /** The phase ends after `swapRejects` rejected single swaps. */
  get exhausted(): boolean {
    return this.rejectsAtOne >= this.cfg.swapRejects;
  }

  /**
   * Close the open trial, given the settled energy after its moves: accepted (undefined returned)
   * when lower than before them, else rejected and its snapshot returned, for the caller to restore.
   */
  judge(energy: number): Snapshot | undefined {
    const t = this.open!;
    this.open = undefined;
    if (energy < t.energy) {
      this.excluded.clear(); // accepted: the landscape changed
      this.rejectsAtOne = 0;
      this.size = Math.min(this.maxSize, t.moves.length * 2);
      return undefined;
    }
    if (t.moves.length === 1) {
      this.rejectsAtOne++;
      this.excluded.add(t.moves[0].from).add(t.moves[0].to);
    }
    this.size = Math.max(1, Math.floor(t.moves.length / 2));
    return t;
  }

  /** The next trial's moves from the current state (none: nothing left worth trying); opens it. */
  plan(before: Snapshot, nn: NearestAnchors): Move[] {
    const moves = planSwaps(before.stats, nn, this.size, this.excluded);
    if (moves.length) this.open = { ...before, moves };
    return moves;
  }
}
