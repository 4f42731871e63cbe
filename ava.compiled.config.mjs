// The ava configuration `npm test` runs with (scripts/test.ts): the test files compiled by scripts/lib/compile-tests.mjs
// into the run's own directory (TEST_COMPILED_DIR, relative to this file), plain JavaScript with source maps. The
// `ava` section of package.json stays the configuration of a plain `npx ava test/...` through tsx.
export default {
  files: [`${process.env.TEST_COMPILED_DIR ?? 'test-build'}/**/*.test.mjs`],
  nodeArguments: ['--enable-source-maps'],
  workerThreads: false,
  timeout: '120s',
  concurrency: 2,
};
