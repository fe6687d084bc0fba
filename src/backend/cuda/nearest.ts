// Maintenance's nearest other anchor on the device (Engine.nearestOther, ../engine.ts): the anchors
// assigned against themselves by the direct assign kernel (X = C), so the passes' f32 distances
// and lowest-index ties, m²·d work on the GPU instead of the host's single thread; then one sync
// and four m-sized downloads. Always the f32 build: the anchors are f32 whatever the data.
import { nearestOtherFromTop2, noNearestAnchors } from '../nearest-other.js';
import type { NearestAnchors } from '../types.js';
import type { EngineCore } from './core.js';
import { KERNELS, launch } from './kernels.js';
import type { DeviceBuffer } from './pool.js';

export class DeviceNearest {
  /** The anchors' own top-2 (m-sized), allocated at the first call. */
  private top2?: { J1: DeviceBuffer; D1: DeviceBuffer; J2: DeviceBuffer; D2: DeviceBuffer };

  constructor(private readonly e: EngineCore) {}

  /** Its buffers, for tests that poison every output. */
  buffers(): DeviceBuffer[] {
    return Object.values(this.top2 ?? {});
  }

  async find(): Promise<NearestAnchors> {
    const { ctx, m, d, bufs } = this.e;
    const out = noNearestAnchors(m);
    if (m < 2) return out;
    this.top2 ??= {
      J1: bufs.alloc('anchor nearest', m * 4),
      D1: bufs.alloc('anchor nearest distance', m * 4),
      J2: bufs.alloc('anchor runner-up', m * 4),
      D2: bufs.alloc('anchor runner-up distance', m * 4),
    };
    const { J1, D1, J2, D2 } = this.top2;
    launch(ctx, 'assign_top2', 'f32', Math.ceil(m / KERNELS.assign_top2.points.value), {
      X: bufs.C.ptr, C: bufs.C.ptr, n: m, d, m, j1: J1.ptr, d1: D1.ptr, j2: J2.ptr, d2: D2.ptr,
    });
    await this.e.sync();
    const j1 = new Int32Array(m), d1 = new Float32Array(m), j2 = new Int32Array(m), d2 = new Float32Array(m);
    ctx.download(j1, J1);
    ctx.download(d1, D1);
    ctx.download(j2, J2);
    ctx.download(d2, D2);
    nearestOtherFromTop2(out, 0, m, { j1, d1, j2, d2 });
    return out;
  }
}
