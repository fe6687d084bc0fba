// The MPI Comm's gather and allreduce alone, under `mpirun -n 2 node .dev/mpi6-comm.mjs ROOT`
// (ROOT: a checkout whose dist/ to load: the base commit's or this branch's): a 16 MiB gather a
// rank into fresh arrays and into places the root gives (the branch; the base ignores `into`),
// and an allreduce of the engine's per-iteration sums at m = 16,384, d = 128 (16.4 MiB of int64)
// into a new array and in place (the base ignores `inPlace`). Medians of 7, wall and CPU at rank 0,
// each call after a barrier; one JSON line from rank 0.
const root = process.argv[2];
const { worldComm } = await import(`${root}/dist/backend/sharded/mpi.js`);
const c = worldComm();
const median = (a) => [...a].sort((x, y) => x - y)[a.length >> 1];
async function time(f) {
  const wall = [], cpu = [];
  for (let k = 0; k < 7; k++) {
    await c.barrier();
    const t = performance.now(), u = process.cpuUsage();
    await f();
    const cu = process.cpuUsage(u);
    wall.push(performance.now() - t);
    cpu.push((cu.user + cu.system) / 1000);
  }
  return { wall_ms: +median(wall).toFixed(1), cpu_ms: +median(cpu).toFixed(1) };
}
const bytes = 16 << 20;
const data = new Uint8Array(bytes).fill(c.rank + 1);
const places = [data, new Uint8Array(bytes)];
const n = 16384 * 128 + 3 * 16384 + 1;
const sums = new BigInt64Array(n).fill(1n);
const out = {
  gather_16MiB_fresh: await time(() => c.gather(data, 0)),
  gather_16MiB_into: await time(() => c.gather(data, 0, c.rank === 0 ? places : undefined)),
  allreduce_sums_new: await time(() => c.allreduce(sums, 'sum')),
  allreduce_sums_in_place: await time(() => c.allreduce(sums, 'sum', true)),
};
c.finalize();
if (c.rank === 0) console.log(JSON.stringify({ root, ...out }));
