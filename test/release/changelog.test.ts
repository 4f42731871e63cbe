// The changelog check (scripts/release/changelog-check.ts) over the real CHANGELOG.md, and over small changelogs
// that break each of its rules once.
import test from 'ava';
import { execFile } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { releaseChangelog, topReleasedVersion } from '../../scripts/release/changelog.js';
import { checkChangelog, featureNames } from '../../scripts/release/changelog-check.js';
import { bump } from '../../scripts/release/versions.js';

const root = process.cwd();
const real = readFileSync(join(root, 'CHANGELOG.md'), 'utf8');
const messages = (changelog: string) => checkChangelog(changelog).map((p) => `${p.line}: ${p.message}`);

const OLDER = `## 1.1.0
- DMS documents push; \`dms.document.flagged\` webhook; error code \`payload_too_large\`; \`cashExpenses\`; \`PUT /prices\`.

## 1.0.0
- Health, me.
`;

test('the real CHANGELOG.md passes the check, and so does the changelog the next release would write', (t) => {
  t.deepEqual(messages(real), []);
  if (/^## Unreleased\n+## /m.test(real)) return t.pass('nothing unreleased: the released sections passed above');
  const next = bump(topReleasedVersion(real)!, 'minor');
  t.deepEqual(messages(releaseChangelog(real, next, '2026-11-22')), []);
});

test('npm run check:changelog passes on the repository', async (t) => {
  const { stdout } = await promisify(execFile)(process.execPath, [
    '--import',
    'tsx',
    'scripts/release/changelog-check.ts',
  ]);
  t.is(stdout, 'CHANGELOG.md passes the changelog check.\n');
});

test('a heading repeated within one section is reported at its second place; the same heading in two sections is not', (t) => {
  const changelog = `# Changelog\n\n## Unreleased\n\n### Added\n- One.\n\n### Fixed\n- Two.\n\n### Added\n- Three.\n\n## 1.2.0\n\n### Added\n- Four.\n\n${OLDER}`;
  t.deepEqual(messages(changelog), [
    '11: "### Added" again in Unreleased (first at line 5): one heading per kind in a section',
  ]);
  const inRelease = `# Changelog\n\n## Unreleased\n\n## 1.2.0 - 2026-11-01\n\n### Changed\n- A.\n\n### Changed\n- B.\n\n${OLDER}`;
  t.deepEqual(messages(inRelease), [
    '10: "### Changed" again in 1.2.0 - 2026-11-01 (first at line 7): one heading per kind in a section',
  ]);
});

test('an Added item that carries a feature an older release announced is reported, unless it names that release; other headings may name it', (t) => {
  const again = `# Changelog\n\n## Unreleased\n\n### Added\n- New event \`dms.document.flagged\` and \`payload_too_large\`.\n- \`GET /stock\` with \`cashExpenses\` (as 1.1.0 described it).\n\n### Changed\n- \`PUT /prices\` takes 1000 items.\n\n${OLDER}`;
  t.deepEqual(messages(again), [
    '6: `dms.document.flagged` was announced in 1.1.0; this item under "Added" of Unreleased announces it again (say what changes under Changed, or name 1.1.0 in the item)',
    '6: `payload_too_large` was announced in 1.1.0; this item under "Added" of Unreleased announces it again (say what changes under Changed, or name 1.1.0 in the item)',
  ]);
  // A release section without headings announces with all its items; a version that only starts like 1.1.0 is not it.
  const released = `# Changelog\n\n## Unreleased\n\n## 1.2.0\n- \`cashExpenses\` on the sheet (see 1.1.01).\n\n${OLDER}`;
  t.deepEqual(messages(released), [
    '6: `cashExpenses` was announced in 1.1.0; this item under "1.2.0" of 1.2.0 announces it again (say what changes under Changed, or name 1.1.0 in the item)',
  ]);
});

test('feature names are operations, event types, snake_case and camelCase names in code spans; plain words, headers and scopes are not', (t) => {
  t.deepEqual(
    featureNames(
      '`GET /trips/{id}` `trip.closed` `no_open_trip` `linesTruncated` `dms` `Idempotency-Key` `customers:pii` `admin trip settle` plain_word',
    ),
    ['GET /trips/{id}', 'trip.closed', 'no_open_trip', 'linesTruncated'],
  );
});

test('the Unreleased section must exist, come first, put every item under a heading, give every heading an item and hold nothing else', (t) => {
  t.deepEqual(messages(`# Changelog\n\n${OLDER}`), ['1: there is no "## Unreleased" section']);
  t.deepEqual(messages(`# Changelog\n\n## 1.2.0\n- A.\n\n## Unreleased\n\n${OLDER}`), [
    '6: "## Unreleased" must be the first "## " section, above every release',
  ]);
  t.deepEqual(messages(`# Changelog\n\n## Unreleased\n- Loose.\n\n${OLDER}`), [
    '4: the Unreleased notes begin with a list item outside any "### " heading (### Added, ### Changed, ### Fixed, ...)',
  ]);
  t.deepEqual(messages(`# Changelog\n\n## Unreleased\n\n### Added\n\n### Fixed\n- A.\n\n${OLDER}`), [
    '5: "### Added" in Unreleased has no list item',
  ]);
  t.deepEqual(messages(`# Changelog\n\n## Unreleased\n\n### Added\n- A,\ncontinued without indent.\n\n${OLDER}`), [
    '7: a line in Unreleased that is not a "### " heading, a "- " list item or an indented continuation of one',
  ]);
  t.deepEqual(messages(`# Changelog\n\n## Unreleased\n\n## Unreleased\n\n${OLDER}`), [
    '5: a second "## Unreleased" section',
  ]);
  t.deepEqual(
    messages(`# Changelog\n\n## Unreleased\n\n### Added\n- A,\n  continued.\n  - nested.\n\n${OLDER}`),
    [],
    'continuations and nested items are part of their item',
  );
});

test('releases are "## X.Y.Z" or "## X.Y.Z - YYYY-MM-DD", each once, newest first', (t) => {
  t.deepEqual(messages(`# Changelog\n\n## Unreleased\n\n## Version 2\n- A.\n\n${OLDER}`), [
    '5: "## Version 2" is neither "## Unreleased" nor "## X.Y.Z" / "## X.Y.Z - YYYY-MM-DD"',
  ]);
  t.deepEqual(messages(`# Changelog\n\n## Unreleased\n\n## 1.0.5\n- A.\n\n${OLDER}`), [
    '8: 1.1.0 comes after 1.0.5: releases go newest first',
  ]);
  t.deepEqual(messages(`# Changelog\n\n## Unreleased\n\n## 1.1.0 - 2026-01-01\n- A.\n\n${OLDER}`), [
    '8: 1.1.0 has a second section (the first is at line 5)',
    '8: 1.1.0 comes after 1.1.0: releases go newest first',
  ]);
});
