// One fixed sequence of engine calls (k-means++ sums, tries and picks, rows fetched many at once, soft and Huber passes, a
// Lloyd pass, finalize, every statistic, the assignments, nearestOther) recorded as plain values:
// two engines that must agree (one engine and a sharded one) give equal records. Shared by the
// CPU suite (test/sharded/engine.test.ts) and the GPU suite (test/gpu/sharded.test.ts).
import type { Engine } from '../../src/backend/types.js';
import { storeBytesAllocated } from '../../dist/vectors/dataset.js';

export const plain = (a: ArrayLike<number>) => Array.from(a);

/** Everything an engine answers along a fixed script; two engines must give equal records. */
export async function script(e: Engine, m: number): Promise<unknown[]> {
  const rec: unknown[] = [];
  const rows = [5, 17, e.n - 1, 300, 3].map((i) => i % e.n);
  const c0 = await e.row(rows[0]);
  rec.push(plain(c0), await e.seedBegin(c0), e.seedUnit);
  const cands = new Float32Array(3 * e.d);
  for (let l = 0; l < 3; l++) cands.set(await e.row(rows[l + 1]), l * e.d);
  rec.push(plain(await e.seedTry(cands)));
  const total = await e.seedAdd(await e.row(rows[2]));
  rec.push(total);
  for (const f of [0, 0.1, 0.5, 0.77, 0.999999, 1, 2]) rec.push(await e.seedPick(f * total));
  // k-means++ in rounds: many picks against one D, then many candidates added in one pass.
  rec.push(plain(await e.seedPickMany(Float64Array.from([0.77, 0, 2, 0.1, 0.5, 0.5, 0.999999], (f) => f * total))));
  const many = new Float32Array(4 * e.d);
  for (let l = 0; l < 4; l++) many.set(await e.row(rows[(l + 3) % rows.length]), l * e.d);
  // rows(): the same as row() after row(), in the order asked (shards' rows interleaved), none included.
  const listed = [rows[2], rows[0], rows[4], rows[2], rows[1], rows[3]];
  const one = new Float32Array(listed.length * e.d);
  for (let k = 0; k < listed.length; k++) one.set(await e.row(listed[k]), k * e.d);
  const got = await e.rows(Int32Array.from(listed));
  const into = new Float32Array((listed.length + 2) * e.d).fill(-7);
  const back = await e.rows(listed, into.subarray(e.d, (listed.length + 1) * e.d)); // into a given array, none past it
  const intoOk = back.buffer === into.buffer && plain(back).join() === plain(one).join() && into[0] === -7 && into[into.length - 1] === -7;
  if (plain(got).join() !== plain(one).join() || !intoOk || (await e.rows([])).length !== 0) throw new Error('rows() is not row() after row()');
  rec.push(plain(got));
  const manyTotal = await e.seedAddMany(many);
  rec.push(manyTotal, plain(await e.seedPickMany(Float64Array.from([0.3, 0.9, 0.6], (f) => f * manyTotal))));
  const C = new Float32Array(m * e.d);
  for (let j = 0; j < m; j++) C.set(await e.row((j * 37) % e.n), j * e.d);
  await e.setAnchors(C);
  for (const p of [
    { temperature: 0.8, step: 0.5, huber: 1.5 },
    { temperature: 0.3, step: 0.7, huber: 1.0 },
    { temperature: 0, step: 1, huber: 0 },
  ]) {
    const s = await e.iterate(p);
    const st = await e.stats();
    rec.push(s.energy, s.changed, plain(await e.getAnchors()), plain(st.count), plain(st.sse), plain(st.far), plain(st.farDist));
  }
  const f = await e.finalize();
  rec.push(f.energy, f.changed, plain(await e.assignments()));
  const nn = await e.nearestOther();
  rec.push(plain(nn.idx), plain(nn.dist));
  // A subset (init's sample): rows 2, 5, 8, ... (a shard may hold none of them), seeded and passed.
  const rowsOf = Int32Array.from({ length: Math.ceil((e.n - 2) / 3) }, (_, k) => 2 + 3 * k);
  const sub = await e.subset(rowsOf);
  rec.push(sub.n, plain(await sub.row(1)), await sub.seedBegin(await sub.row(0)), await sub.seedAdd(await sub.row(7 % sub.n)));
  rec.push(await sub.seedPick(0.4 * (await sub.seedAdd(await sub.row(3 % sub.n)))));
  await sub.setAnchors(C);
  for (const p of [{ temperature: 0.3, step: 0.7, huber: 1.0 }, { temperature: 0, step: 1, huber: 0 }]) {
    const s = await sub.iterate(p);
    rec.push(s.energy, s.changed, plain(await sub.getAnchors()), plain((await sub.stats()).far));
  }
  await sub.dispose();
  rec.push((await e.iterate({ temperature: 0, step: 1, huber: 0 })).energy); // the engine itself unchanged
  return rec;
}


/** The script's record of an engine, and the bytes of vectors allocStore handed out while it was opened (a host copy). */
export async function recordOf(open: () => Promise<Engine>, m: number): Promise<{ rec: unknown[]; copied: number }> {
  const before = storeBytesAllocated();
  const e = await open();
  const copied = storeBytesAllocated() - before;
  try {
    return { rec: await script(e, m), copied };
  } finally {
    await e.dispose();
  }
}
