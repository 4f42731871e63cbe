// Issue 18: the bundled description answers the OWASP API Security Top 10 (2023) lint (Spectral with
// @stoplight/spectral-owasp-ruleset, configured in .spectral.yaml): no finding outside the exceptions listed
// there, and every exception carries its reason.
import test from 'ava';
import { execFile } from 'node:child_process';
import { mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { isMap, isSeq, parseDocument, type Node, type Pair, type YAMLMap } from 'yaml';

const run = promisify(execFile);
const RULESET = '.spectral.yaml';

interface Finding {
  code: string;
  severity: number;
  path: string[];
  message: string;
}

/** Runs the Spectral CLI and returns its findings (0 error, 1 warning, 2 info, 3 hint). */
async function lint(document: string, ruleset: string): Promise<Finding[]> {
  const args = ['lint', document, '--ruleset', ruleset, '--format', 'json', '--fail-severity', 'error', '--quiet'];
  const { stdout } = await run('node_modules/.bin/spectral', args, { maxBuffer: 64 * 1024 * 1024 }).catch(
    (error: { stdout?: string; stderr?: string }) => {
      if (!error.stdout?.trim().startsWith('[')) throw new Error(`spectral failed:\n${error.stdout}\n${error.stderr}`);
      return { stdout: error.stdout };
    },
  );
  return JSON.parse(stdout) as Finding[];
}

const show = (findings: Finding[]) =>
  findings
    .map((f) => `${['error', 'warning', 'info', 'hint'][f.severity]} ${f.code} at ${f.path.join('/')}: ${f.message}`)
    .join('\n');

test('generated/openapi.json has no OWASP finding outside the exceptions of .spectral.yaml', async (t) => {
  const findings = await lint('generated/openapi.json', RULESET);
  t.deepEqual(
    findings.filter((f) => f.severity === 0),
    [],
    show(findings),
  );
  // Warnings too (string-restricted, missing 401/429): each is fixed or excepted with its reason, so that a new
  // one is seen rather than lost among old ones.
  t.deepEqual(findings, [], show(findings));
});

test('every rule turned off and every excepted path in .spectral.yaml has its reason next to it', (t) => {
  const document = parseDocument(readFileSync(RULESET, 'utf8'));
  const reasoned = (
    node: { commentBefore?: string | null } | null | undefined,
    key?: { commentBefore?: string | null } | null,
  ) => /Reason\b/.test(`${node?.commentBefore ?? ''}\n${key?.commentBefore ?? ''}`);
  const rules = document.get('rules', true) as YAMLMap | undefined;
  let checked = 0;
  for (const pair of (rules?.items ?? []) as Pair<Node, Node>[]) {
    checked += 1;
    t.true(
      reasoned(pair.key as never) || (checked === 1 && reasoned(rules as never)),
      `rules: ${String(pair.key)} has no "# Reason:" comment`,
    );
  }
  const overrides = document.get('overrides', true);
  t.true(isSeq(overrides));
  for (const [index, entry] of (isSeq(overrides) ? overrides.items : []).entries()) {
    checked += 1;
    t.true(isMap(entry));
    const files = (entry as YAMLMap).get('files') as { items?: { value?: unknown }[] } | undefined;
    // The comment above the first entry belongs to the sequence itself.
    const own =
      reasoned(entry as never, (entry as YAMLMap).items[0]?.key as never) ||
      (index === 0 && reasoned(overrides as never));
    t.true(own, `the override for ${String(files?.items?.[0]?.value)} has no "# Reason:" comment`);
  }
  t.true(checked > 5, 'the ruleset was read');
});

test('the lint bites: a request string without maxLength, an array without maxItems and an integer without bounds are errors', async (t) => {
  // A scratch copy under node_modules/.cache, so that the ruleset's `extends` resolves from the project; the
  // ruleset's exceptions are kept, pointing at the scratch document.
  mkdirSync('node_modules/.cache', { recursive: true });
  const scratch = mkdtempSync(join('node_modules/.cache', 'owasp-lint-'));
  try {
    // Its components only: the three rules judge schemas, and linting the operations again (the test above did)
    // cost most of this test's CPU.
    const document = { ...JSON.parse(readFileSync('generated/openapi.json', 'utf8')), paths: {} };
    const fields = document.components.schemas.CustomerFields.properties;
    fields.nickname = { type: 'string' };
    fields.tags = { type: 'array', items: { type: 'string', maxLength: 10, enum: ['a'] } };
    fields.visitsPerWeek = { type: 'integer', format: 'int32' };
    writeFileSync(join(scratch, 'openapi.json'), JSON.stringify(document, null, 2));
    writeFileSync(
      join(scratch, 'ruleset.yaml'),
      readFileSync(RULESET, 'utf8').replaceAll("'generated/openapi.json#", "'openapi.json#"),
    );
    const errors = (await lint(join(scratch, 'openapi.json'), join(scratch, 'ruleset.yaml'))).filter(
      (f) => f.severity === 0,
    );
    t.deepEqual(
      errors.map((f) => `${f.code} ${f.path.join('/')}`).sort(),
      [
        'owasp:api4:2023-array-limit components/schemas/CustomerFields/properties/tags',
        'owasp:api4:2023-integer-limit components/schemas/CustomerFields/properties/visitsPerWeek',
        'owasp:api4:2023-string-limit components/schemas/CustomerFields/properties/nickname',
      ],
      show(errors),
    );
  } finally {
    rmSync(scratch, { recursive: true, force: true });
  }
});
