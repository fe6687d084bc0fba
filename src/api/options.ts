// The types and defaults the library's options are made of, from the layers that define them, so
// that the commands (which parse flags into these options) need import nothing below api/.
export { DEFAULT_CONFIG, EFFORTS, type Effort } from '../anneal/config.js';
export type { IterRecord } from '../anneal/types.js';
export type { DeviceChoice } from '../backend/select.js';
export type { ReadOptions } from '../io/read.js';
export { METRICS, METRIC_HELP, type Metric } from '../vectors/metric.js';
