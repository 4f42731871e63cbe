// The response contract's validators compiled ahead (scripts/contract/precompiled-validators.ts, what `npm test` gives
// every test's client) judge as the ones compiled on first use: the same verdict and the same errors, path, keyword
// and message, on every example body of the description and on a broken copy of each; and a contract built on them
// still reports a body its schema refuses.
import test from 'ava';
import { mkdirSync, rmSync } from 'node:fs';
import { join } from 'node:path';
import type { ValidateFunction } from 'ajv/dist/2020.js';
import {
  loadPrecompiledValidators,
  writePrecompiledValidators,
} from '../../scripts/contract/precompiled-validators.js';
import { bodySchemaPointers, responseAjv, responseContract } from '../../scripts/contract/response-contract.js';
import { apiDocument } from '../../server/platform/spec.js';

type Json = Record<string, any>;
const document = apiDocument as unknown as Json;
// Inside the repository: the written module requires Ajv's runtime and ajv-formats from its own location.
const dir = join(process.cwd(), 'node_modules', '.cache', `precompiled-validators-${process.pid}`);
mkdirSync(dir, { recursive: true });
test.after.always(() => rmSync(dir, { recursive: true, force: true }));
const file = join(dir, 'validators.cjs');
writePrecompiledValidators(document, file);
const precompiled = loadPrecompiledValidators(file);

const resolve = (pointer: string): Json | undefined =>
  pointer
    .split('/')
    .slice(1)
    .map((s) => s.replace(/~1/g, '/').replace(/~0/g, '~'))
    .reduce<Json | undefined>((node, segment) => node?.[segment], document);

/** A copy that breaks the schema at every level it can: wrong types, an unknown field, a short array. */
function broken(value: unknown, depth = 0): unknown {
  if (Array.isArray(value)) return value.length > 0 ? [broken(value[0], depth + 1), 42] : [null];
  if (value !== null && typeof value === 'object') {
    const copy: Json = { unexpectedField: 1 };
    for (const [key, child] of Object.entries(value)) copy[key] = depth < 3 ? broken(child, depth + 1) : child;
    return copy;
  }
  if (typeof value === 'string') return value.length % 2 === 1 ? 12 : `not-${value}`;
  if (typeof value === 'number') return 'x';
  return value;
}

const errorsOf = (validate: ValidateFunction) =>
  (validate.errors ?? []).map((error) => [error.instancePath, error.keyword, error.message]);

test('every JSON body schema of the description has its validator, and each judges every example as one compiled on first use', (t) => {
  const pointers = bodySchemaPointers(document);
  t.true(pointers.length > 50, `${pointers.length} body schemas`);
  t.deepEqual([...precompiled.keys()].sort(), [...pointers].sort());
  const ajv = responseAjv();
  ajv.addSchema(document, 'api', undefined, false);
  let valid = 0;
  let invalid = 0;
  for (const pointer of pointers) {
    const onFirstUse = ajv.compile({ $ref: `api#${pointer}` });
    const ahead = precompiled.get(pointer)!;
    const media = resolve(pointer.replace(/\/schema$/, ''));
    const examples = Object.values((media?.examples ?? {}) as Json).map((example) => example.value);
    for (const body of [...examples, ...examples.map((example) => broken(example)), {}, [], null, 'text']) {
      const verdict = onFirstUse(body);
      t.is(ahead(body), verdict, pointer);
      t.deepEqual(errorsOf(ahead), errorsOf(onFirstUse), pointer);
      if (verdict) valid += 1;
      else invalid += 1;
    }
  }
  t.log(`${pointers.length} schemas, ${valid} bodies valid and ${invalid} refused by both`);
  t.true(valid > 20 && invalid > 200);
});

test('a contract on the precompiled validators reports a body its schema refuses', (t) => {
  const contract = responseContract(document, precompiled);
  const answer = (body: unknown) => ({
    method: 'GET',
    path: '/health',
    status: 200,
    headers: new Headers({ 'content-type': 'application/json', 'x-request-id': 'req_1' }),
    bodyText: JSON.stringify(body),
  });
  const health = resolve('/paths/~1health/get/responses/200/content/application~1json/examples') as Json;
  // Only the body is looked at here (the answer carries no RateLimit-* headers).
  const bodyViolations = (body: unknown) => contract.check(answer(body)).filter((v) => v.includes(': body'));
  t.deepEqual(bodyViolations((Object.values(health)[0] as Json).value), []);
  const violations = bodyViolations({ status: 7 });
  t.true(violations.length > 0);
  t.regex(violations.join('\n'), /^GET \/health -> 200: body\/status must be/m);
});
