// A scratch copy of the repository for the release tests, and the preconditions a release needs, made in the copy
// whatever state the repository is in: right before a release (Unreleased has notes, narrowings are accepted) or
// right after one (Unreleased empty, nothing accepted). The tests read the versions from the copy, never a
// hard-coded one, so they hold before and after `npm run release` and its commit.
import { execFile } from 'node:child_process';
import { chmodSync, cpSync, existsSync, mkdtempSync, readFileSync, rmSync, symlinkSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { parse, stringify } from 'yaml';
import { ACCEPTED_CHANGES_FILE, type AcceptedChange } from '../../scripts/release/accepted-changes.js';
import { unreleasedNotes } from '../../scripts/release/changelog.js';
import { readVersions } from '../../scripts/release/versions.js';

const root = process.cwd();
const exec = promisify(execFile);
const COPIED = [
  'server',
  'scripts',
  'spec',
  'prisma',
  'generated',
  'CHANGELOG.md',
  'package.json',
  'package-lock.json',
  'client-sdk/package.json',
  'client-sdk/scripts',
  'redocly.yaml',
  'tsconfig.json',
  'prisma.config.ts',
];

const copies: string[] = [];

/** Removes every copy scratchCopy made in this process (a file's `test.after.always`): each is about 9 MB of /tmp. */
export function removeScratchCopies(): void {
  for (const copy of copies.splice(0)) rmSync(copy, { recursive: true, force: true });
}

export function scratchCopy(): string {
  const scratch = mkdtempSync(join(tmpdir(), 'erp-release-'));
  copies.push(scratch);
  chmodSync(scratch, 0o755);
  for (const entry of COPIED)
    if (existsSync(join(root, entry))) cpSync(join(root, entry), join(scratch, entry), { recursive: true });
  symlinkSync(join(root, 'node_modules'), join(scratch, 'node_modules'));
  return scratch;
}

/** The version every file of the copy carries (the spec's info.version). */
export function versionOf(scratch: string): string {
  return readVersions(scratch)[0]!.version!;
}

export async function runRelease(scratch: string, ...args: string[]): Promise<{ code: number; output: string }> {
  try {
    const { stdout, stderr } = await exec(
      process.execPath,
      ['--import', 'tsx', 'scripts/release/release.ts', ...args],
      { cwd: scratch },
    );
    return { code: 0, output: stdout + stderr };
  } catch (error) {
    const failure = error as { code: number; stdout: string; stderr: string };
    return { code: failure.code, output: failure.stdout + failure.stderr };
  }
}

/** Adds `line` as an item of the Unreleased section's `### Added` (made when missing). */
export function addUnreleasedItem(scratch: string, line: string): void {
  const file = join(scratch, 'CHANGELOG.md');
  const changelog = readFileSync(file, 'utf8');
  const added = /^## Unreleased\n\n### Added\n/m;
  writeFileSync(
    file,
    added.test(changelog)
      ? changelog.replace(added, (heading) => `${heading}- ${line}\n`)
      : changelog.replace(/^## Unreleased\n+/m, `## Unreleased\n\n### Added\n- ${line}\n\n`),
  );
}

/** Gives the copy's Unreleased section a note when it has none (right after a release). */
export function withNotes(scratch: string): string {
  if (unreleasedNotes(readFileSync(join(scratch, 'CHANGELOG.md'), 'utf8')) === '')
    addUnreleasedItem(scratch, 'A note for the release under test.');
  return unreleasedNotes(readFileSync(join(scratch, 'CHANGELOG.md'), 'utf8'));
}

/**
 * A deliberate narrowing made in the copy (a customer's name at most 150 characters, from 200), accepted in
 * spec/releases/accepted-changes.yaml with its changelog line, which the Unreleased notes carry.
 */
export function withAcceptedNarrowing(scratch: string): AcceptedChange {
  const schema = join(scratch, 'spec', 'components', 'schemas', 'CustomerFields.yaml');
  const text = readFileSync(schema, 'utf8');
  if (!/^ {4}maxLength: 200$/m.test(text))
    throw new Error('CustomerFields.yaml no longer has the name maxLength 200 this fixture narrows');
  writeFileSync(schema, text.replace(/^ {4}maxLength: 200$/m, '    maxLength: 150'));
  const entry: AcceptedChange = {
    where: '*: name',
    what: 'narrowed range: maxLength 200 -> 150',
    reason: 'A narrowing the release tests make in their scratch copy.',
    changelog: "a customer's `name` is at most 150 characters",
  };
  const file = join(scratch, ACCEPTED_CHANGES_FILE);
  const list = parse(readFileSync(file, 'utf8')) as { since: string; changes?: AcceptedChange[] | null };
  writeFileSync(file, stringify({ since: list.since, changes: [...(list.changes ?? []), entry] }));
  addUnreleasedItem(scratch, `The scratch copy's narrowing: ${entry.changelog}.`);
  return entry;
}
