// Errors teach: each field problem names the field in its sentence, a near miss gets "did you mean", and an
// unknown field far from any known one lists the fields that are allowed there.
import test from 'ava';
import { createCaller } from '../support/callers.js';
import { useSharedService } from '../support/service.js';

const api = useSharedService(test);
const pool = () => api().pool;

test('a misspelt body field is unknown_field with "did you mean" the field it is closest to', async (t) => {
  const caller = await createCaller(pool());
  const res = await api().request('POST', '/customers', {
    headers: { ...caller.auth, 'Idempotency-Key': 'typo-1' },
    json: { outletCode: 'UG1234567', nmae: 'Shop', channel: 'retail' },
  });
  t.is(res.status, 400);
  t.is(res.body.code, 'unknown_field');
  t.deepEqual(
    res.body.errors.find((e: { field: string }) => e.field === '/nmae'),
    { field: '/nmae', code: 'unknown_field', message: 'is not a field here; did you mean `name`?' },
  );
  t.deepEqual(
    res.body.errors.find((e: { field: string }) => e.field === '/name'),
    { field: '/name', code: 'required_field', message: 'is required' },
  );
  t.is(
    res.body.detail,
    'The request has fields this operation does not accept: `/nmae` is not a field here; did you mean `name`?',
  );
});

test('a misspelt nested field is matched against the fields of its own object', async (t) => {
  const caller = await createCaller(pool());
  const res = await api().request('POST', '/customers', {
    headers: { ...caller.auth, 'Idempotency-Key': 'typo-2' },
    json: { outletCode: 'UG1234568', name: 'Shop', channel: 'retail', creditLimit: { amount: '1', curency: 'UGX' } },
  });
  t.is(res.status, 400);
  t.deepEqual(
    res.body.errors.find((e: { field: string }) => e.field === '/creditLimit/curency'),
    { field: '/creditLimit/curency', code: 'unknown_field', message: 'is not a field here; did you mean `currency`?' },
  );
});

test('an unknown field far from every known one lists the fields allowed there', async (t) => {
  const caller = await createCaller(pool());
  const res = await api().request('POST', '/customers', {
    headers: { ...caller.auth, 'Idempotency-Key': 'typo-3' },
    json: {
      outletCode: 'UG1234569',
      name: 'Shop',
      channel: 'retail',
      creditLimit: { amount: '1', currency: 'UGX', zzzzzzzz: 1 },
    },
  });
  t.is(res.status, 400);
  t.deepEqual(res.body.errors, [
    {
      field: '/creditLimit/zzzzzzzz',
      code: 'unknown_field',
      message: 'is not a field here; the fields here are amount, currency',
    },
  ]);
});

test('a misspelt query parameter gets "did you mean" too', async (t) => {
  const caller = await createCaller(pool());
  const res = await api().request('GET', '/customers?limt=3', { headers: caller.auth });
  t.is(res.status, 400);
  t.deepEqual(res.body.errors, [
    { field: '/query/limt', code: 'unknown_field', message: 'is not a field here; did you mean `limit`?' },
  ]);
});

test('an invalid enum value names the field and its allowed values in the detail', async (t) => {
  const caller = await createCaller(pool());
  const res = await api().request('POST', '/customers', {
    headers: { ...caller.auth, 'Idempotency-Key': 'enum-1' },
    json: { outletCode: 'UG1234570', name: 'Shop', channel: 'retial' },
  });
  t.is(res.status, 400);
  t.is(
    res.body.detail,
    'Some fields are invalid: `/channel` must be one of: retail, wholesale, horeca, supermarket, kiosk.',
  );
});
