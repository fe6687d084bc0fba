// The host's CodecDevice (device.ts): every codec and search kernel on this machine's CPU — the
// scalar and bits encoders of codecs/ on their worker threads, a file's rows, the CPU's exact k-NN, pq search and
// k-NN over decoded vectors (cpu/knn.ts). The CPU backend is this device; a GPU falls back to it
// kernel by kernel (cuda/index.ts), for the same bytes.
import { encodeScalar } from '../codecs/scalar.js';
import { hostScalarBlocks } from '../codecs/scalar-blocks.js';
import { reconstructRange } from '../io/vlc/reconstruct.js';
import { cpuKnn } from './cpu/knn.js';
import type { CodecDevice } from './device.js';

export const hostDevice: CodecDevice = {
  encodeScalar: (mode, input) => encodeScalar(mode, input),
  scalarRanges: (input) => hostScalarBlocks.scalarRanges(input),
  scalarCodes: (input, scales, L) => hostScalarBlocks.scalarCodes(input, scales, L),
  // Loaded when first used: reading a file never loads a trainer.
  encodeBits: async (input, R) => (await import('../codecs/bits-train.js')).encodeBits(input, R),
  encodeScalarRows: async (mode, input, scalesFrom, codes) => (await import('../codecs/split.js')).scalarRows(mode, input, scalesFrom, codes),
  encodeBitsRows: async (input, plan, codes) => (await import('../codecs/bits-train.js')).bitsRows(input, plan, codes),
  decodeRows: async (file, r0, r1, out) => reconstructRange(file, r0, r1, out),
  exactKnn: cpuKnn,
};
