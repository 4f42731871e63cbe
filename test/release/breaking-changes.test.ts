import test from 'ava';
import { execFile } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { judge, readAcceptedChanges, unannounced } from '../../scripts/release/accepted-changes.js';
import { findBreakingChanges, patternMaxLength } from '../../scripts/release/breaking-changes.js';
import { unreleasedNotes } from '../../scripts/release/changelog.js';
import { latestRelease } from '../../scripts/release/releases.js';
import { apiDocument } from '../../server/platform/spec.js';

type Json = Record<string, any>;
const root = process.cwd();
const released = latestRelease(root);
// The rules are tested against one fixed released description, 1.13.0 (a release never removes a snapshot), so that
// these tests hold after the next release too; the working spec is judged against the newest one.
const FIXTURE_FILE = join('spec', 'releases', '1.13.0.json');
const fixture = JSON.parse(readFileSync(join(root, FIXTURE_FILE), 'utf8')) as Json;
const scratch = (): Json => structuredClone(fixture);
const whatChanged = (current: Json) => findBreakingChanges(fixture, current).map((c) => `${c.where}: ${c.what}`);

test('the working spec has no breaking change against the newest released description but those accepted, and every accepted one still happens', (t) => {
  const accepted = readAcceptedChanges(root);
  t.is(accepted.since, released.version, 'the accepted list is measured against the newest release');
  const verdict = judge(findBreakingChanges(released.document, apiDocument as Json), accepted.changes);
  t.deepEqual(verdict.refused, []);
  t.deepEqual(verdict.unused, []);
});

test('every accepted breaking change is announced in the Unreleased section of CHANGELOG.md (a release requires it)', (t) => {
  const accepted = readAcceptedChanges(root).changes;
  t.deepEqual(
    unannounced(accepted, unreleasedNotes(readFileSync(join(root, 'CHANGELOG.md'), 'utf8'))).map((e) => e.changelog),
    [],
  );
});

test('a bound the old schema already held is no narrowing: a maxLength a pattern or a date implies, bounds an enum meets, an int32 format on a bounded integer', (t) => {
  const spec = scratch();
  const fields = spec.components.schemas.CustomerFields.properties;
  fields.outletCode.maxLength = 9; // ^UG[0-9]{7}$
  fields.phone.maxLength = 21; // ^\+?[0-9 ()-]{6,20}$
  fields.paymentTermsDays.format = 'int32'; // 0..365
  spec.components.schemas.Date.maxLength = 10; // format date
  spec.components.schemas.JourneyPlanVisitInput.properties.weekParity = {
    ...spec.components.schemas.JourneyPlanVisitInput.properties.weekParity,
    minimum: 0,
    maximum: 1,
    format: 'int32',
  }; // enum [0, 1, null]
  t.deepEqual(whatChanged(spec), []);
});

test('a bound shorter than the pattern allowed, a bound on an unbounded value and an int32 format on an unbounded integer are narrowings', (t) => {
  const spec = scratch();
  const fields = spec.components.schemas.CustomerFields.properties;
  fields.outletCode.maxLength = 8;
  fields.phone.maxLength = 20;
  spec.components.schemas.ProductFields.properties.packSize = {
    type: 'integer',
    minimum: 1,
    maximum: 10000,
    format: 'int32',
  };
  const changes = whatChanged(spec);
  t.true(
    changes.includes('POST /customers request application/json: outletCode: narrowed range: maxLength none -> 8'),
    changes.join('\n'),
  );
  t.true(
    changes.includes('POST /customers request application/json: phone: narrowed range: maxLength none -> 20'),
    changes.join('\n'),
  );
  t.false(
    changes.some((c) => c.includes('packSize')),
    'the old 1..10000 already fitted int32',
  );

  // An integer the old description left unbounded: int32 now refuses what it accepted.
  const unbounded = scratch();
  delete unbounded.components.parameters.Limit.schema.maximum;
  const formatted = structuredClone(unbounded);
  formatted.components.parameters.Limit.schema.format = 'int32';
  const formatChanges = findBreakingChanges(unbounded, formatted).map((c) => `${c.where}: ${c.what}`);
  t.true(
    formatChanges.includes('GET /customers query parameter limit: changed format: none -> int32'),
    formatChanges.join('\n'),
  );
});

test('the pattern reader gives the longest match of simple anchored patterns, and nothing for what it cannot bound', (t) => {
  t.is(patternMaxLength('^UG[0-9]{7}$'), 9);
  t.is(patternMaxLength('^-?(0|[1-9][0-9]{0,13})(\\.[0-9]{1,4})?$'), 20);
  t.is(patternMaxLength('^(M[A-Z0-9]{1,9}|D[A-Z0-9]{1,9}|V_[A-Z0-9]{1,10}-[GB])$'), 14);
  t.is(patternMaxLength('^[\\]a-]{2}x$'), 3, 'a class holding ] and an escape');
  for (const unbounded of ['^[a-z]+$', '^a{2,}$', '^a*$', 'abc', '^abc', '^(?=a)a$', '^(a)\\1$', '^a|b$x'])
    t.is(patternMaxLength(unbounded), undefined, unbounded);
});

test('an accepted entry lets exactly its change through (where with *, what exact), and one that matches nothing is reported unused', (t) => {
  const changes = [
    { where: 'GET /customers query parameter updatedSince', what: 'narrowed range: maxLength none -> 40' },
    { where: 'GET /products query parameter updatedSince', what: 'narrowed range: maxLength none -> 40' },
    { where: 'GET /products query parameter updatedSince', what: 'narrowed range: maxLength none -> 30' },
    { where: 'GET /products query parameter cursor', what: 'narrowed range: maxLength none -> 40' },
  ];
  const entry = {
    where: '* query parameter updatedSince',
    what: 'narrowed range: maxLength none -> 40',
    reason: 'r',
    changelog: 'updatedSince is bounded',
  };
  const stale = {
    where: 'PUT /prices request application/json: items',
    what: 'narrowed range: maxItems none -> 500',
    reason: 'r',
    changelog: 'prices are bounded',
  };
  const verdict = judge(changes, [entry, stale]);
  t.deepEqual(
    verdict.accepted.map((a) => a.change),
    changes.slice(0, 2),
  );
  t.deepEqual(verdict.refused, changes.slice(2));
  t.deepEqual(verdict.unused, [stale]);
  t.deepEqual(
    unannounced([entry, stale], '### Changed\n- updatedSince is bounded, and more').map((e) => e.changelog),
    ['prices are bounded'],
  );
});

test('a removed response field is breaking, wherever the schema is used', (t) => {
  const spec = scratch();
  delete spec.components.schemas.Customer.properties.region;
  spec.components.schemas.Customer.required = spec.components.schemas.Customer.required.filter(
    (name: string) => name !== 'region',
  );
  const changes = whatChanged(spec);
  t.true(
    changes.includes('GET /customers/{id} response 200 application/json: region: response field removed'),
    changes.join('\n'),
  );
  t.true(
    changes.includes('GET /customers response 200 application/json: data[].region: response field removed'),
    changes.join('\n'),
  );
});

test('an added optional response field, a new operation and a new error status are not breaking', (t) => {
  const spec = scratch();
  spec.components.schemas.Customer.properties.loyaltyTier = { type: 'string' };
  spec.paths['/customers/{id}/visits'] = { get: structuredClone(spec.paths['/customers/{id}'].get) };
  spec.paths['/customers'].get.responses['409'] = structuredClone(spec.paths['/customers'].post.responses['409']);
  t.deepEqual(whatChanged(spec), []);
});

test('a new value of a response enum is allowed (clients tolerate it, as 1.13.0 did for empties movement types)', (t) => {
  const spec = scratch();
  spec.components.schemas.Customer.properties.status.enum.push('dormant');
  // The enum is shared with requests only through CustomerFields, which is left as it was.
  t.deepEqual(whatChanged(spec), []);
});

test('a removed operation is breaking', (t) => {
  const spec = scratch();
  delete spec.paths['/routes/{id}/outlets'].put;
  t.deepEqual(whatChanged(spec), ['PUT /routes/{id}/outlets: operation removed']);
});

test('a removed parameter and a parameter that became required are breaking', (t) => {
  const spec = scratch();
  const parameters = spec.paths['/customers'].get.parameters as Json[];
  spec.paths['/customers'].get.parameters = parameters.filter((p) => p.name !== 'region');
  spec.components.parameters.UpdatedSince = { ...spec.components.parameters.UpdatedSince, required: true };
  const changes = whatChanged(spec);
  t.true(changes.includes('GET /customers query parameter region: parameter removed'), changes.join('\n'));
  t.true(
    changes.some((c) => c.endsWith('query parameter updatedSince: parameter became required')),
    changes.join('\n'),
  );
});

test('a new required request field is breaking; a new optional one is not', (t) => {
  const spec = scratch();
  const create = spec.components.schemas.CustomerCreate.allOf[1];
  create.required = [...create.required, 'region'];
  t.true(whatChanged(spec).includes('POST /customers request application/json: region: request field became required'));

  const optional = scratch();
  optional.components.schemas.CustomerFields.properties.loyaltyTier = { type: 'string' };
  t.deepEqual(whatChanged(optional), []);
});

test('a narrowed request type, enum, length or range is breaking', (t) => {
  const spec = scratch();
  const fields = spec.components.schemas.CustomerFields.properties;
  fields.channel.enum = fields.channel.enum.filter((value: string) => value !== 'kiosk');
  fields.name.maxLength = 100;
  fields.priceGroup.type = 'string';
  fields.paymentTermsDays.maximum = 90;
  const changes = whatChanged(spec).filter((c) => c.startsWith('POST /customers request'));
  t.true(
    changes.includes('POST /customers request application/json: channel: narrowed enum: no longer accepts kiosk'),
    changes.join('\n'),
  );
  t.true(
    changes.includes('POST /customers request application/json: name: narrowed range: maxLength 200 -> 100'),
    changes.join('\n'),
  );
  t.true(
    changes.includes('POST /customers request application/json: priceGroup: narrowed type: no longer accepts null'),
    changes.join('\n'),
  );
  t.true(
    changes.includes('POST /customers request application/json: paymentTermsDays: narrowed range: maximum 365 -> 90'),
    changes.join('\n'),
  );
});

test('a changed status code is breaking', (t) => {
  const spec = scratch();
  const responses = spec.paths['/customers'].post.responses;
  responses['200'] = responses['201'];
  delete responses['201'];
  const changes = whatChanged(spec);
  t.true(
    changes.includes('POST /customers response 201: status code no longer returned (changed status code)'),
    changes.join('\n'),
  );
  t.true(
    changes.includes('POST /customers response 200: new success status code (clients expect the documented ones)'),
    changes.join('\n'),
  );
});

test('a response field that may now be null is breaking', (t) => {
  const spec = scratch();
  spec.components.schemas.Customer.properties.name.type = ['string', 'null'];
  t.true(
    whatChanged(spec).includes(
      'GET /customers/{id} response 200 application/json: name: widened type: may now be null',
    ),
  );
});

const run = promisify(execFile);

async function checkBreaking(current: Json, base?: string): Promise<{ code: number; output: string }> {
  const dir = mkdtempSync(join(tmpdir(), 'erp-breaking-'));
  const file = join(dir, 'openapi.json');
  writeFileSync(file, JSON.stringify(current));
  try {
    const { stdout } = await run(process.execPath, [
      '--import',
      'tsx',
      'scripts/release/check-breaking.ts',
      '--current',
      file,
      ...(base ? ['--base', base] : []),
    ]);
    return { code: 0, output: stdout };
  } catch (error) {
    const failure = error as { code: number; stdout: string; stderr: string };
    return { code: failure.code, output: failure.stdout + failure.stderr };
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}

test('npm run check:breaking fails on a scratch spec with a removed response field and passes on an added optional one', async (t) => {
  const removed = scratch();
  delete removed.components.schemas.Product.properties.name;
  const refused = await checkBreaking(removed, FIXTURE_FILE);
  t.is(refused.code, 1, refused.output);
  t.regex(refused.output, /GET \/products\/\{id\} response 200 application\/json: name: response field removed/);

  const added = scratch();
  added.components.schemas.Product.properties.shelfLifeDays = { type: 'integer' };
  const accepted = await checkBreaking(added, FIXTURE_FILE);
  t.is(accepted.code, 0, accepted.output);
  t.regex(accepted.output, /^No breaking change against /);

  // The working spec: its accepted narrowings (whatever the repository accepts today: none right after a release)
  // are listed with their changelog line, and nothing else breaks.
  const working = await checkBreaking(apiDocument as Json);
  t.is(working.code, 0, working.output);
  const acceptedNow = readAcceptedChanges(root).changes;
  if (acceptedNow.length === 0) t.regex(working.output, /^No breaking change against/);
  else {
    t.regex(working.output, /accepted in spec\/releases\/accepted-changes\.yaml/);
    for (const entry of acceptedNow)
      t.true(working.output.includes(`${entry.what}  [${entry.changelog}]`), `${entry.what}\n${working.output}`);
    t.regex(working.output, /No other breaking change against/);
  }

  // An accepted narrowing does not cover another one next to it.
  const more = structuredClone(apiDocument as Json);
  more.components.schemas.CustomerFields.properties.name.maxLength = 150;
  const refusedToo = await checkBreaking(more);
  t.is(refusedToo.code, 1, refusedToo.output);
  // Refused: exactly the new narrowing, wherever a request takes a customer's name (how many operations do depends
  // on the release compared with), and nothing the accepted list covers.
  const refusedBlock =
    /(?:^|\n)(\d+) breaking change\(s\) against [^\n]*; within \/api\/v1 [^\n]*\n((?:  [^\n]*\n)+)/.exec(
      refusedToo.output,
    );
  t.truthy(refusedBlock, refusedToo.output);
  const refusedLines = refusedBlock![2]!.trimEnd().split('\n');
  t.is(refusedLines.length, Number(refusedBlock![1]));
  t.true(
    refusedLines.includes('  POST /customers request application/json: name: narrowed range: maxLength 200 -> 150'),
    refusedToo.output,
  );
  t.true(
    refusedLines.every(
      (line) =>
        line.endsWith(' request application/json: name: narrowed range: maxLength 200 -> 150') ||
        line.endsWith(' request application/merge-patch+json: name: narrowed range: maxLength 200 -> 150'),
    ),
    refusedToo.output,
  );
  t.is(JSON.parse(readFileSync(join(root, released.file), 'utf8')).info.version, released.version);
});

test('nullability and alternatives written with oneOf are compared by type, not by position', (t) => {
  const nullable = scratch();
  nullable.components.schemas.Customer.properties.name = { oneOf: [{ type: 'string' }, { type: 'null' }] };
  t.true(
    whatChanged(nullable).includes(
      'GET /customers/{id} response 200 application/json: name: widened type: may now be null',
    ),
  );

  const eitherType = scratch();
  eitherType.components.schemas.Customer.properties.paymentTermsDays = {
    anyOf: [{ type: 'integer' }, { type: 'string' }],
  };
  t.true(
    whatChanged(eitherType).includes(
      'GET /customers/{id} response 200 application/json: paymentTermsDays: widened type: may now be string',
    ),
  );

  const narrowedInBranch = scratch();
  narrowedInBranch.components.schemas.CustomerFields.properties.name = { oneOf: [{ type: 'string', maxLength: 10 }] };
  t.true(
    whatChanged(narrowedInBranch).includes(
      'POST /customers request application/json: name: narrowed range: maxLength 200 -> 10',
    ),
  );

  const reordered = scratch();
  for (const schema of [reordered.components.schemas.Customer, reordered.components.schemas.CustomerFields]) {
    schema.properties.creditLimit.oneOf.reverse();
    schema.properties.address.oneOf.reverse();
  }
  t.deepEqual(whatChanged(reordered), [], 'the same alternatives in another order');

  const droppedNull = scratch();
  droppedNull.components.schemas.CustomerFields.properties.creditLimit = { $ref: '#/components/schemas/Money' };
  t.true(
    whatChanged(droppedNull).includes(
      'POST /customers request application/json: creditLimit: narrowed type: no longer accepts null',
    ),
  );
});

test('a oneOf of several object schemas is compared branch to branch by $ref: the working DMS documents against themselves change nothing; a field removed from one kind is found in that kind', (t) => {
  const current = apiDocument as unknown as Json;
  t.deepEqual(
    findBreakingChanges(current, structuredClone(current))
      .filter((c) => c.where.includes('/dms/'))
      .map((c) => `${c.where}: ${c.what}`),
    [],
  );
  const changed = structuredClone(current);
  delete changed.components.schemas.DmsProductDocument.allOf[1].properties.body.properties.brand;
  changed.components.schemas.DmsProductDocument.allOf[1].properties.body.additionalProperties = false;
  const found = findBreakingChanges(current, changed)
    .map((c) => `${c.where}: ${c.what}`)
    .filter((c) => c.includes('/dms/'));
  t.true(
    found.some((c) => c.endsWith('body.brand: request field removed')),
    found.join('\n'),
  );
  t.false(
    found.some((c) => c.includes('narrowed to a constant')),
    'no branch is compared with another kind',
  );
});

test('a public operation that now needs a key, a removed response header, a changed response format and moved servers are breaking', (t) => {
  const spec = scratch();
  delete spec.paths['/health'].get.security;
  spec.security = [{ bearerAuth: [] }];
  delete spec.paths['/customers/{id}'].get.responses['200'].headers['X-Request-Id'];
  spec.components.schemas.Timestamp = { ...spec.components.schemas.Timestamp, format: 'date' };
  spec.servers = spec.servers.map((server: Json) => ({
    ...server,
    url: String(server.url).replace('/api/v1', '/api/v2'),
  }));
  const changes = whatChanged(spec);
  t.true(changes.includes('GET /health: now requires an API key'), changes.join('\n'));
  t.true(
    changes.includes('GET /customers/{id} response 200 header X-Request-Id: response header removed'),
    changes.join('\n'),
  );
  t.true(
    changes.some((c) =>
      c.startsWith('GET /customers/{id} response 200 application/json: updatedAt: changed format: date-time -> date'),
    ),
    changes.join('\n'),
  );
  t.true(changes.includes('servers: base path /api/v1 no longer served'), changes.join('\n'));
});

test('a query parameter renamed by case is a removed parameter; a header parameter is not', (t) => {
  const spec = scratch();
  spec.components.parameters.UpdatedSince = { ...spec.components.parameters.UpdatedSince, name: 'updatedsince' };
  spec.components.parameters.RequestId = { ...spec.components.parameters.RequestId, name: 'x-request-id' };
  const changes = whatChanged(spec);
  t.true(changes.includes('GET /customers query parameter updatedSince: parameter removed'), changes.join('\n'));
  t.false(
    changes.some((c) => /header parameter X-Request-Id/i.test(c)),
    changes.join('\n'),
  );
});

test('a response enum that loses or renames a value is breaking (GET /me said sandbox/production where 1.13.0 declared test/live); one that only gains a value is not', (t) => {
  const renamed = scratch();
  renamed.components.schemas.KeyIntrospection.properties.environment.enum = ['sandbox', 'production'];
  t.true(
    whatChanged(renamed).includes(
      'GET /me response 200 application/json: environment: enum value no longer returned: test, live',
    ),
    whatChanged(renamed).join('\n'),
  );

  const lost = scratch();
  lost.components.schemas.Customer.properties.status.enum =
    lost.components.schemas.Customer.properties.status.enum.filter((value: string) => value !== 'blocked');
  t.true(
    whatChanged(lost).includes(
      'GET /customers/{id} response 200 application/json: status: enum value no longer returned: blocked',
    ),
    whatChanged(lost).join('\n'),
  );

  const gained = scratch();
  gained.components.schemas.KeyIntrospection.properties.environment.enum.push('staging');
  t.deepEqual(whatChanged(gained), []);
});

test("a tightened pattern in an allOf member is breaking even when another member has a pattern of its own (a DMS document kind's number from 6 to 8 digits beside the envelope's general form)", (t) => {
  const current = apiDocument as unknown as Json;
  const tightened = structuredClone(current);
  const kind = tightened.components.schemas.DmsVanReplenishmentDocument.allOf[1].properties.documentNumber;
  t.is(kind.pattern, '^VR[0-9]{6}$', 'the document kind this test changes');
  kind.pattern = '^VR[0-9]{8}$';
  const found = findBreakingChanges(current, tightened).map((c) => `${c.where}: ${c.what}`);
  t.true(
    found.includes(
      'POST /dms/{system}/documents request application/json: documents[].documentNumber: changed pattern: ^[A-Za-z0-9_./-]+$ and ^VR[0-9]{6}$ -> ^VR[0-9]{8}$',
    ),
    found.join('\n'),
  );

  // The same in a response: a pattern clients parse by changed under a shared one.
  const response = scratch();
  response.components.schemas.Customer.properties.outletCode = {
    allOf: [
      { type: 'string', maxLength: 64, pattern: '^[A-Z0-9]+$' },
      response.components.schemas.Customer.properties.outletCode,
    ],
  };
  const responseChanged = structuredClone(response);
  responseChanged.components.schemas.Customer.properties.outletCode.allOf[1] = {
    ...responseChanged.components.schemas.Customer.properties.outletCode.allOf[1],
    pattern: '^UG[0-9]{9}$',
  };
  const responseFound = findBreakingChanges(response, responseChanged).map((c) => `${c.where}: ${c.what}`);
  t.true(
    responseFound.some((c) =>
      c.startsWith('GET /customers/{id} response 200 application/json: outletCode: changed pattern:'),
    ),
    responseFound.join('\n'),
  );
});

test('npm run check:breaking refuses a renamed response enum value and a tightened pattern against the last release', async (t) => {
  const spec = structuredClone(apiDocument as Json);
  spec.components.schemas.KeyIntrospection.properties.environment.enum = ['sandbox', 'production'];
  spec.components.schemas.CustomerFields.properties.outletCode.pattern = '^UG[0-9]{8}$';
  const refused = await checkBreaking(spec);
  t.is(refused.code, 1, refused.output);
  t.regex(
    refused.output,
    /GET \/me response 200 application\/json: environment: enum value no longer returned: test, live/,
  );
  t.regex(
    refused.output,
    /POST \/customers request application\/json: outletCode: changed pattern: \^UG\[0-9\]\{7\}\$ -> \^UG\[0-9\]\{8\}\$/,
  );
});
