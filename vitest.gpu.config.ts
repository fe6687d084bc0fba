import { defineConfig } from 'vitest/config';

// GPU suite: run on the GPU machine (`npm run test:gpu`); every test skips visibly without a GPU.
export default defineConfig({
  test: {
    include: ['test/gpu/**/*.test.ts'],
    testTimeout: 300_000,
    hookTimeout: 300_000,
    pool: 'forks',
    // One temp directory per run, removed at its end; vlc's log lines kept off the output (test/setup/).
    globalSetup: ['test/setup/tmpdir.ts'],
    setupFiles: ['test/setup/quiet.ts'],
  },
});
