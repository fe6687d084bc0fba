// Logs go to stderr (fd 2, synchronous) so stdout carries only data or the requested JSON.
import { pino, type Logger } from 'pino';

export type Verbosity = 'quiet' | 'normal' | 'verbose';

let current: Logger = make('normal');

function make(v: Verbosity): Logger {
  const level = v === 'quiet' ? 'error' : v === 'verbose' ? 'debug' : 'info';
  return pino(
    {
      level,
      base: undefined,
      timestamp: false,
      formatters: { level: (label) => ({ level: label }) },
    },
    pino.destination({ fd: 2, sync: true }),
  );
}

export function setVerbosity(v: Verbosity): void {
  current = make(v);
}

/** The process-wide logger (stderr). */
export function log(): Logger {
  return current;
}
