// Several GPUs of one process (`vlc compress --gpu 0,1`): the sharded engine's per-iteration
// combine done between the devices instead of through the host. Each GPU runs its pass; GPU 0
// copies the others' sums (S, m×d; W, sse, far, count) over the peer link, adds them (update.cu
// add_partials: integers, so exactly the sums the host's combine makes) and every other GPU copies
// the totals back; then each GPU moves its anchors. The host receives the changed counts and the
// energy: no m×d array crosses it, which on two GPUs costs more than the pass saves.
import type { DeviceGroup, Engine, IterParams, IterStats } from '../types.js';
import { EngineBuffers } from './buffers.js';
import type { Handle } from './driver.js';
import { CudaEngine } from './engine.js';
import { KERNELS, launch } from './kernels.js';
import type { DeviceBuffer } from './pool.js';
import { log } from '../../log.js';

const SUMS = ['S', 'W', 'sse', 'far', 'count'] as const;
type Sums = Record<(typeof SUMS)[number], DeviceBuffer>;

/** A DeviceGroup when every member is a CUDA engine on a GPU of its own; else undefined (the host combines). */
export function peerGroup(members: Engine[]): DeviceGroup | undefined {
  if (members.length < 2 || !members.every((e) => e instanceof CudaEngine)) return undefined;
  const engines = members as CudaEngine[];
  if (new Set(engines.map((e) => e.sums.ctx.info.index)).size !== engines.length) return undefined;
  try {
    return new PeerGroup(engines);
  } catch (e) {
    log().debug(`the GPUs combine through the host: ${(e as Error).message}`);
    return undefined;
  }
}

class PeerGroup implements DeviceGroup {
  /** On GPU 0: one other GPU's sums at a time. */
  private readonly scratch: EngineBuffers;
  private readonly incoming: Sums;
  /** GPU 0's event after the adds; each other GPU's after its copy of the totals. */
  private readonly added: Handle;
  private readonly copied: Handle[];

  constructor(private readonly engines: CudaEngine[]) {
    const { ctx, bufs } = engines[0].sums;
    this.scratch = new EngineBuffers(ctx);
    try {
      this.incoming = Object.fromEntries(SUMS.map((k) => [k, this.scratch.alloc(`sums from another GPU (${k})`, bufs[k].bytes)])) as Sums;
    } catch (e) {
      this.scratch.freeAll();
      throw e;
    }
    this.added = ctx.event();
    this.copied = engines.slice(1).map((e) => e.sums.ctx.event());
  }

  async iterate(p: IterParams): Promise<IterStats> {
    const changed = await Promise.all(this.engines.map((e) => e.passOnDevice(p)));
    this.combine();
    const energy = this.engines.map((e, k) => e.updateCombined(p, k === 0))[0];
    return { energy, changed: changed.reduce((a, b) => a + b, 0), ms: 0 };
  }

  /** Queue the adds on GPU 0 and the copies back; nothing waits on the host. */
  private combine(): void {
    const [first, ...rest] = this.engines;
    const { ctx, bufs } = first.sums;
    const { m, d } = first;
    const into = this.incoming;
    for (const other of rest) {
      const o = other.sums;
      for (const k of SUMS) ctx.copyFromPeer(into[k], o.ctx, o.bufs[k], o.bufs[k].bytes);
      launch(ctx, 'add_partials', 'f32', Math.ceil(Math.max(m * d, m) / KERNELS.add_partials.threads), {
        S: bufs.S.ptr, W: bufs.W.ptr, sse: bufs.sse.ptr, far: bufs.far.ptr, count: bufs.count.ptr,
        S2: into.S.ptr, W2: into.W.ptr, sse2: into.sse.ptr, far2: into.far.ptr, count2: into.count.ptr, m, d,
      });
    }
    ctx.record(this.added);
    rest.forEach((other, r) => {
      const o = other.sums;
      o.ctx.streamWait(o.ctx.stream, this.added);
      for (const k of SUMS) o.ctx.copyFromPeer(o.bufs[k], ctx, bufs[k], bufs[k].bytes);
      o.ctx.record(this.copied[r]);
      ctx.streamWait(ctx.stream, this.copied[r]); // GPU 0's next pass clears the sums this copy reads
    });
  }

  async dispose(): Promise<void> {
    const first = this.engines[0].sums.ctx;
    first.makeCurrent();
    const failed = this.scratch.freeAll(); // waits for the copies in flight
    first.destroyEvent(this.added);
    this.engines.slice(1).forEach((e, r) => e.sums.ctx.destroyEvent(this.copied[r]));
    if (failed) throw failed;
  }
}
