// info(): what a .vlc file holds — header, section sizes, compression ratios, the quality compress
// measured and the training statistics. Reading it validates the file: from a path, the header, the
// manifest, every section header and padding, every payload's checksum (streamed a piece at a
// time) and the anchors, assignments and norms, with the residual section's head and its first
// rows (io/vlc/on-disk.ts) — the codes themselves are never loaded, and the values of codes past
// the first rows are not checked (decompress, search and eval check every block they read). From
// stdin, or a file already read, as readVlc read it (every code checked). What `vlc info --json`
// prints after `schema` and `command`, and what `import { info } from 'vlc'` gives.
import { factsOf } from '../codec-registry/index.js';
import type { VlcFile } from '../io/vlc/format.js';
import type { VlcManifest } from '../io/vlc/manifest.js';
import { sizeFigures } from '../io/vlc/stats.js';
import { silentReporter } from '../log.js';
import { vlcOnDiskOf, type VlcInput } from './inputs.js';
import { BlockedResiduals } from '../io/vlc/on-disk.js';
import { snakeKeys } from './json.js';

export { fewIds } from '../vectors/row-ids.js';

/** info()'s result: the fields are listed in docs/json.md (`vlc info`). */
export type InfoResult = ReturnType<typeof infoOf>;

/** What the .vlc file `vlc` (a path, '-' for stdin, or one read already) holds. */
export async function info(vlc: VlcInput): Promise<InfoResult> {
  // Blocks of one row: the codec's facts need the section's head and nothing of its codes.
  const { file, close } = await vlcOnDiskOf(vlc, silentReporter, 1);
  try {
    return infoOf(file);
  } finally {
    close();
  }
}

/** What the .vlc file holds, from a file already read: info()'s result. */
export function infoOf(file: VlcFile) {
  const mf = file.manifest;
  const r = file.residuals;
  const residualFacts = factsOf(r instanceof BlockedResiduals ? r.block(0) : r);
  const { n, d, m } = mf;
  return {
    n,
    d,
    m,
    metric: mf.metric,
    anchor_dtype: mf.anchorDtype,
    assignment_width: mf.assignmentWidth,
    residual: mf.residual,
    // Each codec's facts under its key (pq: subspaces, bits, code bytes, dims; bits: code bytes and
    // dimensions by width), null but for the file's own codec (codec-registry/), and in one line.
    ...residualFacts.json,
    residual_summary: residualFacts.line ?? null,
    format_version: file.version,
    tool_version: mf.tool.version,
    input_dtype: mf.input.dtype,
    ...sizeFigures(file.fileBytes, n, d, m, mf.input.dtype),
    sections: file.sections.map((s) => ({ name: s.name, bytes: s.bytes })),
    energy: mf.training.energy,
    ...qualityOf(mf),
    iterations: mf.training.iterations,
    init_iterations: mf.training.initIterations ?? null,
    converged: mf.training.converged,
    init: mf.training.init,
    device: mf.device,
    seed: mf.seed,
    dropped: mf.input.dropped,
    dropped_rows: mf.input.droppedRows ?? [],
    config: snakeKeys(mf.config),
  };
}

/**
 * The quality figures compress measured and stored (manifest `quality`). Files written before that
 * carry only the MSE (the residual error, or the training energy without residuals).
 */
function qualityOf(mf: VlcManifest) {
  const q = mf.quality;
  return {
    mse: q?.mse ?? mf.residualEnergy ?? mf.training.energy,
    relative_error: q?.relativeError ?? null,
    mean_cosine: q?.meanCosine ?? null,
    quality_vectors: q?.vectors ?? null,
    recall_at_10: q?.recallAt10 ?? null,
    recall_at_10_all: q?.recallAt10All ?? null,
    recall_at_10_all_low: q?.recallAt10AllLow ?? null,
    recall_at_10_all_high: q?.recallAt10AllHigh ?? null,
    recall_queries: q?.recallQueries ?? null,
    recall_base: q?.recallBase ?? null,
  };
}

