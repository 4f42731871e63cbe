// `npm run mutate [-- <module>...]`: mutation testing (StrykerJS) of the modules in modules.ts, one at a time,
// each against its own tests. Not part of `npm test`: a module takes minutes. Writes an HTML and a JSON report per
// module to reports/mutation/ and prints a table of scores; exits non-zero when a module scores below the
// threshold (90 %). Concurrency 2 by default (MUTATE_CONCURRENCY to change it): the machine is often shared.
//
// The score is Stryker's: (killed + timed out) / (killed + timed out + survived + no coverage). Mutants that only
// change the text of a message are disabled where they are, with a `// Stryker disable next-line` comment that
// says so; nothing else is excluded.
import { mkdirSync, writeFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { dirname, join } from 'node:path';
import { pathToFileURL } from 'node:url';
import type { MutantResult, PartialStrykerOptions } from '@stryker-mutator/api/core';
import type { Stryker as StrykerClass } from '@stryker-mutator/core';
import { MUTATION_MODULES, mutateGlobs, testCommand, type MutationModule } from './modules.js';

export const THRESHOLD = 90;

// StrykerJS 10 declares Node >= 22 and its package entry refuses older versions (the guard sits in its CLI module,
// which the entry loads); this project runs on Node 20. The Stryker class itself runs on Node 20 (its mutants and
// test runs here are plain child processes), so the runner loads that module by path, past the CLI's guard.
const strykerEntry = createRequire(import.meta.url).resolve('@stryker-mutator/core/package.json');
const { Stryker } = (await import(pathToFileURL(join(dirname(strykerEntry), 'dist/src/stryker.js')).href)) as {
  Stryker: typeof StrykerClass;
};

const requested = process.argv.slice(2).filter((arg) => !arg.startsWith('-'));
const unknown = requested.filter((name) => !MUTATION_MODULES.some((m) => m.name === name));
if (unknown.length > 0) {
  console.error(
    `Unknown module ${unknown.join(', ')}; the modules are ${MUTATION_MODULES.map((m) => m.name).join(', ')}.`,
  );
  process.exit(2);
}
const modules = requested.length > 0 ? MUTATION_MODULES.filter((m) => requested.includes(m.name)) : MUTATION_MODULES;
const concurrency = Number(process.env.MUTATE_CONCURRENCY ?? 2);

interface Score {
  module: MutationModule;
  mutants: number;
  killed: number;
  survived: MutantResult[];
  score: number;
}

const scores: Score[] = [];
for (const module of modules) {
  console.log(`\n== ${module.name}: ${mutateGlobs(module).join(', ')} against ${module.tests.join(', ')}`);
  const options: PartialStrykerOptions = {
    mutate: mutateGlobs(module),
    testRunner: 'command',
    commandRunner: { command: testCommand(module) },
    coverageAnalysis: 'off', // the command runner cannot tell which test covers what
    concurrency,
    // Generous: on a shared machine a slow run must not pass for a mutant that hangs (a timeout counts as killed).
    timeoutMS: 60_000,
    reporters: ['clear-text', 'progress', 'html', 'json'],
    htmlReporter: { fileName: `reports/mutation/${module.name}.html` },
    jsonReporter: { fileName: `reports/mutation/${module.name}.json` },
    clearTextReporter: { allowEmojis: false, logTests: false, reportScoreTable: true },
    tempDirName: '.stryker-tmp',
    // The sandbox is a copy of the repository; these never matter to a test run. .test-build must not be copied:
    // the unit stage would take a build of the sources without their mutants for its own (scripts/mutate/unit-tests.mjs).
    ignorePatterns: ['.data', 'reports', '.ci', '*.tgz', '*.log', 'client-sdk/dist', '.test-build'],
    thresholds: { high: 95, low: THRESHOLD, break: null },
    cleanTempDir: true,
  };
  const results = await new Stryker(options).runMutationTest();
  scores.push(score(module, results));
}

mkdirSync('reports/mutation', { recursive: true });
const table = [
  '| Module | Mutants | Killed | Survived | Score |',
  '| --- | ---: | ---: | ---: | ---: |',
  ...scores.map(
    (s) => `| \`${s.module.file}\` | ${s.mutants} | ${s.killed} | ${s.survived.length} | ${s.score.toFixed(1)} % |`,
  ),
].join('\n');
const survivors = scores.flatMap((s) =>
  s.survived.map(
    (m) =>
      `- \`${s.module.file}:${m.location.start.line}\` ${m.mutatorName}: ${JSON.stringify(m.replacement ?? '')}${m.status === 'NoCoverage' ? ' (no coverage)' : ''}`,
  ),
);
writeFileSync('reports/mutation/summary.md', `${table}\n\nSurvivors:\n${survivors.join('\n') || '(none)'}\n`);
console.log(`\n${table}\n\nSurvivors:\n${survivors.join('\n') || '(none)'}`);
const below = scores.filter((s) => s.score < THRESHOLD);
if (below.length > 0) {
  console.error(`\nBelow ${THRESHOLD} %: ${below.map((s) => s.module.name).join(', ')}.`);
  process.exit(1);
}

function score(module: MutationModule, results: MutantResult[]): Score {
  const counted = results.filter((r) => ['Killed', 'Timeout', 'Survived', 'NoCoverage'].includes(r.status));
  const killed = counted.filter((r) => r.status === 'Killed' || r.status === 'Timeout').length;
  const survived = counted.filter((r) => r.status === 'Survived' || r.status === 'NoCoverage');
  return {
    module,
    mutants: counted.length,
    killed,
    survived,
    score: counted.length === 0 ? 0 : (100 * killed) / counted.length,
  };
}
