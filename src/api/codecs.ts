// The residual codecs as the command line and library users see them: each mode with its help
// line and its own options (codec-registry/ holds the codecs themselves).
import { allCodecs, type CodecFlag } from '../codec-registry/index.js';

export interface CodecSummary {
  mode: string;
  help: string;
  flags: readonly CodecFlag[];
}

/** Every residual codec, in the order --help lists them. */
export function residualCodecs(): CodecSummary[] {
  return allCodecs().map((c) => ({ mode: c.mode, help: c.help, flags: c.flags ?? [] }));
}
