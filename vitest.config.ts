import { defineConfig } from 'vitest/config';

// CPU suite (CI). Tests import the compiled code from dist/ (`npm test` builds first), so worker
// threads and the .wasm kernel load exactly as they do for users.
export default defineConfig({
  test: {
    include: ['test/**/*.test.ts'],
    exclude: ['test/gpu/**'],
    testTimeout: 60_000,
    hookTimeout: 60_000,
    pool: 'forks',
    // One temp directory per run, removed at its end; vlc's log lines kept off the output (test/setup/).
    globalSetup: ['test/setup/tmpdir.ts'],
    setupFiles: ['test/setup/quiet.ts'],
  },
});
