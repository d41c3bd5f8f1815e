// Vitest for the example next to it only: the repository's own tests are node:test files
// (test/**/*.test.ts), which vitest must not collect.
import { defineConfig } from 'vitest/config';

export default defineConfig({
  test: {
    root: import.meta.dirname,
    include: ['*.vitest.js'],
    // One server per file, started in beforeAll: give a slow machine time.
    hookTimeout: 60_000,
    testTimeout: 30_000,
  },
});
