// Issue 18: every input is bounded by the spec, and the validator enforces the bound. For each kind of bound
// (string maxLength, pattern, array maxItems, integer minimum and maximum) a value at the limit is accepted
// and one past it is 400 invalid_field whose errors[] names the field and the limit. The limits are read
// from the spec, so the test follows the spec rather than repeating its numbers.
import test from 'ava';
import { apiDocument } from '../../server/platform/spec.js';
import { createCaller, type TestCaller } from '../support/callers.js';
import { useSharedService, type ApiResponse } from '../support/service.js';

type Json = Record<string, any>;
const api = useSharedService(test);
const pool = () => api().pool;
const spec = apiDocument as Json;
const schemas = spec.components.schemas as Json;
const parameters = spec.components.parameters as Json;

let sequence = 0;
const outletCode = () => `UG${String(3_000_000 + ++sequence).padStart(7, '0')}`;
const createCustomer = (caller: TestCaller, fields: Record<string, unknown>) =>
  api().request('POST', '/customers', {
    headers: { ...caller.auth, 'Idempotency-Key': `bounds-${++sequence}` },
    json: { outletCode: outletCode(), name: 'Bounded shop', channel: 'retail', ...fields },
  });

/** The one field problem of a 400, as `code field message`. */
function refusal(res: ApiResponse): string[] {
  return (res.body?.errors ?? []).map((e: Json) => `${e.code} ${e.field} ${e.message}`);
}

test('a name of maxLength characters is accepted; one more is 400 invalid_field naming /name and the limit', async (t) => {
  const max: number = schemas.CustomerFields.properties.name.maxLength;
  t.is(max, 200, 'the bound the spec states');
  const caller = await createCaller(pool());
  const atLimit = await createCustomer(caller, { name: 'n'.repeat(max) });
  t.is(atLimit.status, 201, atLimit.text);
  t.is(atLimit.body.name.length, max);

  const past = await createCustomer(caller, { name: 'n'.repeat(max + 1) });
  t.is(past.status, 400);
  t.is(past.body.code, 'invalid_field');
  t.deepEqual(refusal(past), [`invalid_field /name must NOT have more than ${max} characters`]);
});

test('a query parameter past its maxLength is 400 naming /query/<name>; at the limit it is accepted', async (t) => {
  const max: number = parameters.UpdatedSince.schema.maxLength;
  const caller = await createCaller(pool());
  const prefix = '2026-11-22T08:00:00.';
  const atLimit = `${prefix}${'0'.repeat(max - prefix.length - 1)}Z`;
  t.is(atLimit.length, max);
  const accepted = await api().request('GET', `/customers?updatedSince=${atLimit}`, { headers: caller.auth });
  t.is(accepted.status, 200, accepted.text);

  const past = await api().request('GET', `/customers?updatedSince=${prefix}${'0'.repeat(max - prefix.length)}Z`, {
    headers: caller.auth,
  });
  t.is(past.status, 400);
  t.is(past.body.code, 'invalid_field');
  t.deepEqual(refusal(past), [`invalid_field /query/updatedSince must NOT have more than ${max} characters`]);
});

test('a value off its pattern is 400 naming the field and the pattern; one digit too many also names the length; the exact shape is accepted', async (t) => {
  const { pattern, maxLength } = schemas.CustomerFields.properties.outletCode;
  t.deepEqual([pattern, maxLength], ['^UG[0-9]{7}$', 9]);
  const caller = await createCaller(pool());
  const accepted = await createCustomer(caller, { outletCode: 'UG7654321' });
  t.is(accepted.status, 201, accepted.text);

  const offShape = await createCustomer(caller, { outletCode: 'UG765432X' });
  t.is(offShape.status, 400);
  t.is(offShape.body.code, 'invalid_field');
  t.deepEqual(refusal(offShape), [`invalid_field /outletCode must match pattern "${pattern}"`]);

  const past = await createCustomer(caller, { outletCode: 'UG76543210' });
  t.is(past.status, 400);
  t.deepEqual(refusal(past).sort(), [
    `invalid_field /outletCode must NOT have more than ${maxLength} characters`,
    `invalid_field /outletCode must match pattern "${pattern}"`,
  ]);
});

test('an integer at its minimum and maximum is accepted; one past either is 400 naming the field and the bound', async (t) => {
  const { minimum, maximum } = schemas.CustomerFields.properties.paymentTermsDays;
  t.deepEqual([minimum, maximum], [0, 365]);
  const caller = await createCaller(pool());
  for (const value of [minimum, maximum]) {
    const res = await createCustomer(caller, { paymentTermsDays: value });
    t.is(res.status, 201, res.text);
    t.is(res.body.paymentTermsDays, value);
  }
  const below = await createCustomer(caller, { paymentTermsDays: minimum - 1 });
  t.is(below.status, 400);
  t.deepEqual(refusal(below), [`invalid_field /paymentTermsDays must be >= ${minimum}`]);
  const above = await createCustomer(caller, { paymentTermsDays: maximum + 1 });
  t.is(above.status, 400);
  t.deepEqual(refusal(above), [`invalid_field /paymentTermsDays must be <= ${maximum}`]);

  const { minimum: least, maximum: most } = parameters.Limit.schema;
  t.is((await api().request('GET', `/customers?limit=${most}`, { headers: caller.auth })).status, 200);
  for (const [value, message] of [
    [most + 1, `must be <= ${most}`],
    [least - 1, `must be >= ${least}`],
  ] as const) {
    const res = await api().request('GET', `/customers?limit=${value}`, { headers: caller.auth });
    t.is(res.status, 400);
    t.deepEqual(refusal(res), [`invalid_field /query/limit ${message}`]);
  }
});

test('an array of maxItems items is accepted; one more is 400 invalid_field naming the array and the limit', async (t) => {
  t.timeout(60_000);
  const max: number = schemas.PricesUpsert.properties.items.maxItems;
  t.is(max, 500);
  const caller = await createCaller(pool());
  const code = String(400_000 + ++sequence);
  const product = await api().request('PUT', `/products/by-code/dms/${code}`, {
    headers: caller.auth,
    json: { productCode: code, name: 'Bounded beer', packSize: 24, sellingUnits: ['case'] },
  });
  t.is(product.status, 201, product.text);
  const items = (count: number) =>
    Array.from({ length: count }, (_, i) => ({
      productCode: code,
      priceGroup: `GROUP-${i}`,
      unit: 'case',
      unitPrice: { amount: '1000', currency: 'UGX' },
      validFrom: '2026-12-01',
    }));
  const atLimit = await api().request('PUT', '/prices', { headers: caller.auth, json: { items: items(max) } });
  t.is(atLimit.status, 200, atLimit.text.slice(0, 500));
  t.is(atLimit.body.data.length, max);

  const past = await api().request('PUT', '/prices', { headers: caller.auth, json: { items: items(max + 1) } });
  t.is(past.status, 400);
  t.is(past.body.code, 'invalid_field');
  t.deepEqual(refusal(past), [`invalid_field /items must NOT have more than ${max} items`]);
});

test('every string, array and integer a request can carry has a bound in the spec', (t) => {
  // The OWASP lint checks this over the whole document; here the request side alone, with no exception but the
  // caller's X-Request-Id (replaced, never refused) and what an enum, a const or a fixed format already bounds.
  const unbounded: string[] = [];
  const seen = new Set<unknown>();
  const resolve = (node: Json): Json => {
    let current = node;
    while (typeof current?.$ref === 'string')
      current = current.$ref
        .slice(2)
        .split('/')
        .map((s: string) => s.replace(/~1/g, '/').replace(/~0/g, '~'))
        .reduce((at: Json, key: string) => at[key], spec);
    return current;
  };
  const walk = (raw: Json | undefined, where: string): void => {
    const node = raw && resolve(raw);
    if (!node || typeof node !== 'object' || seen.has(node)) return;
    seen.add(node);
    const types = new Set([node.type].flat());
    const fixed = 'enum' in node || 'const' in node;
    if (types.has('string') && !fixed && node.maxLength === undefined)
      unbounded.push(`${where}: string without maxLength`);
    if (types.has('array') && node.maxItems === undefined) unbounded.push(`${where}: array without maxItems`);
    if (types.has('integer') && !fixed && (node.minimum === undefined || node.maximum === undefined))
      unbounded.push(`${where}: integer without minimum and maximum`);
    for (const [name, property] of Object.entries((node.properties ?? {}) as Json)) walk(property, `${where}.${name}`);
    if (node.items) walk(node.items, `${where}[]`);
    if (node.additionalProperties && typeof node.additionalProperties === 'object')
      walk(node.additionalProperties, `${where}.*`);
    for (const key of ['allOf', 'oneOf', 'anyOf'] as const)
      for (const member of (node[key] ?? []) as Json[]) walk(member, where);
  };
  for (const [path, item] of Object.entries(spec.paths as Json)) {
    for (const [method, operation] of Object.entries(item as Json)) {
      for (const raw of (operation.parameters ?? []) as Json[]) {
        const parameter = resolve(raw);
        if (parameter.in === 'header' && parameter.name === 'X-Request-Id') continue;
        walk(parameter.schema, `${method.toUpperCase()} ${path} ${parameter.in} ${parameter.name}`);
      }
      for (const [mediaType, media] of Object.entries((resolve(operation.requestBody ?? {}).content ?? {}) as Json)) {
        walk((media as Json).schema, `${method.toUpperCase()} ${path} ${mediaType}`);
      }
    }
  }
  t.deepEqual(unbounded, []);
});
