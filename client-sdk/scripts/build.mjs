// `npm run build`: writes src/schema-types.ts (a named type per schema, scripts/generate-schema-types.mjs), then
// compiles src/ twice, so the package works from both module systems.
//   dist/esm/  ES modules, for `import` (tsconfig.json)
//   dist/cjs/  CommonJS, for `require()` (tsconfig.cjs.json), marked by its own package.json {"type":"commonjs"}
// Each with its declarations beside it, so TypeScript reads CommonJS types for a `require` and ES module types for
// an `import` (package.json `exports`). Plain JavaScript and tsc only: building the package needs no other tool.
import { execFileSync } from 'node:child_process';
import { mkdirSync, rmSync, writeFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { generateSchemaTypes } from './generate-schema-types.mjs';

const sdk = join(dirname(fileURLToPath(import.meta.url)), '..');
const tsc = createRequire(join(sdk, 'package.json')).resolve('typescript/bin/tsc');

generateSchemaTypes(); // a schema added to the spec gets its exported name in this build
rmSync(join(sdk, 'dist'), { recursive: true, force: true }); // no file of an earlier layout may ship
for (const project of ['tsconfig.json', 'tsconfig.cjs.json']) {
  execFileSync(process.execPath, [tsc, '-p', join(sdk, project)], { cwd: sdk, stdio: 'inherit' });
}
// The package itself is "type": "module"; without this marker Node would load dist/cjs/*.js as ES modules.
mkdirSync(join(sdk, 'dist', 'cjs'), { recursive: true });
writeFileSync(join(sdk, 'dist', 'cjs', 'package.json'), JSON.stringify({ type: 'commonjs' }) + '\n');
