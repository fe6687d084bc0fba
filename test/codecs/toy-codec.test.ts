// The codec seam: a codec defined here, in a test file, and registered through the library's
// registry alone (no other file of vlc knows it) compresses, reads back, decodes, reports and
// searches like the built-in ones. The toy stores each residual in f16, 2·d bytes a vector.
import * as fs from 'node:fs';
import * as path from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { codecFor, compress, openVlc, registerCodec, type Codec, type CodedResiduals, type ResidualSection } from '../../dist/index.js';
import { asRows, f16ToF32, f32ToF16, forEachF32Rows } from '../../dist/vectors/dataset.js';
import { asPayload } from '../../dist/io/vlc/payload.js';
import { rng } from '../rng.js';
import { tempDir } from '../cli/helpers.js';

class HalfResiduals implements CodedResiduals {
  readonly mode = 'toy-half';
  constructor(readonly n: number, readonly d: number, readonly half: Uint16Array) {}
  addTo(i: number, out: Float32Array, at = 0): void {
    for (let k = 0; k < this.d; k++) out[at + k] += f16ToF32(this.half[i * this.d + k]);
  }
  payload(): Uint8Array {
    return new Uint8Array(this.half.buffer, this.half.byteOffset, this.half.byteLength);
  }
}

const section: ResidualSection = {
  tag: 'RSTY',
  payloadBytes: (n, d) => 2 * n * d,
  read(payload, { n, d }, corrupt) {
    if (payload.length !== 2 * n * d) throw corrupt(`toy section has ${payload.length} bytes, expected ${2 * n * d}`);
    // A section comes as a Payload (any size, viewed piecewise); this small one is read as one view.
    return new HalfResiduals(n, d, new Uint16Array(asPayload(payload).bytes().slice().buffer));
  },
};

const toy: Codec = {
  mode: 'toy-half',
  title: 'f16 residuals (a test codec)',
  coded: true,
  help: 'toy-half (the residual in f16)',
  name: () => 'toy-half',
  jsonFields: () => ({}),
  plan: () => ({ mode: 'toy-half' }),
  candidates: () => [],
  payloadBytes: (_p, n, d) => 2 * n * d,
  storable: () => true,
  async encode(_p, input) {
    const { n, d, anchors, assign } = input;
    const half = new Uint16Array(n * d);
    let err = 0;
    // The rows a piece at a time, as every encoder reads them (any size, f32 or f16).
    forEachF32Rows(asRows(input.x, n, d), 0, n, (x, r0, r1) => {
      for (let i = r0; i < r1; i++)
        for (let k = 0; k < d; k++) {
          const v = x[(i - r0) * d + k], a = anchors[assign[i] * d + k];
          half[i * d + k] = f32ToF16(v - a);
          const e = v - Math.fround(a + f16ToF32(half[i * d + k]));
          err += e * e;
        }
    });
    return { residuals: new HalfResiduals(n, d, half), residualEnergy: err / n };
  },
  facts: (r) => ({ key: 'toy', json: { values: (r as HalfResiduals).half.length }, line: 'toy: f16 residuals' }),
  factsKey: 'toy',
};

describe('a codec registered from outside vlc', () => {
  registerCodec(toy, { section, since: 2 });
  const dir = tempDir('toy-codec');
  afterAll(() => fs.rmSync(dir, { recursive: true, force: true }));

  it('round-trips a .vlc through the registry alone', async () => {
    const n = 301, d = 7;
    const r = rng(11);
    const data = Float32Array.from({ length: n * d }, () => r() * 4 - 2);
    const output = path.join(dir, 'toy.vlc');
    const stats = await compress({ data, n, d }, { output, anchors: 5, device: 'cpu', iters: 10, residual: 'toy-half' });
    expect(stats.residual).toBe('toy-half');
    expect(stats.codec).toBe('toy-half');
    expect(stats.coded).toBe(true);
    const file = await openVlc(output);
    expect(file.manifest.residual).toBe('toy-half');
    expect(file.sections.map((s) => s.name)).toContain('residuals');
    // Every decoded value is its anchor plus the f16 of its residual: within f16's rounding of |r| <= 4.
    const rec = file.reconstruct();
    let worst = 0;
    for (let i = 0; i < n * d; i++) worst = Math.max(worst, Math.abs(rec[i] - data[i]));
    expect(worst).toBeGreaterThan(0);
    expect(worst).toBeLessThan(4 * 2 ** -10);
    // Its section is in the file under its own tag.
    const bytes = fs.readFileSync(output);
    expect(bytes.includes(Buffer.from('RSTY'))).toBe(true);
    // The fixed choice refuses --bytes, naming the codecs that take it.
    await expect(compress({ data, n, d }, { output: path.join(dir, 'b.vlc'), device: 'cpu', residual: 'toy-half', bytes: 30 })).rejects.toThrow(
      /--residual toy-half fixes the codec and --bytes chooses one \(or, with --residual pq, bits(, \w+)* or \w+, its size\)/,
    );
    expect(codecFor('toy-half')).toBe(toy);
  }, 60_000);

  it('refuses a second codec under a taken mode or section tag', () => {
    expect(() => registerCodec(toy, { section, since: 2 })).toThrow(/registered twice/);
    expect(() => registerCodec({ ...toy, mode: 'toy-2' }, { section, since: 2 })).toThrow(/section tag 'RSTY'/);
  });
});
