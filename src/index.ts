// vlc as a library: `import { compress, decompress, search, evaluate, info, readVectors, openVlc }
// from 'vlc'`. The same code the commands run (their --json output is these functions' results);
// errors are the classes of errors.ts (UsageError for bad input, exit code 2 on the command line;
// DeviceError for an unusable GPU; InterruptedError). Logs go to stderr as the CLI's do;
// setVerbosity('quiet') keeps only errors.
export { compress, defaultAnchors, type CompressOptions, type CompressResult, type Vectors } from './api/compress.js';
export { decompress, type DecompressOptions, type DecompressResult } from './api/decompress.js';
export { openVlc, readVectors, type OpenedVlc } from './api/vectors.js';
export { search, type SearchOptions, type SearchResult } from './api/search.js';
export { evaluate, type EvalResult, type EvaluateOptions } from './api/evaluate.js';
export { info, type InfoResult } from './api/info.js';
export type { VectorsInput, VlcInput } from './api/inputs.js';
export { DeviceError, EXIT, InterruptedError, UsageError, VlcError } from './errors.js';
export { setVerbosity, type Verbosity } from './log.js';
export { forEachPiece, rows, type Dataset, type VectorDtype } from './vectors/dataset.js';
export type { ReadOptions } from './io/read.js';
export type { VlcManifest } from './io/vlc/manifest.js';
export type { Assignments, VlcFile } from './io/vlc/format.js';
export type { DeviceChoice } from './backend/select.js';
export { METRICS, type Metric } from './vectors/metric.js';
// Residual codecs: the registry's extension point (docs/architecture.md "Adding a codec").
export { allCodecs, codecFor, registerCodec, type Codec, type CodecPlan, type EncodeContext, type ResidualChoice, type Shape } from './codec-registry/index.js';
export type { CodedResiduals, EncodedResiduals, ResidualInput, ResidualSection, SectionContext } from './codecs/types.js';
