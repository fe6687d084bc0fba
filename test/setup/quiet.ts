// Every test file: vlc's log lines ("vlc: ..."), which the library writes to fd 2 as a user would
// see them, are kept off the test output. Tests that check what vlc says run the CLI in a child
// process and read its stderr; in-process calls only leave noise. VLC_TEST_LOGS=1 shows them.
import fs from 'node:fs'; // the module object itself: a namespace's bindings cannot be assigned
import { syncBuiltinESMExports } from 'node:module';

if (process.env.VLC_TEST_LOGS !== '1') {
  const write = fs.writeSync;
  const quiet = ((fd: number, data: unknown, ...rest: unknown[]) => {
    if (fd === 2 && typeof data === 'string' && data.startsWith('vlc: ')) return Buffer.byteLength(data);
    return (write as (...a: unknown[]) => number)(fd, data, ...rest);
  }) as typeof fs.writeSync;
  fs.writeSync = quiet;
  syncBuiltinESMExports(); // `import * as fs` namespaces (dist/log.js) see the wrapper too
}
