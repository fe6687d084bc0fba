// The exact k-NN a command should use with the backend it opened: the device's (a GPU's, for k
// up to its maxK and while it has room), else the CPU's. The CPU path is unchanged when the
// backend has none.
import { log } from '../log.js';
import { cpuKnn } from './cpu/knn.js';
import { KnnLimitError } from './cuda/knn.js';
import type { Backend, ExactKnn } from './types.js';

export function exactKnnFor(backend: Pick<Backend, 'exactKnn'> | undefined): ExactKnn {
  const device = backend?.exactKnn;
  if (!device) return cpuKnn;
  return {
    onDevice: device,
    async knn(base, nb, queries, nq, d, k) {
      if (k > device.maxK) return cpuKnn.knn(base, nb, queries, nq, d, k);
      try {
        return await device.knn(base, nb, queries, nq, d, k);
      } catch (e) {
        if (!(e instanceof KnnLimitError)) throw e;
        log().debug(`exact k-NN on the CPU: ${e.message}`);
        return cpuKnn.knn(base, nb, queries, nq, d, k);
      }
    },
  };
}
