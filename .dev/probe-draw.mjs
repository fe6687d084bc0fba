// Device probe (session 11): the training sample's draw, 16,777,216 of 100,000,000 rows, on this
// thread and on a thread of its own (api/sample-draw.ts), the same rows checked.
import { trainingSample } from '../dist/api/train.js';
import { trainingSampleOffThread } from '../dist/api/sample-draw.js';
const [n, s] = [1e8, 16777216];
const ref = trainingSample(42, n, s);
for (let r = 0; r < 3; r++) {
  let t = performance.now();
  trainingSample(42, n, s);
  const here = performance.now() - t;
  t = performance.now();
  const got = await trainingSampleOffThread(42, n, s);
  console.log(`draw: here ${here.toFixed(0)} ms, on a thread ${(performance.now() - t).toFixed(0)} ms${Buffer.from(got.buffer).equals(Buffer.from(ref.buffer)) ? '' : ' DIFFERENT'}`);
}
