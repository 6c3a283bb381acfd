// Jest: one Stratus for the whole run (global setup/teardown); tests read it from the environment.
// Run: NODE_EXTRA_CA_CERTS="$(npx stratus ca)" npx jest
module.exports = {
  testEnvironment: 'node',
  globalSetup: './global-setup.mjs',
  globalTeardown: './global-teardown.mjs',
  testMatch: ['**/*.test.cjs'],
};
