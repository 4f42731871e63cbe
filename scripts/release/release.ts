// `npm run release -- minor [--date YYYY-MM-DD]` (or `patch`): one step from "Unreleased" to a version.
//   1. refuses unless every version in the repository agrees and equals the newest spec/releases/ snapshot,
//      the Unreleased section has notes, and the spec has no breaking change against that snapshot other than
//      those spec/releases/accepted-changes.yaml accepts, each announced in the Unreleased notes;
//   2. moves the Unreleased notes under `## <next> - <date>` and sets <next> everywhere the version is written
//      (spec info.version and its examples, both package.json files, the lockfile);
//   3. writes spec/releases/<next>.json, empties the accepted list (the snapshot now holds those changes) and
//      regenerates generated/ (so GET /health answers <next>).
// Any failure after the first write puts every file back as it was, generated/ included. `major` is refused: a breaking change goes
// to /api/v2 (product spec, Versioning 4), which is a new path prefix, not a release of this one.
// Before any of that, the changelog check (changelog-check.ts) must pass: one heading per kind in a release's notes,
// no feature announced again, a well-formed Unreleased section.
// `--dry-run` makes every check and computes every change, prints each file's changed lines, and writes nothing.
import { existsSync, readFileSync, renameSync, rmSync, writeFileSync } from 'node:fs';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { bundleSpec, generate } from '../generate.js';
import { ACCEPTED_CHANGES_FILE, emptiedAcceptedChanges, judgeAgainst, unannounced } from './accepted-changes.js';
import { findBreakingChanges } from './breaking-changes.js';
import { releaseChangelog, unreleasedNotes } from './changelog.js';
import { checkChangelog, describeProblems } from './changelog-check.js';
import { bundleWorkingSpec } from './check-breaking.js';
import { latestRelease, RELEASES_DIR } from './releases.js';
import { bump, readVersions, VERSIONED_FILES } from './versions.js';

const root = resolve(dirname(fileURLToPath(import.meta.url)), '..', '..');

export interface ReleaseResult {
  from: string;
  to: string;
  date: string;
  files: string[];
  /** Each rewritten file's text before and after (the snapshot and generated/ are not included). */
  changes: { file: string; before: string; after: string }[];
  dryRun: boolean;
}

export async function release(
  part: 'minor' | 'patch',
  date: string,
  options: { dryRun?: boolean } = {},
): Promise<ReleaseResult> {
  const changelogProblems = checkChangelog(readFileSync(join(root, 'CHANGELOG.md'), 'utf8'));
  if (changelogProblems.length > 0)
    throw new Error(`CHANGELOG.md does not pass the changelog check:\n${describeProblems(changelogProblems)}`);
  const readings = readVersions(root);
  const current = readings[0]!.version!;
  const disagreeing = readings.filter((reading) => reading.version !== current);
  if (disagreeing.length > 0) {
    throw new Error(
      `The versions disagree; the spec says ${current}, but:\n${disagreeing.map((r) => `  ${r.file} (${r.role}): ${r.version ?? 'missing'}`).join('\n')}`,
    );
  }
  const released = latestRelease(root);
  if (released.version !== current)
    throw new Error(`The spec says ${current} but the newest released description is ${released.file}`);
  const verdict = judgeAgainst(root, current, findBreakingChanges(released.document, bundleWorkingSpec()));
  if (verdict.since !== current)
    throw new Error(`${ACCEPTED_CHANGES_FILE} is measured against ${verdict.since}, not ${current}`);
  if (verdict.refused.length > 0) {
    throw new Error(
      `The spec breaks v1 clients of ${current}; a ${part} release cannot carry that:\n${verdict.refused.map((c) => `  ${c.where}: ${c.what}`).join('\n')}`,
    );
  }
  if (verdict.unused.length > 0) {
    throw new Error(
      `${ACCEPTED_CHANGES_FILE} accepts changes that no longer happen; remove:\n${verdict.unused.map((e) => `  ${e.where}: ${e.what}`).join('\n')}`,
    );
  }
  const accepted = [...new Set(verdict.accepted.map((a) => a.by))];
  const missing = unannounced(accepted, unreleasedNotes(readFileSync(join(root, 'CHANGELOG.md'), 'utf8')));
  if (missing.length > 0) {
    throw new Error(
      `The Unreleased section of CHANGELOG.md must announce each accepted breaking change (${ACCEPTED_CHANGES_FILE}); it lacks:\n${missing.map((e) => `  ${e.changelog}`).join('\n')}`,
    );
  }

  const next = bump(current, part);
  const originals = new Map<string, string>();
  const read = (file: string) => {
    const text = readFileSync(join(root, file), 'utf8');
    originals.set(file, text);
    return text;
  };
  const updated = new Map<string, string>();
  updated.set('CHANGELOG.md', releaseChangelog(read('CHANGELOG.md'), next, date));
  for (const entry of VERSIONED_FILES) updated.set(entry.file, entry.write(read(entry.file), current, next));
  updated.set(ACCEPTED_CHANGES_FILE, emptiedAcceptedChanges(read(ACCEPTED_CHANGES_FILE), next));

  const snapshot = join(RELEASES_DIR, `${next}.json`);
  const changes = [...updated].map(([file, after]) => ({ file, before: originals.get(file)!, after }));
  if (options.dryRun)
    return { from: current, to: next, date, files: [...updated.keys(), snapshot], changes, dryRun: true };
  // Generation rewrites these with the new version; a failed release puts them back too.
  const derived = ['generated/openapi.json', 'generated/api-types.ts', 'client-sdk/src/generated/api-types.ts']
    .filter((file) => existsSync(join(root, file)))
    .map((file) => [file, readFileSync(join(root, file), 'utf8')] as const);
  try {
    for (const [file, text] of updated) writeAtomically(join(root, file), text);
    const document = bundleSpec(join(root, 'generated'), join(root, snapshot));
    if ((document.info as { version: string }).version !== next)
      throw new Error(`${snapshot} came out at ${(document.info as { version: string }).version}`);
    await generate(join(root, 'generated'), document);
  } catch (error) {
    for (const [file, text] of [...originals, ...derived]) writeAtomically(join(root, file), text);
    rmSync(join(root, snapshot), { force: true });
    throw error;
  }
  return { from: current, to: next, date, files: [...updated.keys(), snapshot], changes, dryRun: false };
}

/**
 * The lines a change removes (`-`) and adds (`+`): line by line where the line count is kept (a version rewritten in
 * place), else the block between the common beginning and end (the changelog's new heading).
 */
export function changedLines(before: string, after: string): string[] {
  const a = before.split('\n');
  const b = after.split('\n');
  if (a.length === b.length) return a.flatMap((line, i) => (line === b[i] ? [] : [`- ${line}`, `+ ${b[i]}`]));
  let start = 0;
  while (start < a.length && start < b.length && a[start] === b[start]) start++;
  let end = 0;
  while (end < a.length - start && end < b.length - start && a[a.length - 1 - end] === b[b.length - 1 - end]) end++;
  return [
    ...a.slice(start, a.length - end).map((line) => `- ${line}`),
    ...b.slice(start, b.length - end).map((line) => `+ ${line}`),
  ];
}

/** Writes through a temporary file and a rename, so a reader never sees half a file. */
function writeAtomically(path: string, text: string): void {
  const temporary = `${path}.release-tmp`;
  writeFileSync(temporary, text);
  renameSync(temporary, path);
}

function parseArguments(argv: string[]): { part: 'minor' | 'patch'; date: string; dryRun: boolean } {
  const dryRun = argv.includes('--dry-run');
  argv = argv.filter((arg) => arg !== '--dry-run');
  const part = argv[0];
  if (part === 'major')
    throw new Error('A major release is a new API (/api/v2), not a bump of v1: see the product spec, Versioning.');
  if (part !== 'minor' && part !== 'patch')
    throw new Error('Usage: npm run release -- minor|patch [--date YYYY-MM-DD] [--dry-run]');
  const at = argv.indexOf('--date');
  const date = at > 0 ? argv[at + 1]! : new Date().toISOString().slice(0, 10);
  // Round-trip through Date: 2026-02-31 parses (as March 3rd) but is not a day of the calendar.
  const parsed = new Date(`${date}T00:00:00Z`);
  if (
    !/^\d{4}-\d{2}-\d{2}$/.test(date) ||
    Number.isNaN(parsed.getTime()) ||
    parsed.toISOString().slice(0, 10) !== date
  ) {
    throw new Error(`--date ${date} is not a YYYY-MM-DD date`);
  }
  const unknown = argv.slice(1).filter((arg, i, rest) => arg !== '--date' && rest[i - 1] !== '--date');
  if (unknown.length > 0)
    throw new Error(
      `Unknown argument ${unknown.join(' ')}. Usage: npm run release -- minor|patch [--date YYYY-MM-DD] [--dry-run]`,
    );
  return { part, date, dryRun };
}

if (process.argv[1] === fileURLToPath(import.meta.url)) {
  try {
    const { part, date, dryRun } = parseArguments(process.argv.slice(2));
    const result = await release(part, date, { dryRun });
    if (result.dryRun) {
      console.log(
        `Dry run: a ${part} release would make ${result.to} (${result.date}) from ${result.from}. Nothing was written.`,
      );
      for (const change of result.changes) {
        console.log(`  ${change.file}`);
        for (const line of changedLines(change.before, change.after)) console.log(`    ${line}`);
      }
      console.log(`  ${result.files.at(-1)} (new: the bundled description of ${result.to})`);
      console.log(`  generated/ (regenerated: GET /health would answer ${result.to})`);
    } else {
      console.log(`Released ${result.to} (${result.date}), from ${result.from}. Changed:`);
      for (const file of result.files) console.log(`  ${file}`);
      console.log(`generated/ regenerated. Review with git diff, then commit and tag v${result.to}.`);
    }
  } catch (error) {
    console.error(`release refused: ${(error as Error).message}`);
    process.exitCode = 1;
  }
}
