// The wasm lookup tables (search/pq-tables.ts, wasm/kernel.c pq_tables) are bit for bit the JS
// loop's: each entry summed in f64 in ascending dimension order and rounded once to f32.
import { describe, expect, it } from 'vitest';
import { JsPqTables, pqTables } from '../../dist/search/pq-tables.js';
import { subspaceBounds } from '../../dist/codecs/pq.js';
import { rng } from '../rng.js';

describe('pq lookup tables', () => {
  for (const [d, M, K] of [[128, 28, 256], [13, 5, 16], [7, 7, 256], [40, 3, 16]] as const) {
    it(`wasm equals JS exactly (d = ${d}, M = ${M}, K = ${K})`, () => {
      const rand = rng(d * 100 + M);
      const bounds = subspaceBounds(d, M);
      // Values of mixed scale and sign, zeros among them: any difference of order or rounding shows.
      const value = () => (rand() < 0.05 ? 0 : (rand() * 2 - 1) * 10 ** Math.floor(rand() * 6 - 3));
      const pq = { M, K, bounds, codebooks: Float32Array.from({ length: K * d }, value), codes: new Uint8Array(0), extra: new Float32Array(0), scale: new Float32Array(0) };
      const wasm = pqTables(pq);
      const js = new JsPqTables(pq);
      expect(wasm).not.toBeInstanceOf(JsPqTables);
      for (let r = 0; r < 50; r++) {
        const query = Float32Array.from({ length: d }, value);
        const a = Array.from(wasm.build(query));
        const b = Array.from(js.build(query));
        expect(a.map((v) => Object.is(v, -0) ? '-0' : v)).toEqual(b.map((v) => Object.is(v, -0) ? '-0' : v));
      }
    });
  }
});
