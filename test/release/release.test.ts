// `npm run release -- minor` on a scratch copy of the repository (node_modules linked, not copied), then the
// scratch copy's own server is started and asked for /health. Every test makes the preconditions it needs in its
// copy (scratch.ts) and reads the versions from it, so the file passes before a release and after one is committed.
import test from 'ava';
import { createHash } from 'node:crypto';
import { appendFileSync, existsSync, readdirSync, readFileSync, statSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { freePort } from '../../scripts/lib/free-port.js';
import { readAcceptedChanges } from '../../scripts/release/accepted-changes.js';
import { bump, readVersions, VERSIONED_FILES } from '../../scripts/release/versions.js';
import { createTestDatabase } from '../support/database.js';
import { startServerProcess } from '../support/server-process.js';
import { TEST_SECRETS } from '../support/secrets.js';
import {
  addUnreleasedItem,
  removeScratchCopies,
  runRelease,
  scratchCopy,
  versionOf,
  withAcceptedNarrowing,
  withNotes,
} from './scratch.js';

test.after.always(removeScratchCopies);

const escape = (text: string) => text.replace(/[.*+?^${}()|[\]\\]/g, '\\$&');

test("npm run release -- minor moves Unreleased into the next minor version everywhere, and the released server's /health says so", async (t) => {
  t.timeout(360_000); // a release bundles the spec and regenerates generated/: minutes on a busy machine
  const scratch = scratchCopy();
  const current = versionOf(scratch);
  const next = bump(current, 'minor');
  const unreleased = withNotes(scratch);

  const released = await runRelease(scratch, 'minor', '--date', '2026-11-22');
  t.is(released.code, 0, released.output);

  for (const reading of readVersions(scratch)) t.is(reading.version, next, `${reading.file} (${reading.role})`);
  const changelog = readFileSync(join(scratch, 'CHANGELOG.md'), 'utf8');
  // The previous top section is `## X.Y.Z` or, once released by this command, `## X.Y.Z - date`.
  const moved = `## Unreleased\n\n## ${next} - 2026-11-22\n\n${unreleased}\n\n## ${current}`;
  const at = changelog.indexOf(moved);
  t.true(at >= 0, changelog.slice(0, 600));
  t.regex(changelog.slice(at + moved.length, at + moved.length + 20), /^( - \d{4}-\d{2}-\d{2})?\n/);
  t.is(JSON.parse(readFileSync(join(scratch, 'spec', 'releases', `${next}.json`), 'utf8')).info.version, next);
  t.is(JSON.parse(readFileSync(join(scratch, 'generated', 'openapi.json'), 'utf8')).info.version, next);
  // The snapshot now holds the accepted narrowings; nothing is accepted against it yet.
  t.deepEqual(readAcceptedChanges(scratch), { since: next, changes: [] });

  // Nothing left to release: a second run refuses and changes nothing.
  const again = await runRelease(scratch, 'minor', '--date', '2026-11-23');
  t.is(again.code, 1);
  t.regex(again.output, /Unreleased section of CHANGELOG.md is empty/);
  for (const reading of readVersions(scratch)) t.is(reading.version, next);

  const database = await createTestDatabase('release_health');
  const port = await freePort();
  const server = await startServerProcess(
    {
      DATABASE_URL: database.url,
      PORT: String(port),
      SANDBOX_BOOTSTRAP: 'false',
      DATA_DIR: join(scratch, '.data'),
      ...TEST_SECRETS,
    },
    { cwd: scratch, args: ['--role', 'api'] },
  );
  try {
    t.true(server.output().includes('API listening'), server.output());
    const health = await fetch(`http://127.0.0.1:${port}/api/v1/health`).then(
      (r) => r.json() as Promise<{ version: string }>,
    );
    t.is(health.version, next);
  } finally {
    await server.stop();
    await database.drop();
  }
});

/** A digest of every file under the copy but node_modules: what a dry run must leave as it was. */
function digest(dir: string): Map<string, string> {
  const files = new Map<string, string>();
  const walk = (at: string) => {
    for (const name of readdirSync(at)) {
      const path = join(at, name);
      if (name === 'node_modules') continue;
      if (statSync(path).isDirectory()) walk(path);
      else files.set(path.slice(dir.length), createHash('sha256').update(readFileSync(path)).digest('hex'));
    }
  };
  walk(dir);
  return files;
}

test('npm run release -- minor --dry-run prints every change a release would make and writes nothing', async (t) => {
  const scratch = scratchCopy();
  const current = versionOf(scratch);
  const next = bump(current, 'minor');
  withNotes(scratch);
  const before = digest(scratch);

  const dry = await runRelease(scratch, 'minor', '--dry-run', '--date', '2026-11-22');
  t.is(dry.code, 0, dry.output);
  t.regex(
    dry.output,
    new RegExp(
      `^Dry run: a minor release would make ${escape(next)} \\(2026-11-22\\) from ${escape(current)}\\. Nothing was written\\.`,
    ),
  );
  t.true(dry.output.includes(`  CHANGELOG.md\n    + ## ${next} - 2026-11-22\n`), dry.output);
  for (const { file } of VERSIONED_FILES) {
    t.regex(
      dry.output,
      new RegExp(`\\n  ${escape(file)}\\n    - [^\\n]*${escape(current)}[^\\n]*\\n    \\+ [^\\n]*${escape(next)}`),
      file,
    );
  }
  t.true(dry.output.includes(`  spec/releases/${next}.json (new`), dry.output);
  t.deepEqual(digest(scratch), before, 'not one file written, moved or added');
  for (const reading of readVersions(scratch)) t.is(reading.version, current);

  // It refuses what the release refuses, with the same words (here a second "### Added" in Unreleased).
  addUnreleasedItem(scratch, 'One more.');
  const file = join(scratch, 'CHANGELOG.md');
  writeFileSync(
    file,
    readFileSync(file, 'utf8').replace(/^## Unreleased\n\n/m, '## Unreleased\n\n### Added\n- Again.\n\n'),
  );
  const refused = await runRelease(scratch, 'minor', '--dry-run');
  t.is(refused.code, 1, refused.output);
  t.regex(
    refused.output,
    /CHANGELOG.md does not pass the changelog check:\nCHANGELOG\.md:\d+: "### Added" again in Unreleased/,
  );
});

test('release refuses a changelog that fails the changelog check, naming each problem, and changes nothing', async (t) => {
  const scratch = scratchCopy();
  const current = versionOf(scratch);
  withNotes(scratch);
  const file = join(scratch, 'CHANGELOG.md');
  // A second "### Added" and an item that announces again what 1.4.0 announced.
  writeFileSync(
    file,
    readFileSync(file, 'utf8').replace(
      /^## Unreleased\n/m,
      '## Unreleased\n\n### Added\n- `payload_too_large` for big files.\n',
    ),
  );
  const refused = await runRelease(scratch, 'minor', '--date', '2026-11-22');
  t.is(refused.code, 1, refused.output);
  t.regex(refused.output, /CHANGELOG.md does not pass the changelog check/);
  t.regex(refused.output, /CHANGELOG\.md:\d+: "### Added" again in Unreleased/);
  t.regex(refused.output, /CHANGELOG\.md:\d+: `payload_too_large` was announced in 1\.4\.0/);
  for (const reading of readVersions(scratch)) t.is(reading.version, current);
});

test('release refuses a major bump (a breaking change is /api/v2), an unknown part and an unknown argument, changing nothing', async (t) => {
  const scratch = scratchCopy();
  const current = versionOf(scratch);
  const major = await runRelease(scratch, 'major');
  t.is(major.code, 1);
  t.regex(major.output, /\/api\/v2/);
  const unknown = await runRelease(scratch, 'sideways');
  t.is(unknown.code, 1);
  t.regex(unknown.output, /Usage: npm run release -- minor\|patch \[--date YYYY-MM-DD\] \[--dry-run\]/);
  const typo = await runRelease(scratch, 'minor', '--dryrun');
  t.is(typo.code, 1);
  t.regex(typo.output, /Unknown argument --dryrun/);
  for (const reading of readVersions(scratch)) t.is(reading.version, current);
});

test('release refuses when the spec breaks v1 clients of the last release', async (t) => {
  const scratch = scratchCopy();
  const current = versionOf(scratch);
  withNotes(scratch);
  const schema = join(scratch, 'spec', 'components', 'schemas', 'Health.yaml');
  writeFileSync(schema, readFileSync(schema, 'utf8').replace(/^required: \[.*\]$/m, 'required: [status]'));
  const refused = await runRelease(scratch, 'minor');
  t.is(refused.code, 1, refused.output);
  t.regex(
    refused.output,
    /GET \/health response 200 application\/json: version: response field no longer always present/,
  );
  for (const reading of readVersions(scratch)) t.is(reading.version, current);
});

test('release refuses while an accepted breaking change is not announced in the Unreleased notes, changing nothing', async (t) => {
  const scratch = scratchCopy();
  const current = versionOf(scratch);
  withAcceptedNarrowing(scratch); // at least one, whatever the repository accepts today
  const accepted = readAcceptedChanges(scratch).changes;
  t.true(accepted.length > 0);
  let changelog = readFileSync(join(scratch, 'CHANGELOG.md'), 'utf8');
  for (const entry of accepted) changelog = changelog.replaceAll(entry.changelog, 'something else');
  writeFileSync(join(scratch, 'CHANGELOG.md'), changelog);
  addUnreleasedItem(scratch, 'A note that announces nothing accepted.');
  const refused = await runRelease(scratch, 'minor', '--date', '2026-11-22');
  t.is(refused.code, 1, refused.output);
  t.regex(refused.output, /must announce each accepted breaking change/);
  for (const entry of accepted) t.true(refused.output.includes(`  ${entry.changelog}`), refused.output);
  for (const reading of readVersions(scratch)) t.is(reading.version, current);
  t.is(readAcceptedChanges(scratch).since, current);
});

test('an accepted and announced narrowing is released, and the accepted list starts again empty', async (t) => {
  t.timeout(360_000); // a release bundles the spec and regenerates generated/: minutes on a busy machine
  const scratch = scratchCopy();
  const next = bump(versionOf(scratch), 'minor');
  const entry = withAcceptedNarrowing(scratch);
  const released = await runRelease(scratch, 'minor', '--date', '2026-11-22');
  t.is(released.code, 0, released.output);
  t.deepEqual(readAcceptedChanges(scratch), { since: next, changes: [] });
  t.true(
    readFileSync(join(scratch, 'CHANGELOG.md'), 'utf8').split(/^## /m)[2]!.includes(entry.changelog),
    'the announcement is in the released notes',
  );
  const snapshot = JSON.parse(readFileSync(join(scratch, 'spec', 'releases', `${next}.json`), 'utf8'));
  t.is(snapshot.components.schemas.CustomerFields.properties.name.maxLength, 150, 'the snapshot holds the narrowing');
});

test('a release that fails after its first write puts every file back, generated/ included', async (t) => {
  const scratch = scratchCopy();
  const current = versionOf(scratch);
  withNotes(scratch); // so that it gets past the checks to its writes
  appendFileSync(join(scratch, 'prisma', 'schema.prisma'), '\nthis is not a prisma schema\n');
  const failed = await runRelease(scratch, 'minor', '--date', '2026-11-22');
  t.is(failed.code, 1, failed.output);
  t.notRegex(failed.output, /Unreleased section of CHANGELOG.md is empty/);
  for (const reading of readVersions(scratch)) t.is(reading.version, current, `${reading.file} (${reading.role})`);
  t.is(JSON.parse(readFileSync(join(scratch, 'generated', 'openapi.json'), 'utf8')).info.version, current);
  t.false(existsSync(join(scratch, 'spec', 'releases', `${bump(current, 'minor')}.json`)));
  t.is(readAcceptedChanges(scratch).since, current, 'the accepted list is put back too');
});

test('release refuses a date that is not on the calendar', async (t) => {
  const scratch = scratchCopy();
  const refused = await runRelease(scratch, 'minor', '--date', '2026-02-31');
  t.is(refused.code, 1);
  t.regex(refused.output, /--date 2026-02-31 is not a YYYY-MM-DD date/);
});
