// How a test starts one of the project's entry scripts as a child process. Under `npm test`, scripts/test.ts has
// compiled them once, by `npm run build`'s own function (scripts/build.mjs), into the run's directory
// (TEST_BUNDLE_DIR): the child runs that bundle as `npm start` and `npm run admin` run dist/, with
// `--enable-source-maps`. Anywhere else (ava run directly, another working directory such as a scratch copy of the
// repository) it is `node --import tsx <script>`, the sources as a developer runs them.
import { existsSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { ENTRIES, type Entry } from '../../scripts/build.mjs';

/** Node's arguments (before the script's own) that run `script`, relative to the repository, from `cwd`. */
export function entryArguments(script: Entry, cwd?: string): string[] {
  const bundles = process.env.TEST_BUNDLE_DIR;
  const inRepository = cwd === undefined || resolve(cwd) === process.cwd();
  if (bundles && inRepository) {
    const bundle = join(bundles, ENTRIES[script]);
    if (!existsSync(bundle))
      throw new Error(`TEST_BUNDLE_DIR has no ${ENTRIES[script]}: run the tests with \`npm test\``);
    return ['--enable-source-maps', bundle];
  }
  return ['--import', 'tsx', script];
}
