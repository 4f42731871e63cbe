import test from 'ava';
import { apiDocument } from '../../server/platform/spec.js';

type Json = Record<string, any>;
const METHODS = ['get', 'put', 'post', 'patch', 'delete'];
const operations = Object.entries(apiDocument.paths).flatMap(([path, item]) =>
  METHODS.filter((m) => (item as Json)[m]).map((method) => ({
    path,
    method,
    operation: (item as Json)[method] as Json,
  })),
);

function resolve(node: Json): Json {
  return typeof node.$ref === 'string'
    ? node.$ref
        .slice(2)
        .split('/')
        .reduce((n: Json, s: string) => n[s.replace(/~1/g, '/').replace(/~0/g, '~')], apiDocument as Json)
    : node;
}

test('the description is OpenAPI 3.1 with an X.Y.Z version within v1 and every server under /api/v1', (t) => {
  const doc = apiDocument as Json;
  t.is(doc.openapi, '3.1.0');
  t.regex(doc.info.version, /^1\.\d+\.\d+$/);
  t.true(doc.servers.length >= 2);
  t.true(doc.servers.every((s: Json) => s.url.endsWith('/api/v1')));
});

test('every operation has an id, a summary, a description and an example for each response body', (t) => {
  t.true(operations.length > 0);
  for (const { path, method, operation } of operations) {
    const where = `${method.toUpperCase()} ${path}`;
    t.truthy(operation.operationId, where);
    t.truthy(operation.summary, where);
    t.truthy(operation.description, where);
    for (const [status, response] of Object.entries(operation.responses as Json)) {
      for (const [type, media] of Object.entries((resolve(response as Json).content ?? {}) as Json)) {
        t.true(
          Boolean((media as Json).examples || (media as Json).example),
          `${where} ${status} ${type} has an example`,
        );
      }
    }
  }
});

test('every operation declares its security (a key with scopes, or explicitly none) and a 500 response', (t) => {
  for (const { path, method, operation } of operations) {
    const where = `${method.toUpperCase()} ${path}`;
    t.true(Array.isArray(operation.security), `${where} declares security`);
    t.truthy(operation.responses['500'], `${where} declares 500`);
    if (operation.security.length > 0) t.truthy(operation.responses['401'], `${where} needs a key and so declares 401`);
  }
});

test('every response declares the X-Request-Id header', (t) => {
  for (const { path, method, operation } of operations) {
    for (const [status, response] of Object.entries(operation.responses as Json)) {
      t.truthy(resolve(response as Json).headers?.['X-Request-Id'], `${method.toUpperCase()} ${path} ${status}`);
    }
  }
});

test("every scope an operation requires is defined in the spec's scope catalogue, named <resource>:<action>", (t) => {
  const catalogue = (apiDocument as Json).components.securitySchemes.bearerAuth['x-scopes'] as Record<string, string>;
  for (const name of Object.keys(catalogue)) t.regex(name, /^[a-z]+(-[a-z]+)*(:[a-z]+)+$/);
  for (const { path, method, operation } of operations) {
    for (const requirement of operation.security as Json[]) {
      for (const scope of (requirement.bearerAuth ?? []) as string[])
        t.true(scope in catalogue, `${method.toUpperCase()} ${path} needs ${scope}`);
    }
  }
});
