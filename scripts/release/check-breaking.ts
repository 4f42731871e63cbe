// `npm run check:breaking [-- --base FILE] [--current FILE]`: compares the working spec (bundled afresh from
// spec/) with the newest released description under spec/releases/ and fails on any change that would break a
// client of v1 (see breaking-changes.ts for the rules), unless spec/releases/accepted-changes.yaml accepts it
// with a reason (see accepted-changes.ts). Exit code 0: none, or only accepted ones (listed); 1: breaking
// changes nobody accepted, accepted entries the working spec no longer needs, or an accepted list measured
// against another release than the newest.
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { bundleSpec } from '../generate.js';
import { ACCEPTED_CHANGES_FILE, judgeAgainst } from './accepted-changes.js';
import { findBreakingChanges } from './breaking-changes.js';
import { latestRelease } from './releases.js';

const root = resolve(dirname(fileURLToPath(import.meta.url)), '..', '..');

/** The spec as it is now in spec/, bundled into a temporary file (generated/ may be stale). */
export function bundleWorkingSpec(): Record<string, any> {
  const dir = mkdtempSync(join(tmpdir(), 'erp-spec-'));
  try {
    return bundleSpec(dir) as Record<string, any>;
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}

function option(name: string): string | undefined {
  const at = process.argv.indexOf(name);
  return at > 0 ? process.argv[at + 1] : undefined;
}

if (process.argv[1] === fileURLToPath(import.meta.url)) {
  const baseFile = option('--base');
  const currentFile = option('--current');
  const base = baseFile
    ? { file: baseFile, document: JSON.parse(readFileSync(baseFile, 'utf8')) as Record<string, any> }
    : latestRelease(root);
  const current = currentFile
    ? (JSON.parse(readFileSync(currentFile, 'utf8')) as Record<string, any>)
    : bundleWorkingSpec();
  const changes = findBreakingChanges(base.document, current);
  const baseVersion = String(base.document.info?.version ?? '?');
  const against = `${baseVersion} (${base.file})`;
  const verdict = judgeAgainst(root, baseVersion, changes);
  const problems: string[] = [];
  if (!baseFile && verdict.since !== baseVersion) {
    problems.push(
      `${ACCEPTED_CHANGES_FILE} is measured against ${verdict.since}, but the newest release is ${baseVersion}: a release empties it (since: ${baseVersion}, changes: []).`,
    );
  }
  if (verdict.accepted.length > 0) {
    console.log(
      `${verdict.accepted.length} breaking change(s) against ${against} accepted in ${ACCEPTED_CHANGES_FILE}:`,
    );
    for (const { change, by } of verdict.accepted) console.log(`  ${change.where}: ${change.what}  [${by.changelog}]`);
  }
  // A stale entry is a fault of the working spec's list; another --current document need not use every entry.
  if (!currentFile)
    for (const entry of verdict.unused)
      problems.push(
        `${ACCEPTED_CHANGES_FILE} accepts "${entry.where}: ${entry.what}", which no longer happens: remove the entry.`,
      );
  if (verdict.refused.length > 0) {
    problems.push(
      `${verdict.refused.length} breaking change(s) against ${against}; within /api/v1 only additions are allowed (or accept a deliberate one in ${ACCEPTED_CHANGES_FILE}, with its reason):`,
    );
    for (const change of verdict.refused) problems.push(`  ${change.where}: ${change.what}`);
  }
  if (problems.length === 0) {
    console.log(
      verdict.accepted.length === 0
        ? `No breaking change against ${against}.`
        : `No other breaking change against ${against}.`,
    );
  } else {
    for (const line of problems) console.log(line);
    process.exitCode = 1;
  }
}
