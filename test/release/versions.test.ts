import test from 'ava';
import { cpSync, mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { releasedVersions, topReleasedVersion } from '../../scripts/release/changelog.js';
import { latestRelease } from '../../scripts/release/releases.js';
import { readVersions, VERSIONED_FILES } from '../../scripts/release/versions.js';
import { apiVersion } from '../../server/platform/spec.js';

const root = process.cwd();

test("every version written in the repository is the spec's info.version, the changelog's top version included", (t) => {
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
  t.deepEqual(
    releasedVersions(changelog).filter((v) => v.endsWith('.0')),
    expected,
  );
  t.is(topReleasedVersion(changelog), apiVersion);
});

test('a disagreeing version anywhere is found (the SDK package left behind)', (t) => {
  const scratch = mkdtempSync(join(tmpdir(), 'erp-versions-'));
  for (const file of [...VERSIONED_FILES.map((f) => f.file), 'CHANGELOG.md'])
    cpSync(join(root, file), join(scratch, file));
  const sdk = JSON.parse(readFileSync(join(scratch, 'client-sdk/package.json'), 'utf8')) as { version: string };
  sdk.version = '1.12.0';
  writeFileSync(join(scratch, 'client-sdk/package.json'), JSON.stringify(sdk));
  const wrong = readVersions(scratch).filter((r) => r.version !== apiVersion);
  rmSync(scratch, { recursive: true, force: true });
  t.deepEqual(
    wrong.map((r) => `${r.file} ${r.version}`),
    ['client-sdk/package.json 1.12.0'],
  );
});

test('every released version has a changelog section that says what changed, and every released description under spec/releases/ has its section', (t) => {
  // The repository's own record: the changelog's sections and the snapshots the release command writes.
  const changelog = readFileSync(join(root, 'CHANGELOG.md'), 'utf8');
  const sectionOf = (version: string) =>
    changelog
      .split(new RegExp(`^## ${version.replace(/\./g, '\\.')}(?: - \\d{4}-\\d{2}-\\d{2})?$`, 'm'))[1]
      ?.split(/^## /m)[0] ?? '';
  const released = releasedVersions(changelog);
  t.true(released.length >= 14, released.join(', '));
  for (const version of released) t.regex(sectionOf(version), /^- \S/m, `${version} lists at least one change`);
  const snapshots = readdirSync(join(root, 'spec', 'releases'))
    .filter((name) => name.endsWith('.json'))
    .map((name) => name.slice(0, -'.json'.length));
  t.true(snapshots.length >= 1);
  for (const version of snapshots) {
    t.true(released.includes(version), `spec/releases/${version}.json has a changelog section`);
    const snapshot = JSON.parse(readFileSync(join(root, 'spec', 'releases', `${version}.json`), 'utf8')) as {
      info: { version: string };
    };
    t.is(snapshot.info.version, version, `spec/releases/${version}.json describes ${version}`);
  }
});
