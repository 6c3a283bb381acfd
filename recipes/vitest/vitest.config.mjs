// Vitest: one Stratus for the whole run (global setup), reset before each test (setup file).
// Run: NODE_EXTRA_CA_CERTS="$(npx stratus ca)" npx vitest run
import { defineConfig } from 'vitest/config';

export default defineConfig({
  test: {
    globalSetup: ['./global-setup.mjs'],
    setupFiles: ['./reset.mjs'],
    include: ['*.test.mjs'],
  },
});
