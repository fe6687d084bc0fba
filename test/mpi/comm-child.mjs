// One rank of test/mpi/comm.test.ts: the MPI Comm's gather (into the root's places and into fresh
// arrays, a rank with no bytes, messages past one round) and allreduce in place, checked here; a
// mismatch exits 1 with what differed. Run as `mpirun -n R node comm-child.mjs`.
import { worldComm } from '../../dist/backend/sharded/mpi.js';

const c = worldComm();
const fail = (what) => {
  process.stderr.write(`rank ${c.rank}: ${what}\n`);
  process.exit(1);
};
const bytesOf = (r, len) => Uint8Array.from({ length: len }, (_, k) => (r * 31 + k * 7) & 255);
const lengthOf = (r) => (r === 1 ? 0 : 100_003 + r * 17); // rank 1 sends nothing

// Into places: the root's own bytes already in place (nothing copied), the others received there.
const lengths = Array.from({ length: c.size }, (_, r) => lengthOf(r));
const whole = new Uint8Array(lengths.reduce((a, b) => a + b, 0));
const at = lengths.map((_, r) => lengths.slice(0, r).reduce((a, b) => a + b, 0));
const places = lengths.map((len, r) => whole.subarray(at[r], at[r] + len));
const mine = c.rank === 0 ? places[0] : bytesOf(c.rank, lengthOf(c.rank));
if (c.rank === 0) mine.set(bytesOf(0, lengthOf(0)));
const got = await c.gather(mine, 0, c.rank === 0 ? places : undefined);
if (c.rank === 0) {
  if (got !== places) fail('gather into places did not return them');
  for (let r = 0; r < c.size; r++) if (!bytesOf(r, lengths[r]).every((v, k) => whole[at[r] + k] === v)) fail(`gather into places: rank ${r}'s bytes differ`);
} else if (got !== undefined) fail('a rank other than the root got the gather');

// Fresh arrays at the root.
const fresh = await c.gather(bytesOf(c.rank, lengthOf(c.rank)), 0);
if (c.rank === 0) for (let r = 0; r < c.size; r++) if (!bytesOf(r, lengths[r]).every((v, k) => fresh[r][k] === v)) fail(`gather: rank ${r}'s bytes differ`);

// allreduce in place: the result over the rank's own array, which is returned; int64 sum past 2^53, max, f64 sum.
const sums = BigInt64Array.of(2n ** 60n + BigInt(c.rank), -BigInt(c.rank), 1n);
const s = await c.allreduce(sums, 'sum', true);
const R = BigInt(c.size), tri = (R * (R - 1n)) / 2n;
if (s !== sums || s[0] !== R * 2n ** 60n + tri || s[1] !== -tri || s[2] !== R) fail(`int64 sum in place: ${Array.from(s)}`);
const max = BigInt64Array.of(BigInt(c.rank), -BigInt(c.rank));
if ((await c.allreduce(max, 'max', true))[0] !== R - 1n || max[1] !== 0n) fail(`int64 max in place: ${Array.from(max)}`);
const f = Float64Array.of(c.rank + 0.5);
const fs = await c.allreduce(f, 'sum', true);
if (fs !== f || f[0] !== c.size * c.size / 2) fail(`f64 sum in place: ${f[0]}`);
const copy = BigInt64Array.of(1n);
if ((await c.allreduce(copy, 'sum')) === copy || copy[0] !== 1n) fail('allreduce without inPlace touched its input');

c.finalize();
if (c.rank === 0) process.stdout.write('ok\n');
