// The spec decides what is personal (`x-personal: true`, docs/decisions/0025-personal-fields-marked-in-the-spec.md).
// These tests walk every schema of the bundled spec, and every operation's request and response bodies, with an
// instance that carries every property (each personal one holding a sentinel), and prove the redaction leaves no
// personal value behind and keeps the rest.
import test from 'ava';
import { resolveRef } from '../../server/platform/openapi-ref.js';
import { operationIndex } from '../../server/platform/operations.js';
import { PERSONAL_MARK, personalFields } from '../../server/platform/personal-fields.js';
import { apiDocument } from '../../server/platform/spec.js';

type Json = Record<string, any>;
const doc = apiDocument as Json;
const fields = personalFields(apiDocument);

/** Every property schema the spec marks, wherever it sits (found by walking the raw document, not by the redactor). */
function markedProperties(): Map<object, string> {
  const found = new Map<object, string>();
  const walk = (node: unknown, path: string): void => {
    if (node === null || typeof node !== 'object') return;
    if (Array.isArray(node)) {
      for (const [i, item] of node.entries()) walk(item, `${path}/${i}`);
      return;
    }
    for (const [key, value] of Object.entries(node as Json)) {
      if (key === 'properties' && value && typeof value === 'object') {
        for (const [name, property] of Object.entries(value as Json))
          if ((property as Json)?.[PERSONAL_MARK] === true) found.set(property as object, `${path}/properties/${name}`);
      }
      walk(value, `${path}/${key}`);
    }
  };
  walk(doc, '#');
  return found;
}

const marked = markedProperties();
const SENTINEL = 'PERSONAL-VALUE-';
const sentinelOf = (property: object) => `${SENTINEL}${[...marked.keys()].indexOf(property)}`;

/**
 * A value of `schema` with every property of every branch (so each personal field is present wherever the schema
 * allows it), one item per array and one entry per map. A personal property holds its sentinel; the rest `kept`.
 */
function instanceOf(raw: unknown, depth = 0): unknown {
  if (raw === null || typeof raw !== 'object' || depth > 12) return 'kept';
  const schema = resolveRef(doc, raw);
  const branches = ['allOf', 'oneOf', 'anyOf'].flatMap((k) => (schema[k] ?? []) as unknown[]);
  const objects = [schema, ...branches.map((b) => resolveRef(doc, b))].filter(
    (s) => s.properties || s.additionalProperties || s.type === 'object',
  );
  if (objects.length > 0 && !schema.items) {
    const value: Json = {};
    for (const part of objects) {
      for (const [name, property] of Object.entries((part.properties ?? {}) as Json)) {
        if (marked.has(property as object)) value[name] = sentinelOf(property as object);
        else if (!(name in value) || typeof value[name] !== 'object') value[name] = instanceOf(property, depth + 1);
        else Object.assign(value[name], instanceOf(property, depth + 1));
      }
      if (part.additionalProperties && typeof part.additionalProperties === 'object')
        value.someKey = instanceOf(part.additionalProperties, depth + 1);
      for (const nested of ['allOf', 'oneOf', 'anyOf'].flatMap((k) =>
        part === schema ? [] : ((part[k] ?? []) as unknown[]),
      )) {
        const more = instanceOf(nested, depth + 1);
        if (more && typeof more === 'object' && !Array.isArray(more))
          for (const [k, v] of Object.entries(more)) if (!(k in value)) value[k] = v;
      }
    }
    return value;
  }
  if (schema.items) return [instanceOf(schema.items, depth + 1)];
  const arrayBranch = branches.map((b) => resolveRef(doc, b)).find((b) => b.items);
  return arrayBranch ? [instanceOf(arrayBranch.items, depth + 1)] : 'kept';
}

test("the spec marks the personal fields: an outlet's phone, tax ID, location and contact, a salesperson's phone, a trip's GPS fix, a photo URL, the DMS customer and salesman documents' phone and tax ID", (t) => {
  const pointers = (name: string) => fields.schema(name).pointers();
  t.deepEqual(pointers('Customer').sort(), ['/contact', '/location', '/phone', '/taxId']);
  t.deepEqual(pointers('TripLocation').sort(), ['/accuracyMeters', '/latitude', '/longitude']);
  t.deepEqual(pointers('GpsPoint').sort(), ['/latitude', '/longitude']);
  t.deepEqual(pointers('Salesperson'), ['/phone']);
  t.deepEqual(pointers('CreditNote').sort(), ['/customer/phone', '/customer/taxId']);
  t.deepEqual(pointers('CompetitorObservation'), ['/photoUrl']);
  t.deepEqual(pointers('DmsCustomerDocument').sort(), ['/body/phone', '/body/taxId']);
  t.deepEqual(pointers('DmsSalesmanDocument'), ['/body/phone']);
  t.deepEqual(
    [...fields.topLevel('CustomerFields')].sort(),
    ['contact', 'location', 'phone', 'taxId'],
    'the write check of customers reads this',
  );
});

test('a property described as personal carries x-personal, and every x-personal is a boolean true on a schema property', (t) => {
  const walk = (node: unknown, path: string): void => {
    if (node === null || typeof node !== 'object') return;
    for (const [key, value] of Object.entries(node as Json)) {
      if (key === PERSONAL_MARK)
        t.true(value === true && /\/properties\/[^/]+$/.test(path), `${path}: x-personal is true, on a property`);
      if (key === 'properties' && value && typeof value === 'object') {
        for (const [name, property] of Object.entries(value as Json)) {
          const description = String((property as Json)?.description ?? '');
          if (/^(Personal|Needs `customers:pii`)|Personal \(`customers:pii`\)/.test(description))
            t.is((property as Json)[PERSONAL_MARK], true, `${path}/properties/${name} is described as personal`);
        }
      }
      walk(value, `${path}/${key}`);
    }
  };
  walk(doc, '#');
});

test('every schema of the spec: an instance with every x-personal field keeps none of them after redaction, and keeps the other fields', (t) => {
  const reached = new Set<string>();
  for (const [name, schema] of Object.entries(doc.components.schemas as Json)) {
    const instance = instanceOf(schema);
    const before = JSON.stringify(instance);
    for (const property of marked.keys())
      if (before.includes(`"${sentinelOf(property)}"`)) reached.add(sentinelOf(property));
    const after = JSON.stringify(fields.schema(name).apply(instance));
    t.false(after.includes(SENTINEL), `${name}: ${after.match(new RegExp(`"[^"]*":"${SENTINEL}\\d+"`))?.[0] ?? ''}`);
    t.is(
      after.split('"kept"').length,
      before.split('"kept"').length,
      `${name}: nothing but personal fields is dropped`,
    );
  }
  for (const [property, path] of marked)
    t.true(reached.has(sentinelOf(property)), `${path} is reached by some schema's instance`);
  t.true(marked.size >= 20);
});

test('every operation: its request body and each response body lose every x-personal field they can carry', (t) => {
  const operations = operationIndex(apiDocument);
  let checked = 0;
  for (const [template, item] of Object.entries(doc.paths as Json)) {
    for (const method of ['get', 'put', 'post', 'patch', 'delete']) {
      const spec = (item as Json)[method] as Json | undefined;
      if (!spec) continue;
      const operation = operations.find(method, template.replace(/\{[^}]+\}/g, 'x'))!;
      const bodies: [string, unknown, (value: unknown) => unknown][] = [];
      for (const [type, media] of Object.entries((resolveRef(doc, spec.requestBody)?.content ?? {}) as Json)) {
        if (type.includes('json'))
          bodies.push([
            `${method} ${template} request`,
            (media as Json).schema,
            (v) => fields.request(operation).apply(v),
          ]);
      }
      for (const [status, response] of Object.entries((spec.responses ?? {}) as Json)) {
        for (const [type, media] of Object.entries((resolveRef(doc, response).content ?? {}) as Json)) {
          const code = status === 'default' ? 500 : Number(status.replace(/X/g, '0'));
          if (type.includes('json'))
            bodies.push([
              `${method} ${template} ${status}`,
              (media as Json).schema,
              (v) => fields.response(operation, code).apply(v),
            ]);
        }
      }
      for (const [what, schema, redact] of bodies) {
        checked += 1;
        t.false(JSON.stringify(redact(instanceOf(schema))).includes(SENTINEL), what);
      }
    }
  }
  t.true(checked > 100);
});

test("a oneOf is unioned: a DMS push drops a customer document's phone and tax ID and keeps a product document whole", (t) => {
  const push = {
    documents: [
      {
        documentType: 'customer',
        documentNumber: 'UG0000001',
        body: { name: 'Shop', phone: '+256700000001', taxId: '1000000001' },
      },
      { documentType: 'product', documentNumber: '100101', body: { name: 'Soda', packSize: 24 } },
    ],
  };
  t.deepEqual(fields.schema('DmsIngestRequest').apply(push), {
    documents: [
      { documentType: 'customer', documentNumber: 'UG0000001', body: { name: 'Shop' } },
      { documentType: 'product', documentNumber: '100101', body: { name: 'Soda', packSize: 24 } },
    ],
  });
  t.deepEqual(push.documents[0]!.body.phone, '+256700000001', 'the value given is not changed');
});
