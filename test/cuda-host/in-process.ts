// The real CLI entry run inside the test process (so a fake CUDA driver can be injected), with
// stdout and stderr captured instead of printed.
import { vi } from 'vitest';
import { main } from '../../dist/cli.js';

export async function runVlc(...args: string[]): Promise<{ code: number; out: string; err: string }> {
  let out = '';
  let err = '';
  vi.spyOn(process.stdout, 'write').mockImplementation((c: string | Uint8Array) => ((out += String(c)), true));
  vi.spyOn(process.stderr, 'write').mockImplementation((c: string | Uint8Array) => ((err += String(c)), true));
  const code = await main(['node', 'vlc', ...args]);
  vi.restoreAllMocks();
  return { code, out, err };
}
