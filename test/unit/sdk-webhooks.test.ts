// The SDK's webhook verifier, pure (no service, no database): the signature rules of the spec (Events > Signature)
// on deliveries signed here, one broken part per case, each refusal checked for its reason. The empty-secret
// rule: a secret that is empty, blank or not a string is refused before the body is looked at, since anyone can
// sign with ''.
import test, { type ExecutionContext } from 'ava';
import { createHmac } from 'node:crypto';
import {
  DEFAULT_TOLERANCE_SECONDS,
  SIGNATURE_HEADER,
  verifyWebhook,
  WebhookVerificationError,
  type WebhookVerificationFailure,
} from '../../client-sdk/src/webhooks.js';

const SECRET = 'whsec_test_secret_for_unit_tests_0123456789abc';
const OLD_SECRET = 'whsec_the_previous_secret_during_a_rotation_0';
const T = 1_750_000_000; // the delivery's t
const NOW = new Date(T * 1000);

const envelope = (overrides: Record<string, unknown> = {}) => ({
  id: 'evt_01J0000000000000000000000A',
  type: 'customer.created',
  createdAt: '2025-06-15T15:06:40.000Z',
  apiVersion: 'v1',
  organizationId: 'org_01J0000000000000000000000B',
  data: { object: { id: 'cus_01J0000000000000000000000C', name: 'Hook Shop' } },
  ...overrides,
});
const BODY = JSON.stringify(envelope());
const hmac = (secret: string, body: string, t = T) => createHmac('sha256', secret).update(`${t}.${body}`).digest('hex');
const header = (secret = SECRET, body = BODY, t = T) => `t=${t},v1=${hmac(secret, body, t)}`;

function refusal(
  t: ExecutionContext,
  reason: WebhookVerificationFailure,
  fn: () => unknown,
  message: RegExp,
  what: string,
): void {
  const error = t.throws(fn, { instanceOf: WebhookVerificationError }, what);
  t.is(error?.reason, reason, what);
  t.is(error?.name, 'WebhookVerificationError', what);
  t.regex(error?.message ?? '', message, what);
}

test("the header is Service-Signature and the default tolerance the spec's 5 minutes", (t) => {
  t.is(SIGNATURE_HEADER, 'Service-Signature');
  t.is(DEFAULT_TOLERANCE_SECONDS, 300);
});

test('a delivery signed with the secret verifies, as a string, as bytes and as a Buffer, and the envelope is returned', (t) => {
  t.deepEqual(verifyWebhook(BODY, header(), SECRET, { now: NOW }), envelope());
  t.deepEqual(verifyWebhook(new TextEncoder().encode(BODY), header(), SECRET, { now: NOW }), envelope());
  t.deepEqual(verifyWebhook(Buffer.from(BODY), header(), [SECRET], { now: NOW }), envelope());
  const accented = JSON.stringify(envelope({ data: { object: { id: 'cus_1', name: 'Duka la Mama Ñandú' } } }));
  t.is(
    (verifyWebhook(accented, header(SECRET, accented), SECRET, { now: NOW }).data.object as { name: string }).name,
    'Duka la Mama Ñandú',
    'signed over the UTF-8 bytes',
  );
});

test("empty signing secret: '', a blank one, or one missing from a rotation pair is a TypeError before the body is read, and a body forged with '' never verifies", (t) => {
  const forged = `t=${T},v1=${hmac('', BODY)}`;
  const cases: [string, unknown][] = [
    ['an empty secret', ''],
    ['a blank secret', '  \t\n'],
    ['an empty list', []],
    ['an empty secret first in a rotation pair', ['', SECRET]],
    ['an empty secret second in a rotation pair', [SECRET, '']],
    ['a blank secret in a rotation pair', [SECRET, ' ']],
    ['an unset secret (undefined) in a rotation pair', [SECRET, undefined]],
    ['undefined', undefined],
    ['null', null],
    ['a number', 42],
  ];
  for (const [what, secrets] of cases) {
    // The body is not even bytes: the secret is judged first.
    const error = t.throws(
      () => verifyWebhook(undefined as never, forged, secrets as string, { now: NOW }),
      { instanceOf: TypeError },
      what,
    );
    t.regex(
      error?.message ?? '',
      /^verifyWebhook('s signing secret \[\d\] is (empty or blank|.+, not a string): is its environment variable set\?| needs at least one signing secret)/,
      what,
    );
    t.false(error instanceof WebhookVerificationError, what);
    // Signed with that very secret (as anyone could, knowing it is empty or blank): still refused.
    const forgedWithIt = typeof secrets === 'string' ? `t=${T},v1=${hmac(secrets, BODY)}` : forged;
    t.throws(
      () => verifyWebhook(BODY, forgedWithIt, secrets as string, { now: NOW }),
      { instanceOf: TypeError },
      `${what}: the forged body`,
    );
  }
  t.is(
    t.throws(() => verifyWebhook(BODY, forged, [SECRET, ''], { now: NOW }))?.message,
    "verifyWebhook's signing secret [1] is empty or blank: is its environment variable set? A signature keyed with an empty secret proves nothing.",
  );
  t.is(
    t.throws(() => verifyWebhook(BODY, forged, [SECRET, undefined as never], { now: NOW }))?.message,
    "verifyWebhook's signing secret [1] is undefined, not a string: is its environment variable set? A signature keyed with an empty secret proves nothing.",
  );
  t.is(
    t.throws(() => verifyWebhook(BODY, forged, [], { now: NOW }))?.message,
    'verifyWebhook needs at least one signing secret (whsec_...).',
  );
  t.is(
    t.throws(() => verifyWebhook(BODY, undefined, '', { now: NOW }))?.constructor,
    TypeError,
    'before the header, too',
  );
});

test('during a rotation either secret verifies, and any v1 of the header may match', (t) => {
  t.deepEqual(
    verifyWebhook(BODY, header(OLD_SECRET), [SECRET, OLD_SECRET], { now: NOW }),
    envelope(),
    'the old secret, second',
  );
  t.deepEqual(
    verifyWebhook(BODY, header(SECRET), [SECRET, OLD_SECRET], { now: NOW }),
    envelope(),
    'the new secret, first',
  );
  const both = `t=${T},v1=${hmac(OLD_SECRET, BODY)},v1=${hmac(SECRET, BODY)}`;
  t.deepEqual(verifyWebhook(BODY, both, SECRET, { now: NOW }), envelope(), 'the second v1 matches');
  t.deepEqual(verifyWebhook(BODY, both, OLD_SECRET, { now: NOW }), envelope(), 'the first v1 matches');
});

test('a changed body, another secret or a signature over another t is no_matching_signature', (t) => {
  const message = /^No signature matches the body with the given secret\(s\)\.$/;
  refusal(
    t,
    'no_matching_signature',
    () => verifyWebhook(`${BODY} `, header(), SECRET, { now: NOW }),
    message,
    'a trailing space',
  );
  refusal(
    t,
    'no_matching_signature',
    () => verifyWebhook(BODY, header(OLD_SECRET), SECRET, { now: NOW }),
    message,
    'another secret',
  );
  refusal(
    t,
    'no_matching_signature',
    () => verifyWebhook(BODY, `t=${T + 1},v1=${hmac(SECRET, BODY)}`, SECRET, { now: NOW }),
    message,
    'the t changed',
  );
  refusal(
    t,
    'no_matching_signature',
    () =>
      verifyWebhook(BODY, `t=${T},v1=${createHmac('sha256', SECRET).update(BODY).digest('hex')}`, SECRET, { now: NOW }),
    message,
    'signed without the t',
  );
});

test('the timestamp tolerance: 300 s either way is accepted (by whole seconds), 301 s is timestamp_out_of_tolerance; toleranceSeconds narrows it', (t) => {
  const at = (seconds: number) => ({ now: new Date((T + seconds) * 1000) });
  t.notThrows(() => verifyWebhook(BODY, header(), SECRET, at(300.999)), '300.999 s later is 300 whole seconds');
  t.notThrows(() => verifyWebhook(BODY, header(), SECRET, at(-300)), '300 s earlier (a clock behind)');
  refusal(
    t,
    'timestamp_out_of_tolerance',
    () => verifyWebhook(BODY, header(), SECRET, at(301)),
    /^The signature's time \(t=1750000000\) is more than 300 s from now \(1750000301\)\.$/,
    'replayed 301 s later',
  );
  refusal(
    t,
    'timestamp_out_of_tolerance',
    () => verifyWebhook(BODY, header(), SECRET, at(-301)),
    /more than 300 s from now \(1749999699\)/,
    'signed 301 s in the future',
  );
  t.notThrows(() => verifyWebhook(BODY, header(), SECRET, { ...at(60), toleranceSeconds: 60 }));
  refusal(
    t,
    'timestamp_out_of_tolerance',
    () => verifyWebhook(BODY, header(), SECRET, { ...at(61), toleranceSeconds: 60 }),
    /more than 60 s/,
    'a tighter tolerance',
  );
  t.notThrows(
    () => verifyWebhook(BODY, header(), SECRET, { now: NOW, toleranceSeconds: 0 }),
    'tolerance 0 at the same second',
  );
  refusal(
    t,
    'timestamp_out_of_tolerance',
    () => verifyWebhook(BODY, header(), SECRET, { ...at(1), toleranceSeconds: 0 }),
    /more than 0 s/,
    'tolerance 0 a second later',
  );
  t.notThrows(
    () => verifyWebhook(BODY, header(SECRET, BODY, Math.floor(Date.now() / 1000)), SECRET),
    'without now: the clock',
  );
  refusal(
    t,
    'timestamp_out_of_tolerance',
    () => verifyWebhook(BODY, header(), SECRET),
    /more than 300 s/,
    'without now, a t of 2025 is old',
  );
});

test('a tolerance that is not a finite number >= 0, or an invalid now, is a TypeError', (t) => {
  for (const toleranceSeconds of [Number.NaN, Number.POSITIVE_INFINITY, -1]) {
    t.is(
      t.throws(() => verifyWebhook(BODY, header(), SECRET, { now: NOW, toleranceSeconds }), { instanceOf: TypeError })
        ?.message,
      `toleranceSeconds must be a finite number >= 0 (got ${toleranceSeconds}).`,
    );
  }
  t.is(
    t.throws(() => verifyWebhook(BODY, header(), SECRET, { now: new Date('not a date') }), { instanceOf: TypeError })
      ?.message,
    'now must be a valid Date.',
  );
});

test('no header, or an empty or blank one, is missing_header', (t) => {
  for (const missing of [undefined, null, '', '  ']) {
    refusal(
      t,
      'missing_header',
      () => verifyWebhook(BODY, missing, SECRET, { now: NOW }),
      /^The Service-Signature header is missing\.$/,
      JSON.stringify(missing) ?? 'undefined',
    );
  }
});

test('a header without exactly one t of 1 to 12 digits, or without a v1 of 64 lowercase hex digits, is malformed_header', (t) => {
  const v1 = `v1=${hmac(SECRET, BODY)}`;
  const noT = /^The Service-Signature header needs exactly one t=<unix seconds>\.$/;
  const noV1 = /^The Service-Signature header has no v1=<64 hex digits> signature\.$/;
  const cases: [string, RegExp, string][] = [
    [v1, noT, 'no t'],
    [`t=soon,${v1}`, noT, 'a t that is not a number'],
    [`t=${T},t=${T},${v1}`, noT, 'two t'],
    [`t=,${v1}`, noT, 'an empty t'],
    [`t=-${T},${v1}`, noT, 'a negative t'],
    [`t=${T}x,${v1}`, noT, 'a t with a trailing letter'],
    [`t=x${T},${v1}`, noT, 'a t with a leading letter'],
    [`t=1${'0'.repeat(12)},${v1}`, noT, 'a t of 13 digits'],
    [`tt,${v1}`, noT, 'a part "tt" without = is no t'],
    [`t=${T}`, noV1, 'no v1'],
    [`t=${T},v1=xyz`, noV1, 'a v1 that is not hex'],
    [`t=${T},${v1.toUpperCase().replace('V1', 'v1')}`, noV1, 'uppercase hex'],
    [`t=${T},${v1}0`, noV1, '65 hex digits'],
    [`t=${T},v1=0${v1.slice(3)}`, noV1, '65 hex digits (one in front)'],
    [`t=${T},${v1.slice(0, -1)}`, noV1, '63 hex digits'],
    [`t=${T},v0=${hmac(SECRET, BODY)}`, noV1, 'only another scheme (v0)'],
    [`t=${T},v1 ${hmac(SECRET, BODY)}`, noV1, 'a v1 without ='],
  ];
  for (const [value, message, what] of cases)
    refusal(t, 'malformed_header', () => verifyWebhook(BODY, value, SECRET, { now: NOW }), message, what);
});

test("the header's parts may carry spaces, unknown parts and other schemes beside the v1 that matches", (t) => {
  const v1 = hmac(SECRET, BODY);
  t.deepEqual(
    verifyWebhook(BODY, ` t = ${T} , v1 = ${v1} `, SECRET, { now: NOW }),
    envelope(),
    'spaces around keys and values',
  );
  t.deepEqual(
    verifyWebhook(BODY, `t=${T},v0=abc,v2=${'f'.repeat(64)},v1=${v1},tz,x=1`, SECRET, { now: NOW }),
    envelope(),
    'v0, v2 and unknown parts ignored',
  );
  t.deepEqual(verifyWebhook(BODY, `v1=${v1},t=${T}`, SECRET, { now: NOW }), envelope(), 'in any order');
});

test('each required field of a webhook event: a body lacking one (or with it of the wrong kind) is malformed_payload', (t) => {
  const notEnvelope =
    /^The body is not an event envelope \(id evt_\.\.\., type, createdAt, apiVersion, organizationId, data\.object\)\.$/;
  const without = (field: string) => {
    const e: Record<string, unknown> = envelope();
    delete e[field];
    return e;
  };
  const cases: [string, unknown][] = [
    ['without id', without('id')],
    ['id not evt_', envelope({ id: 'cus_01J0000000000000000000000C' })],
    ['id evt_ in the middle', envelope({ id: 'x_evt_1' })],
    ['id a number', envelope({ id: 7 })],
    ['without type', without('type')],
    ['type a number', envelope({ type: 1 })],
    ['without createdAt', without('createdAt')],
    ['without apiVersion', without('apiVersion')],
    ['without organizationId', without('organizationId')],
    ['organizationId null', envelope({ organizationId: null })],
    ['without data', without('data')],
    ['data null', envelope({ data: null })],
    ['data a string', envelope({ data: 'object' })],
    ['without data.object', envelope({ data: {} })],
    ['data.object null', envelope({ data: { object: null } })],
    ['data.object a string', envelope({ data: { object: 'cus_1' } })],
    ['null', null],
    ['an array', [envelope()]],
    ['a string', 'evt_1'],
  ];
  for (const [what, value] of cases) {
    const body = JSON.stringify(value);
    refusal(
      t,
      'malformed_payload',
      () => verifyWebhook(body, header(SECRET, body), SECRET, { now: NOW }),
      notEnvelope,
      what,
    );
  }
  refusal(
    t,
    'malformed_payload',
    () => verifyWebhook('{"id":', header(SECRET, '{"id":'), SECRET, { now: NOW }),
    /^The body is not JSON\.$/,
    'not JSON',
  );
  const bytes = new TextEncoder().encode('not json');
  refusal(
    t,
    'malformed_payload',
    () => verifyWebhook(bytes, header(SECRET, 'not json'), SECRET, { now: NOW }),
    /^The body is not JSON\.$/,
    'not JSON, as bytes',
  );
  t.deepEqual(
    verifyWebhook(
      JSON.stringify(envelope({ data: { object: [] } })),
      header(SECRET, JSON.stringify(envelope({ data: { object: [] } }))),
      SECRET,
      { now: NOW },
    ).data,
    { object: [] },
    'data.object an object of any shape',
  );
});

test('the signature is checked before the time and the body: a forged old or malformed body is no_matching_signature', (t) => {
  refusal(
    t,
    'no_matching_signature',
    () => verifyWebhook('not json', header(), SECRET, { now: new Date((T + 9_999) * 1000) }),
    /^No signature/,
    'forged, old and not JSON',
  );
  refusal(
    t,
    'timestamp_out_of_tolerance',
    () => verifyWebhook('not json', header(SECRET, 'not json'), SECRET, { now: new Date((T + 9_999) * 1000) }),
    /more than 300 s/,
    'signed, old and not JSON',
  );
});
