// What every part of one CUDA engine shares (seeding.ts, pass.ts, nearest.ts, engine.ts): the
// context, the data's shape, the buffers, the vectors' spans, the whole data's figures, the
// events, and the two primitives of the engine's host code: launch a kernel, wait for the stream.
import type { GlobalFigures } from '../types.js';
import type { CudaContext } from './context.js';
import { EngineBuffers } from './buffers.js';
import type { HostRows } from './host-rows.js';
import { launch, type KernelArgs, type KernelName, type LaunchShape } from './kernels.js';
import type { VectorSpans } from './spans.js';

export class EngineCore {
  readonly n: number;
  readonly d: number;
  readonly dtype: 'f32' | 'f16';
  readonly bufs: EngineBuffers;
  /** Set once the memory plan is known (engine.ts init). */
  spans!: VectorSpans;
  /** The whole data's figures; a single engine's own until setGlobal. */
  global: GlobalFigures;
  /** Events of a pass: start, assign start/end (per tile), end; `end` also serves sync(). */
  readonly ev: { start: bigint; a0: bigint; a1: bigint; end: bigint };

  constructor(
    readonly ctx: CudaContext,
    /** The engine's rows on the host (host-rows.ts): the source of uploads, row() and the screen's mean. */
    readonly rows: HostRows,
    readonly m: number,
  ) {
    this.n = rows.n;
    this.d = rows.d;
    this.dtype = rows.dtype;
    this.bufs = new EngineBuffers(ctx);
    this.global = { n: rows.n, maxAbs: 0, rowOffset: 0 };
    this.ev = { start: ctx.event(), a0: ctx.event(), a1: ctx.event(), end: ctx.event() };
  }

  /** While set, every launch is timed (Engine.timeKernels: measurements only). */
  timer: KernelTimer | undefined;

  /** Launch kernel k (its build for the data's dtype) on `grid` blocks. */
  run<K extends KernelName>(k: K, grid: number, args: KernelArgs<K>, shape?: LaunchShape): void {
    if (this.timer) this.timer.around(k, () => launch(this.ctx, k, this.dtype, grid, args, shape));
    else launch(this.ctx, k, this.dtype, grid, args, shape);
  }

  /** Wait until everything queued on the stream is done (polling: Ctrl-C is seen). */
  async sync(): Promise<void> {
    this.ctx.record(this.ev.end);
    await this.ctx.wait(this.ev.end);
  }

  destroyEvents(): void {
    for (const e of Object.values(this.ev)) this.ctx.destroyEvent(e);
  }
}

/** GPU milliseconds per kernel, from events recorded around each launch (bench/speed-vs-peers.mjs). */
export class KernelTimer {
  private marks: { k: string; a: bigint; b: bigint }[] = [];
  private spare: bigint[] = [];
  readonly totals = new Map<string, { ms: number; launches: number }>();

  constructor(private readonly ctx: CudaContext) {}

  around(k: string, launchIt: () => void): void {
    const a = this.spare.pop() ?? this.ctx.event();
    const b = this.spare.pop() ?? this.ctx.event();
    this.ctx.record(a);
    launchIt();
    this.ctx.record(b);
    this.marks.push({ k, a, b });
  }

  /** After the stream's work is done: add the recorded launches to the totals, keep the events for reuse. */
  collect(): void {
    for (const { k, a, b } of this.marks) {
      const t = this.totals.get(k) ?? { ms: 0, launches: 0 };
      t.ms += this.ctx.elapsedMs(a, b);
      t.launches++;
      this.totals.set(k, t);
      this.spare.push(a, b);
    }
    this.marks = [];
  }
}
