// `npm run release -- minor` on a scratch copy of the repository (node_modules linked, not copied), then the
// scratch copy's own server is started and asked for /health.
import test from 'ava';
import { execFile } from 'node:child_process';
import { chmodSync, cpSync, existsSync, mkdtempSync, readFileSync, symlinkSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { freePort } from '../../scripts/lib/free-port.js';
import { readAcceptedChanges } from '../../scripts/release/accepted-changes.js';
import { bump, readVersions } from '../../scripts/release/versions.js';
import { apiVersion } from '../../server/platform/spec.js';
import { createTestDatabase } from '../support/database.js';
import { startServerProcess } from '../support/server-process.js';
import { TEST_SECRETS } from '../support/secrets.js';

const root = process.cwd();
const exec = promisify(execFile);
const COPIED = ['server', 'scripts', 'spec', 'prisma', 'generated', 'CHANGELOG.md', 'package.json', 'package-lock.json',
  'client-sdk/package.json', 'redocly.yaml', 'tsconfig.json', 'prisma.config.ts'];

function scratchCopy(): string {
  const scratch = mkdtempSync(join(tmpdir(), 'erp-release-'));
  chmodSync(scratch, 0o755);
  for (const entry of COPIED) if (existsSync(join(root, entry))) cpSync(join(root, entry), join(scratch, entry), { recursive: true });
  symlinkSync(join(root, 'node_modules'), join(scratch, 'node_modules'));
  return scratch;
}

async function runRelease(scratch: string, ...args: string[]): Promise<{ code: number; output: string }> {
  try {
    const { stdout, stderr } = await exec(process.execPath, ['--import', 'tsx', 'scripts/release/release.ts', ...args], { cwd: scratch });
    return { code: 0, output: stdout + stderr };
  } catch (error) {
    const failure = error as { code: number; stdout: string; stderr: string };
    return { code: failure.code, output: failure.stdout + failure.stderr };
  }
}

test('npm run release -- minor moves Unreleased into the next minor version everywhere, and the released server\'s /health says so', async (t) => {
  t.timeout(120_000);
  const scratch = scratchCopy();
  const next = bump(apiVersion, 'minor');
  const unreleased = readFileSync(join(root, 'CHANGELOG.md'), 'utf8').split(/^## /m)[1]!.replace(/^Unreleased\s*/, '').trim();

  const released = await runRelease(scratch, 'minor', '--date', '2026-11-22');
  t.is(released.code, 0, released.output);

  for (const reading of readVersions(scratch)) t.is(reading.version, next, `${reading.file} (${reading.role})`);
  const changelog = readFileSync(join(scratch, 'CHANGELOG.md'), 'utf8');
  t.true(changelog.includes(`## Unreleased\n\n## ${next} - 2026-11-22\n\n${unreleased}\n\n## ${apiVersion}\n`), changelog.slice(0, 600));
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
  const server = await startServerProcess({ DATABASE_URL: database.url, PORT: String(port), SANDBOX_BOOTSTRAP: 'false', DATA_DIR: join(scratch, '.data'), ...TEST_SECRETS }, { cwd: scratch, args: ['--role', 'api'] });
  try {
    t.true(server.output().includes('API listening'), server.output());
    const health = await fetch(`http://127.0.0.1:${port}/api/v1/health`).then((r) => r.json() as Promise<{ version: string }>);
    t.is(health.version, next);
  } finally {
    await server.stop();
    await database.drop();
  }
});

test('release refuses a major bump (a breaking change is /api/v2) and an unknown part, changing nothing', async (t) => {
  const scratch = scratchCopy();
  const major = await runRelease(scratch, 'major');
  t.is(major.code, 1);
  t.regex(major.output, /\/api\/v2/);
  const unknown = await runRelease(scratch, 'sideways');
  t.is(unknown.code, 1);
  t.regex(unknown.output, /Usage: npm run release -- minor\|patch/);
  for (const reading of readVersions(scratch)) t.is(reading.version, apiVersion);
});

test('release refuses when the spec breaks v1 clients of the last release', async (t) => {
  const scratch = scratchCopy();
  const { writeFileSync } = await import('node:fs');
  const schema = join(scratch, 'spec', 'components', 'schemas', 'Health.yaml');
  writeFileSync(schema, readFileSync(schema, 'utf8').replace(/^required: \[.*\]$/m, 'required: [status]'));
  const refused = await runRelease(scratch, 'minor');
  t.is(refused.code, 1, refused.output);
  t.regex(refused.output, /GET \/health response 200 application\/json: version: response field no longer always present/);
  for (const reading of readVersions(scratch)) t.is(reading.version, apiVersion);
});

test('release refuses while an accepted breaking change is not announced in the Unreleased notes, changing nothing', async (t) => {
  const scratch = scratchCopy();
  const { writeFileSync } = await import('node:fs');
  const accepted = readAcceptedChanges(scratch).changes;
  t.true(accepted.length > 0, 'the working spec has accepted narrowings (issue 18)');
  let changelog = readFileSync(join(scratch, 'CHANGELOG.md'), 'utf8');
  for (const entry of accepted) changelog = changelog.replaceAll(entry.changelog, 'something else');
  writeFileSync(join(scratch, 'CHANGELOG.md'), changelog.replace(/^## Unreleased\s*$/m, '## Unreleased\n\n### Added\n- A note that announces nothing accepted.\n'));
  const refused = await runRelease(scratch, 'minor', '--date', '2026-11-22');
  t.is(refused.code, 1, refused.output);
  t.regex(refused.output, /must announce each accepted breaking change/);
  for (const entry of accepted) t.true(refused.output.includes(`  ${entry.changelog}`), refused.output);
  for (const reading of readVersions(scratch)) t.is(reading.version, apiVersion);
  t.is(readAcceptedChanges(scratch).since, apiVersion);
});

test('a release that fails after its first write puts every file back, generated/ included', async (t) => {
  const scratch = scratchCopy();
  const { appendFileSync } = await import('node:fs');
  appendFileSync(join(scratch, 'prisma', 'schema.prisma'), '\nthis is not a prisma schema\n');
  const failed = await runRelease(scratch, 'minor', '--date', '2026-11-22');
  t.is(failed.code, 1, failed.output);
  for (const reading of readVersions(scratch)) t.is(reading.version, apiVersion, `${reading.file} (${reading.role})`);
  t.is(JSON.parse(readFileSync(join(scratch, 'generated', 'openapi.json'), 'utf8')).info.version, apiVersion);
  t.false(existsSync(join(scratch, 'spec', 'releases', `${bump(apiVersion, 'minor')}.json`)));
  t.is(readAcceptedChanges(scratch).since, apiVersion, 'the accepted list is put back too');
});

test('release refuses a date that is not on the calendar', async (t) => {
  const scratch = scratchCopy();
  const refused = await runRelease(scratch, 'minor', '--date', '2026-02-31');
  t.is(refused.code, 1);
  t.regex(refused.output, /--date 2026-02-31 is not a YYYY-MM-DD date/);
});
