// How a test starts one of the project's entry scripts as a child process. Under `npm test`, scripts/test.ts has
// compiled each one once into a bundle (TEST_BUNDLE_DIR, scripts/lib/test-bundles.ts): the child runs that, the same
// sources without tsx's per-module hooks (about 0.6 CPU-s less per start). Anywhere else (ava run directly, another
// working directory such as a scratch copy of the repository) it is `node --import tsx <script>`, as `npm start` and
// `npm run admin` run. Tests of the start itself (start-problems, first-start-terminal, env-file, the README's
// `npm run --silent admin` samples) spawn tsx directly, so that path stays under test.
import { existsSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { BUNDLED_ENTRIES, type BundledEntry } from '../../scripts/lib/test-bundles.js';

/** Node's arguments (before the script's own) that run `script`, relative to the repository, from `cwd`. */
export function entryArguments(script: BundledEntry, cwd?: string): string[] {
  const bundles = process.env.TEST_BUNDLE_DIR;
  const inRepository = cwd === undefined || resolve(cwd) === process.cwd();
  if (bundles && inRepository) {
    const bundle = join(bundles, BUNDLED_ENTRIES[script]);
    if (!existsSync(bundle)) throw new Error(`TEST_BUNDLE_DIR has no ${BUNDLED_ENTRIES[script]}: run the tests with \`npm test\``);
    return [bundle];
  }
  return ['--import', 'tsx', script];
}
