import test from 'ava';
import { cpSync, mkdtempSync, readFileSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { releasedVersions, topReleasedVersion } from '../../scripts/release/changelog.js';
import { latestRelease } from '../../scripts/release/releases.js';
import { readVersions, VERSIONED_FILES } from '../../scripts/release/versions.js';
import { apiVersion } from '../../server/platform/spec.js';

const root = process.cwd();

test('every version written in the repository is the spec\'s info.version, the changelog\'s top version included', (t) => {
  const readings = readVersions(root);
  t.true(readings.length >= VERSIONED_FILES.length + 1);
  for (const reading of readings) t.is(reading.version, apiVersion, `${reading.file} (${reading.role})`);
});

test('the newest released description under spec/releases/ is the current version', (t) => {
  t.is(latestRelease(root).version, apiVersion);
  t.is(latestRelease(root).document.info.version, apiVersion);
});

test('the changelog carries every version from 1.0.0 to the current one, newest first, under an Unreleased section', (t) => {
  const changelog = readFileSync(join(root, 'CHANGELOG.md'), 'utf8');
  t.regex(changelog, /^## Unreleased$/m);
  t.true(changelog.indexOf('## Unreleased') < changelog.search(/^## \d/m));
  const [major, minor] = apiVersion.split('.').map(Number) as [number, number];
  const expected = Array.from({ length: minor + 1 }, (_, i) => `${major}.${minor - i}.0`);
  t.deepEqual(releasedVersions(changelog).filter((v) => v.endsWith('.0')), expected);
  t.is(topReleasedVersion(changelog), apiVersion);
});

test('a disagreeing version anywhere is found (the SDK package left behind)', (t) => {
  const scratch = mkdtempSync(join(tmpdir(), 'erp-versions-'));
  for (const file of [...VERSIONED_FILES.map((f) => f.file), 'CHANGELOG.md']) cpSync(join(root, file), join(scratch, file));
  const sdk = JSON.parse(readFileSync(join(scratch, 'client-sdk/package.json'), 'utf8')) as { version: string };
  sdk.version = '1.12.0';
  writeFileSync(join(scratch, 'client-sdk/package.json'), JSON.stringify(sdk));
  const wrong = readVersions(scratch).filter((r) => r.version !== apiVersion);
  t.deepEqual(wrong.map((r) => `${r.file} ${r.version}`), ['client-sdk/package.json 1.12.0']);
});

test('each released section up to 1.13.0 says what the product spec\'s Versioning table says of that version', (t) => {
  const specText = readFileSync(join(root, '..', 'shared', 'product-spec.md'), 'utf8');
  const table = [...specText.matchAll(/^\| (1\.\d+\.0) \| (.+) \|$/gm)].map((m) => ({ version: m[1]!, change: m[2]!.trim() }));
  t.true(table.length >= 14, 'the Versioning table is found');
  const changelog = readFileSync(join(root, 'CHANGELOG.md'), 'utf8');
  for (const { version, change } of table) {
    const section = changelog.split(new RegExp(`^## ${version.replace(/\./g, '\\.')}(?: - \\S+)?$`, 'm'))[1]?.split(/^## /m)[0] ?? '';
    t.true(section.includes(change), `${version}: ${change}`);
  }
});
