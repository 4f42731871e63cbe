import test from 'ava';
import { responseContract } from '../../scripts/contract/response-contract.js';
import { fixtureDocument, fixtureRouter, FIXTURE_SECRET } from '../fixtures/fixture-operations.js';
import { useTestService } from '../support/service.js';

const document = fixtureDocument();
// The one service of the suite that checks its own answers (VALIDATE_RESPONSES, on outside production): the last test
// proves that a violation becomes a 500.
const api = useTestService(test, 'validation', {
  env: { VALIDATE_RESPONSES: 'true' },
  document,
  extraRouters: [fixtureRouter()],
  contract: responseContract(document as never),
});

const valid = () => ({
  customer: { code: 'UG0001234' },
  channel: 'retail',
  issueDate: '2026-11-22',
  lines: [{ quantity: 2, unitPrice: { amount: '12500', currency: 'UGX' } }],
});

const post = (json: unknown) => api().request('POST', '/test-fixtures/order-drafts', { json });
const fields = (body: { errors?: { field: string; code: string }[] }) =>
  (body.errors ?? []).map((e) => `${e.code} ${e.field}`).sort();

test('a valid body passes validation untouched', async (t) => {
  const res = await post(valid());
  t.is(res.status, 201);
  t.deepEqual(res.body, valid());
});

test('malformed JSON is 400 invalid_json', async (t) => {
  const res = await api().request('POST', '/test-fixtures/order-drafts', {
    headers: { 'content-type': 'application/json' },
    body: '{"customer": {"code": "UG1",}',
  });
  t.is(res.status, 400);
  t.is(res.body.code, 'invalid_json');
  t.regex(res.headers.get('content-type') ?? '', /^application\/problem\+json/);
});

test('an undeclared property anywhere in the body is 400 unknown_field naming it by JSON pointer', async (t) => {
  const body = { ...valid(), colour: 'red', customer: { code: 'UG0001234', nickname: 'Mama' } };
  body.lines[0] = { ...body.lines[0]!, discount: '1' } as never;
  const res = await post(body);
  t.is(res.status, 400);
  t.is(res.body.code, 'unknown_field');
  t.deepEqual(fields(res.body), [
    'unknown_field /colour',
    'unknown_field /customer/nickname',
    'unknown_field /lines/0/discount',
  ]);
});

test('a missing property is 400 required_field naming it', async (t) => {
  const res = await post({ customer: {} });
  t.is(res.status, 400);
  t.is(res.body.code, 'required_field');
  t.deepEqual(fields(res.body), ['required_field /customer/code', 'required_field /lines']);
});

test('a wrong type, format, enum or length is 400 invalid_field naming each field', async (t) => {
  const res = await post({
    customer: { code: 'x'.repeat(65) },
    channel: 'online',
    issueDate: '22/11/2026',
    lines: [{ quantity: '2', unitPrice: { amount: 12500, currency: 'ugx' } }],
  });
  t.is(res.status, 400);
  t.is(res.body.code, 'invalid_field');
  const named = new Set(res.body.errors.map((e: { field: string }) => e.field));
  for (const field of [
    '/customer/code',
    '/channel',
    '/issueDate',
    '/lines/0/quantity',
    '/lines/0/unitPrice/amount',
    '/lines/0/unitPrice/currency',
  ]) {
    t.true(named.has(field), `${field} is named`);
  }
  t.true(
    res.body.errors.every((e: { code: string; message: string }) => e.code === 'invalid_field' && e.message.length > 0),
  );
});

test('a money amount sent as a JSON number is refused: amounts are decimal strings', async (t) => {
  const body = valid();
  (body.lines[0]!.unitPrice as { amount: unknown }).amount = 12.5;
  const res = await post(body);
  t.is(res.status, 400);
  t.deepEqual(fields(res.body), ['invalid_field /lines/0/unitPrice/amount']);
});

test('when unknown, missing and invalid fields come together, all are listed and the code is unknown_field', async (t) => {
  const res = await post({ customer: { code: 5 }, extra: true });
  t.is(res.status, 400);
  t.is(res.body.code, 'unknown_field');
  t.deepEqual(fields(res.body), ['invalid_field /customer/code', 'required_field /lines', 'unknown_field /extra']);
});

test('a body in a content type the operation does not accept is 415 unsupported_media_type', async (t) => {
  for (const contentType of ['text/plain', 'application/xml', 'application/x-www-form-urlencoded']) {
    const res = await api().request('POST', '/test-fixtures/order-drafts', {
      headers: { 'content-type': contentType },
      body: 'customer=UG1',
    });
    t.is(res.status, 415, contentType);
    t.is(res.body.code, 'unsupported_media_type');
  }
});

test('a JSON body over 1 MB is 413 payload_too_large', async (t) => {
  const body = { ...valid(), customer: { code: 'x'.repeat(1024 * 1024) } };
  const res = await post(body);
  t.is(res.status, 413);
  t.is(res.body.code, 'payload_too_large');
});

test('an unexpected failure is 500 server_error with no internals in the body; the log has them with the request id', async (t) => {
  const res = await api().request('GET', '/test-fixtures/failure', { headers: { 'X-Request-Id': 'failure-trace-1' } });
  t.is(res.status, 500);
  t.is(res.body.code, 'server_error');
  t.false(res.text.includes('hunter2'));
  t.false(res.text.includes('Error'));
  const logged = api().logs.find((line) => line.requestId === 'failure-trace-1');
  t.truthy(logged, 'the failure is logged with the request id');
  t.regex(JSON.stringify(logged), /connection to .* refused/);
  t.regex(JSON.stringify(logged), new RegExp(FIXTURE_SECRET.replace(/[/.:]/g, '.')));
});

test('outside production the service checks its own answers: one its description refuses becomes 500 server_error, and the log names the violation', async (t) => {
  const res = await api().request('GET', '/test-fixtures/broken-answer', {
    headers: { 'X-Request-Id': 'broken-answer-1' },
  });
  t.is(res.status, 500);
  t.is(res.body.code, 'server_error');
  t.false(res.text.includes('a while'), 'the refused body is not sent');
  const logged = api().logs.find((line) => line.requestId === 'broken-answer-1');
  t.truthy(logged, 'the violation is logged with the request id');
  t.regex(JSON.stringify(logged), /waitedMs/);
});
