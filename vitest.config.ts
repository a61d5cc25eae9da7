import { defineConfig } from 'vitest/config';

export default defineConfig({
  test: {
    include: ['tests/**/*.test.ts'],
    globalSetup: ['tests/helpers/global_tmp.ts'],
    testTimeout: 120_000,
    hookTimeout: 120_000,
    // Two cores: model tests are CPU-bound, so run files in forks but not more than the machine has.
    pool: 'forks',
    maxWorkers: 2,
  },
});
