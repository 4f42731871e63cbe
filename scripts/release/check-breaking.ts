// `npm run check:breaking [-- --base FILE] [--current FILE]`: compares the working spec (bundled afresh from
// spec/) with the newest released description under spec/releases/ and fails on any change that would break a
// client of v1 (see breaking-changes.ts for the rules). Exit code 0: none; 1: breaking changes, listed.
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { bundleSpec } from '../generate.js';
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
  const current = currentFile ? JSON.parse(readFileSync(currentFile, 'utf8')) as Record<string, any> : bundleWorkingSpec();
  const changes = findBreakingChanges(base.document, current);
  const against = `${base.document.info?.version ?? '?'} (${base.file})`;
  if (changes.length === 0) {
    console.log(`No breaking change against ${against}.`);
  } else {
    console.log(`${changes.length} breaking change(s) against ${against}; within /api/v1 only additions are allowed:`);
    for (const change of changes) console.log(`  ${change.where}: ${change.what}`);
    process.exitCode = 1;
  }
}
