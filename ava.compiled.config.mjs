// The ava configuration `npm test` runs with (scripts/test.ts): the test files compiled by scripts/lib/compile-tests.mjs
// into the run's own directory (TEST_COMPILED_DIR, relative to this file), plain JavaScript with source maps. The
// `ava` section of package.json stays the configuration of a plain `npx ava test/...` through tsx.
import { readFileSync } from 'node:fs';
import { relative, resolve } from 'node:path';

const compiledDir = process.env.TEST_COMPILED_DIR ?? 'test-build';

// Longest first: the workers share the files, and a long file started last would run alone at the end of the run.
// test/durations.json holds each file's seconds in a whole run (`npm test -- --update-durations` refreshes it); a
// file it does not know yet counts as the median file.
const durations = JSON.parse(readFileSync(new URL('test/durations.json', import.meta.url), 'utf8'));
const known = Object.values(durations).sort((a, b) => a - b);
const median = known[Math.floor(known.length / 2)] ?? 0;
const sourceOf = (file) =>
  relative(resolve(compiledDir), file)
    .split('\\')
    .join('/')
    .replace(/\.mjs$/, '.ts');
const secondsOf = (file) => durations[sourceOf(file)] ?? median;

export default {
  files: [`${compiledDir}/**/*.test.mjs`],
  nodeArguments: ['--enable-source-maps'],
  workerThreads: false,
  timeout: '120s',
  // Four files at once on two cores: with two, the cores stood idle a sixth of the run (129 of 820 core-seconds,
  // measured from /proc/stat over a clean-clone run) while files waited on timers, crash recoveries and receivers;
  // with three, 29 core-seconds, and the run went from 410 to 353 s for the same CPU (decision 0052). Once the files
  // cost less CPU (decision 0055), three left 53 core-seconds idle in a 328 s run; four, 18 in 318 s. With the files
  // lighter again (decision 0057), four kept the cores busy 89 % of a 313 s run (556 CPU-s): five.
  concurrency: 5,
  sortTestFiles: (a, b) => secondsOf(b) - secondsOf(a) || a.localeCompare(b),
};
