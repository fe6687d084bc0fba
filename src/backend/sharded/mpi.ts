// A Comm (comm.ts) over Open MPI, for `mpirun -n R vlc compress ...`: one rank per process, the
// collectives of comm.ts mapped onto MPI_Allreduce, MPI_Bcast and MPI_Gatherv of MPI_COMM_WORLD.
// Bound through koffi like the CUDA driver (cuda/driver.ts): no compiled addon, no mpicc.
//
// Open MPI's handles (MPI_COMM_WORLD, MPI_INT64_T, MPI_SUM, ...) are not integers but the
// addresses of exported globals (ompi_mpi_comm_world, ...), so the library is opened with libc's
// dlopen(RTLD_NOW | RTLD_GLOBAL) — RTLD_GLOBAL is also what Open MPI's plugins need to find its
// symbols — and each handle is dlsym's answer. The calls block the JS thread until every rank has
// joined: that is what a collective means, and the engine has nothing else to do meanwhile (the
// CPU workers have finished their pass before a sum is combined).
import { createRequire } from 'node:module';
import { EXIT, VlcError } from '../../errors.js';
import { escapeLine } from '../../io/names.js';
import { placeInto, type Comm, type Reducible } from './comm.js';

/** Open MPI 4's library (Debian: libopenmpi3, pulled in by openmpi-bin and libopenmpi-dev); VLC_MPI_LIB overrides it (tests name a missing one). */
const LIBRARY = () => process.env.VLC_MPI_LIB || 'libmpi.so.40';
/** What to install when it is missing. */
export const MPI_PACKAGES = 'openmpi-bin and libopenmpi-dev';

const RTLD_NOW = 2;
/** Open MPI's MPI_IN_PLACE: ((void *) 1). */
const MPI_IN_PLACE = 1;
const RTLD_GLOBAL = 0x100;
/** MPI counts and displacements are C ints: no single call moves more elements than this. */
const MAX_COUNT = 2 ** 31 - 1;
/** MPI_MAX_ERROR_STRING of Open MPI. */
const ERROR_STRING_BYTES = 256;
/** The tag of gather()'s messages (every rank calls the collectives in the same order, so one tag suffices: MPI keeps a pair's messages in order). */
const GATHER_TAG = 7;
/** How often a rank waiting in barrier() asks whether the others have arrived: short beside what it waits for. */
const BARRIER_POLL_MS = 2;

/** The MPI library is absent or unusable (the command turns this into exit 2 naming the packages). */
export class MpiUnavailableError extends Error {}

type Ptr = unknown; // an opaque koffi pointer (a handle's address)
type Fn = (...args: unknown[]) => number;

interface Mpi {
  call: Record<string, Fn>;
  world: Ptr;
  types: { int64: Ptr; double: Ptr; byte: Ptr };
  ops: { sum: Ptr; max: Ptr };
  /** MPI_ERRORS_RETURN: failures come back as codes instead of ending the process in the library. */
  errorsReturn: Ptr;
}

const PROTOTYPES = {
  MPI_Init: 'int MPI_Init(void *argc, void *argv)',
  MPI_Finalize: 'int MPI_Finalize()',
  MPI_Comm_rank: 'int MPI_Comm_rank(void *comm, _Out_ int *rank)',
  MPI_Comm_size: 'int MPI_Comm_size(void *comm, _Out_ int *size)',
  MPI_Comm_set_errhandler: 'int MPI_Comm_set_errhandler(void *comm, void *handler)',
  MPI_Allreduce: 'int MPI_Allreduce(const void *send, void *recv, int count, void *type, void *op, void *comm)',
  MPI_Allreduce_in_place: 'int MPI_Allreduce(intptr_t send, void *recv, int count, void *type, void *op, void *comm)',
  MPI_Bcast: 'int MPI_Bcast(void *buf, int count, void *type, int root, void *comm)',
  MPI_Allgather: 'int MPI_Allgather(const void *send, int sendCount, void *sendType, void *recv, int recvCount, void *recvType, void *comm)',
  MPI_Send: 'int MPI_Send(const void *buf, int count, void *type, int dest, int tag, void *comm)',
  MPI_Recv: 'int MPI_Recv(void *buf, int count, void *type, int source, int tag, void *comm, void *status)',
  MPI_Ibarrier: 'int MPI_Ibarrier(void *comm, _Out_ void **request)',
  MPI_Test: 'int MPI_Test(_Inout_ void **request, _Out_ int *flag, void *status)',
  MPI_Abort: 'int MPI_Abort(void *comm, int code)',
  MPI_Error_string: 'int MPI_Error_string(int code, _Out_ uint8_t *text, _Out_ int *len)',
} as const;

function load(): Mpi {
  let koffi: typeof import('koffi');
  try {
    koffi = createRequire(import.meta.url)('koffi');
  } catch (e) {
    throw new MpiUnavailableError(`the FFI module koffi could not be loaded (${(e as Error).message})`);
  }
  const libc = koffi.load('libc.so.6');
  const dlopen = libc.func('void *dlopen(const char *file, int mode)');
  const dlsym = libc.func('void *dlsym(void *handle, const char *name)');
  const library = LIBRARY();
  const handle = dlopen(library, RTLD_NOW | RTLD_GLOBAL);
  if (!handle) throw new MpiUnavailableError(`Open MPI's library ${library} is not installed (install ${MPI_PACKAGES})`);
  const lib = koffi.load(library); // the same, already global, library: koffi binds its functions
  const symbol = (name: string): Ptr => {
    const p = dlsym(handle, name);
    if (!p) throw new MpiUnavailableError(`${library} lacks ${name}: vlc needs Open MPI (install ${MPI_PACKAGES})`);
    return p;
  };
  const call: Record<string, Fn> = {};
  for (const [name, proto] of Object.entries(PROTOTYPES)) call[name] = lib.func(proto) as Fn;
  return {
    call,
    world: symbol('ompi_mpi_comm_world'),
    types: { int64: symbol('ompi_mpi_int64_t'), double: symbol('ompi_mpi_double'), byte: symbol('ompi_mpi_byte') },
    ops: { sum: symbol('ompi_mpi_op_sum'), max: symbol('ompi_mpi_op_max') },
    errorsReturn: symbol('ompi_mpi_errors_return'),
  };
}

/** True when this process was started by mpirun (Open MPI sets these in every rank's environment). */
export function launchedByMpirun(env: NodeJS.ProcessEnv = process.env): boolean {
  return env.OMPI_COMM_WORLD_SIZE !== undefined || env.PMIX_RANK !== undefined;
}

/**
 * This process's rank among the ranks on its machine, as the launcher tells it (Open MPI, MPICH,
 * Slurm); undefined when none says. It picks the GPU of a rank (api/compress-mpi.ts rankGpu).
 */
export function localRankOf(env: NodeJS.ProcessEnv = process.env): number | undefined {
  for (const name of ['OMPI_COMM_WORLD_LOCAL_RANK', 'MPI_LOCALRANKID', 'PMI_LOCAL_RANK', 'SLURM_LOCALID']) {
    const v = env[name];
    if (v !== undefined && /^\d+$/.test(v)) return Number(v);
  }
  return undefined;
}

/** How many ranks run on this process's machine, as Open MPI tells it; undefined when it does not. */
export function localSizeOf(env: NodeJS.ProcessEnv = process.env): number | undefined {
  const v = env.OMPI_COMM_WORLD_LOCAL_SIZE;
  return v !== undefined && /^\d+$/.test(v) ? Number(v) : undefined;
}

let opened: MpiComm | undefined;

/** MPI_COMM_WORLD as a Comm; MPI_Init on the first call. Throws MpiUnavailableError without Open MPI. */
export function worldComm(): MpiComm {
  if (opened) return opened;
  const mpi = load();
  const check = checker(mpi);
  check(mpi.call.MPI_Init(null, null), 'MPI_Init');
  check(mpi.call.MPI_Comm_set_errhandler(mpi.world, mpi.errorsReturn), 'MPI_Comm_set_errhandler');
  const rank = [0], size = [0];
  check(mpi.call.MPI_Comm_rank(mpi.world, rank), 'MPI_Comm_rank');
  check(mpi.call.MPI_Comm_size(mpi.world, size), 'MPI_Comm_size');
  return (opened = new MpiComm(mpi, check, rank[0], size[0]));
}

/** One check of every MPI status: a failure names the call and the library's own text for its code. */
function checker(mpi: Mpi): (status: number, what: string) => void {
  return (status, what) => {
    if (status === 0) return;
    const text = new Uint8Array(ERROR_STRING_BYTES), len = [0];
    const ok = mpi.call.MPI_Error_string(status, text, len) === 0;
    const why = ok ? new TextDecoder().decode(text.subarray(0, len[0])) : `error ${status}`;
    throw new Error(`${what} failed: ${why}`);
  };
}

export class MpiComm implements Comm {
  private finalized = false;

  constructor(private readonly mpi: Mpi, private readonly check: (status: number, what: string) => void, readonly rank: number, readonly size: number) {}

  async allreduce<T extends Reducible>(data: T, op: 'sum' | 'max', inPlace = false): Promise<T> {
    if (data instanceof Float64Array && op === 'sum') {
      const sum = await this.sumInRankOrder(data);
      return (inPlace ? (data.set(sum), data) : sum) as T;
    }
    const out = inPlace ? data : new (data.constructor as new (n: number) => T)(data.length);
    const type = data instanceof BigInt64Array ? this.mpi.types.int64 : this.mpi.types.double;
    for (let at = 0; at < data.length; at += MAX_COUNT) {
      const count = Math.min(MAX_COUNT, data.length - at);
      const recv = out.subarray(at, at + count);
      // In place: MPI_IN_PLACE as the send buffer, the result over the data (Open MPI's MPI_IN_PLACE is the address 1).
      const status = inPlace
        ? this.mpi.call.MPI_Allreduce_in_place(MPI_IN_PLACE, recv, count, type, this.mpi.ops[op], this.mpi.world)
        : this.mpi.call.MPI_Allreduce(data.subarray(at, at + count), recv, count, type, this.mpi.ops[op], this.mpi.world);
      this.check(status, 'MPI_Allreduce');
    }
    return out;
  }

  /** comm.ts asks for f64 sums in rank order (MPI's reduction order is its own): gathered, summed at rank 0, sent back. */
  private async sumInRankOrder(data: Float64Array): Promise<Float64Array> {
    const all = await this.gather(asBytes(data), 0);
    let sum: Float64Array | undefined;
    if (all) {
      sum = new Float64Array(data.length);
      for (const b of all) {
        const x = new Float64Array(b.buffer.slice(b.byteOffset, b.byteOffset + b.byteLength));
        for (let k = 0; k < sum.length; k++) sum[k] += x[k];
      }
    }
    const got = await this.broadcast(sum && asBytes(sum), 0);
    return new Float64Array(got.buffer, got.byteOffset, got.byteLength / 8);
  }

  async broadcast(data: Uint8Array | undefined, root: number): Promise<Uint8Array> {
    const length = Float64Array.of(this.rank === root ? data!.byteLength : 0);
    this.check(this.mpi.call.MPI_Bcast(length, 1, this.mpi.types.double, root, this.mpi.world), 'MPI_Bcast');
    const buf = this.rank === root ? data! : new Uint8Array(length[0]);
    for (let at = 0; at < buf.byteLength; at += MAX_COUNT) {
      const count = Math.min(MAX_COUNT, buf.byteLength - at);
      this.check(this.mpi.call.MPI_Bcast(buf.subarray(at, at + count), count, this.mpi.types.byte, root, this.mpi.world), 'MPI_Bcast');
    }
    return buf;
  }

  /**
   * Every rank's byte count first (MPI_Allgather), then each rank's bytes sent to the root
   * (MPI_Send / MPI_Recv, in pieces of at most MAX_COUNT bytes: counts are C ints) and received
   * where they go — `into`, or one fresh array per rank — in rank order. Not MPI_Gatherv: its one
   * receive buffer would be copied out again, a fresh one each round (a 1.28 GB gather of codes
   * touched every byte three times at the root); one rank's bytes arriving whole need neither.
   */
  async gather(data: Uint8Array, root: number, into?: Uint8Array[]): Promise<Uint8Array[] | undefined> {
    const lengths = new Float64Array(this.size);
    this.check(this.mpi.call.MPI_Allgather(Float64Array.of(data.byteLength), 1, this.mpi.types.double, lengths, 1, this.mpi.types.double, this.mpi.world), 'MPI_Allgather');
    if (this.rank !== root) {
      for (let at = 0; at < data.byteLength; at += MAX_COUNT) {
        const count = Math.min(MAX_COUNT, data.byteLength - at);
        this.check(this.mpi.call.MPI_Send(data.subarray(at, at + count), count, this.mpi.types.byte, root, GATHER_TAG, this.mpi.world), 'MPI_Send');
      }
      return undefined;
    }
    const out = into ?? [...lengths].map((n, r) => (r === root ? data : new Uint8Array(n)));
    for (let r = 0; r < this.size; r++) {
      if (r === root) {
        placeInto(out[r], data, r);
        continue;
      }
      // A short destination fails here, before anything is received: the job then ends (Comm.abort).
      if (out[r]?.byteLength !== lengths[r]) throw new Error(`gather: rank ${r} sends ${lengths[r]} bytes, the root has room for ${out[r]?.byteLength ?? 0}`);
      for (let at = 0; at < lengths[r]; at += MAX_COUNT) {
        const count = Math.min(MAX_COUNT, lengths[r] - at);
        this.check(this.mpi.call.MPI_Recv(out[r].subarray(at, at + count), count, this.mpi.types.byte, r, GATHER_TAG, this.mpi.world, null), 'MPI_Recv');
      }
    }
    return out;
  }

  /**
   * MPI_Ibarrier, then MPI_Test every BARRIER_POLL_MS with the thread asleep in between: a blocking
   * MPI call polls at full speed (Open MPI's progress loop), taking the core of a rank that works.
   */
  async barrier(): Promise<void> {
    const request: Ptr[] = [null];
    this.check(this.mpi.call.MPI_Ibarrier(this.mpi.world, request), 'MPI_Ibarrier');
    const flag = [0];
    for (;;) {
      this.check(this.mpi.call.MPI_Test(request, flag, null), 'MPI_Test');
      if (flag[0]) return;
      await new Promise((resolve) => setTimeout(resolve, BARRIER_POLL_MS));
    }
  }

  /**
   * A failure on this rank: the others may be waiting in a collective that will never come, so the
   * reason is reported here (one line, naming the rank) and MPI_Abort ends every rank; mpirun
   * then exits with `code`. Never returns.
   */
  abort(reason: Error, code = reason instanceof VlcError ? reason.exitCode : EXIT.failure): never {
    const who = this.rank === 0 ? '' : `rank ${this.rank}: `;
    process.stderr.write(`vlc: ${who}${escapeLine(reason.message)}\n`);
    this.mpi.call.MPI_Abort(this.mpi.world, code);
    process.exit(code); // not reached: MPI_Abort ends the process
  }

  /** MPI_Finalize, once: every rank calls it before it exits normally. */
  finalize(): void {
    if (this.finalized) return;
    this.finalized = true;
    this.check(this.mpi.call.MPI_Finalize(), 'MPI_Finalize');
  }
}

function asBytes(a: ArrayBufferView): Uint8Array {
  return new Uint8Array(a.buffer, a.byteOffset, a.byteLength);
}
