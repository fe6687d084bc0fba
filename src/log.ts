// Logs go to stderr (fd 2, synchronous) so stdout carries only data or the requested JSON.
// People read them, so each record is printed as one plain line ("vlc: message", warnings and
// debug lines tagged); VLC_LOG_JSON=1 keeps pino's JSON lines for log collectors.
import * as fs from 'node:fs';
import { pino, type Logger, type DestinationStream } from 'pino';

export type Verbosity = 'quiet' | 'normal' | 'verbose';

/** One pino record (a JSON line) → one human line on stderr. */
const plainStderr: DestinationStream = {
  write(line: string): void {
    let text = line;
    try {
      const { level, msg, ...rest } = JSON.parse(line) as Record<string, unknown>;
      const tag = level === 'warn' ? 'warning: ' : level === 'debug' ? '[debug] ' : '';
      const extra = Object.entries(rest).map(([k, v]) => ` ${k}=${typeof v === 'string' ? v : JSON.stringify(v)}`);
      text = `vlc: ${tag}${msg ?? ''}${extra.join('')}\n`;
    } catch {
      /* not JSON: print as is */
    }
    fs.writeSync(2, text);
  },
};

function make(v: Verbosity): Logger {
  const level = v === 'quiet' ? 'error' : v === 'verbose' ? 'debug' : 'info';
  const json = process.env.VLC_LOG_JSON === '1';
  return pino(
    {
      level,
      base: undefined,
      timestamp: false,
      formatters: { level: (label) => ({ level: label }) },
    },
    json ? pino.destination({ fd: 2, sync: true }) : plainStderr,
  );
}

let current: Logger = make('normal');

export function setVerbosity(v: Verbosity): void {
  current = make(v);
}

/** The process-wide logger (stderr). */
export function log(): Logger {
  return current;
}

/**
 * How long work reports how far it has come: a step (reading, training, encoding, writing,
 * searching...) with a count done of a total (bytes, or items such as 'vectors'). The CLI draws it
 * on a terminal (commands/progress.ts); elsewhere nothing is shown.
 */
export interface Reporter {
  /** Open a step; `total` may be unknown (a stream), and `unit` 'bytes' or a plural noun. */
  step(label: string, unit: string, total?: number): ReportStep;
}

export interface ReportStep {
  /** `label`: the step's new label (choosing the codec names the codec it measures). */
  update(done: number, total?: number, label?: string): void;
  end(): void;
}

/** Reports nothing (library use, pipes, tests). */
export const silentReporter: Reporter = { step: () => ({ update: () => {}, end: () => {} }) };
