// The whole run's temporary files in one fresh directory, removed when the run ends: tests and the
// vlc processes they start make their scratch directories under os.tmpdir(), which TMPDIR names
// (inherited by the test workers and every child process), so a run leaves nothing in the system's
// temp directory, whatever a test forgets to remove.
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';

export default function setup(): () => void {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'vlc-test-run-'));
  const before = process.env.TMPDIR;
  process.env.TMPDIR = dir;
  return () => {
    fs.rmSync(dir, { recursive: true, force: true });
    if (before === undefined) delete process.env.TMPDIR;
    else process.env.TMPDIR = before;
  };
}
