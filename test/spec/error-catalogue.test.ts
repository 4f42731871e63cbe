import test from 'ava';
import { ERROR_CATALOGUE } from '../../server/platform/errors/catalogue.js';
import { apiDocument } from '../../server/platform/spec.js';

type Json = Record<string, any>;
// The error responses: every shared response with a problem document (304 Not Modified has no body and is no error).
const responses = Object.fromEntries(
  Object.entries((apiDocument as Json).components.responses as Json).filter(
    ([, response]) => (response as Json).content?.['application/problem+json'],
  ),
) as Json;

function codesDeclared(): Map<number, string[]> {
  const byStatus = new Map<number, string[]>();
  for (const response of Object.values(responses)) {
    const schema = response.content['application/problem+json'].schema;
    const constraint = schema.allOf.find((part: Json) => part.properties?.code).properties;
    byStatus.set(constraint.status.const, [...constraint.code.enum].sort());
  }
  return byStatus;
}

test("the spec has one error response per status, and its codes are exactly the catalogue's codes of that status", (t) => {
  const catalogue = new Map<number, string[]>();
  for (const [code, entry] of Object.entries(ERROR_CATALOGUE))
    catalogue.set(entry.status, [...(catalogue.get(entry.status) ?? []), code].sort());
  t.deepEqual(Object.fromEntries([...codesDeclared()].sort()), Object.fromEntries([...catalogue].sort()));
});

test('every example of an error response uses a code of its status, with the matching type and status', (t) => {
  const declared = codesDeclared();
  let checked = 0;
  for (const [name, response] of Object.entries(responses)) {
    const media = response.content['application/problem+json'];
    for (const [exampleName, example] of Object.entries(media.examples as Json)) {
      const value = (example as Json).value;
      t.true(declared.get(value.status)?.includes(value.code), `${name}.${exampleName}`);
      t.is(value.type, `/api/v1/errors/${value.code}`, `${name}.${exampleName}`);
      checked += 1;
    }
  }
  t.true(checked >= Object.keys(responses).length);
});

test('every product-spec error code of the Errors table is in the catalogue with its status', (t) => {
  const productSpec: Record<number, string[]> = {
    400: [
      'invalid_field',
      'key_in_query',
      'unknown_field',
      'idempotency_key_required',
      'invalid_json',
      'required_field',
    ],
    401: ['unauthorized', 'wrong_environment'],
    403: ['api_disabled', 'insufficient_scope', 'ip_not_allowed', 'module_disabled'],
    404: ['not_found'],
    409: ['idempotency_in_progress', 'invalid_state'],
    413: ['payload_too_large'],
    415: ['unsupported_media_type'],
    422: [
      'business_rule',
      'currency_not_supported',
      'customer_not_found',
      'idempotency_key_reused',
      'invoice_not_found',
      'period_closed',
      'product_not_found',
      'no_open_trip',
      'credit_limit_exceeded',
      'field_sales_disabled',
    ],
    429: ['rate_limited'],
    500: ['server_error'],
  };
  for (const [status, codes] of Object.entries(productSpec)) {
    for (const code of codes)
      t.is((ERROR_CATALOGUE as Record<string, { status: number }>)[code]?.status, Number(status), code);
  }
});
