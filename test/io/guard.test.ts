// Corrupt Arrow/Parquet files found by fuzzing: the third-party decoders hang or exhaust memory on
// them; the decode guard (worker + watchdog + heap cap) must turn both into one UsageError line.
import * as path from 'node:path';
import { describe, it } from 'vitest';
import { readDataset } from '../../dist/io/read.js';
import { setDecodeGuardLimits } from '../../dist/io/readers/guard.js';
import { expectUsage } from './helpers.js';

const fixtures = path.join(path.dirname(new URL(import.meta.url).pathname), 'fixtures');

describe('decode guard', () => {
  it('a Parquet page that loops hyparquet forever is reported, not hung on', async () => {
    setDecodeGuardLimits({ stallMs: 2000, maxHeapMb: 2048 });
    await expectUsage(readDataset(path.join(fixtures, 'corrupt-hang.parquet')), 'corrupt-hang.parquet: the Parquet decoder made no progress for 2 s; the file is probably corrupt');
  });
  it('an Arrow footer that makes apache-arrow allocate without end is reported, not a V8 crash', async () => {
    setDecodeGuardLimits({ stallMs: 60_000, maxHeapMb: 256 });
    await expectUsage(readDataset(path.join(fixtures, 'corrupt-oom.arrow')), 'corrupt-oom.arrow: the Arrow decoder ran out of memory (256 MB); the file is probably corrupt');
  });
});
