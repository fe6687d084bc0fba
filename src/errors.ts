// Every error that reaches the user goes through one of these classes; src/cli.ts turns them into
// one stderr line and an exit code. Anything else is a bug: exit 1 with its message (stack with -v).

/** Exit codes (README "Exit codes"). */
export const EXIT = { ok: 0, failure: 1, usage: 2, device: 3, interrupted: 130, terminated: 143 } as const;

export class VlcError extends Error {
  constructor(message: string, readonly exitCode: number = EXIT.failure) {
    super(message);
    this.name = new.target.name;
  }
}

/** A failure another process reports (an MPI rank > 0 when rank 0 prints why): exit with its code, print nothing. */
export class ReportedElsewhere extends VlcError {}

/** Bad command line or bad input file: exit 2. The message says what is wrong and how to fix it. */
export class UsageError extends VlcError {
  constructor(message: string) {
    super(message, EXIT.usage);
  }
}

/** The requested device cannot be used (no driver, no GPU, PTX too new...): exit 3. */
export class DeviceError extends VlcError {
  constructor(message: string) {
    super(message, EXIT.device);
  }
}

/** Ctrl-C (SIGINT) or SIGTERM: exit 130 or 143 after cleanup (src/cli.ts picks by the signal). */
export class InterruptedError extends VlcError {
  constructor() {
    super('interrupted', EXIT.interrupted);
  }
}
