// Personal fields (`x-personal` in the spec, docs/decisions/0025-personal-fields-marked-in-the-spec.md) through the
// running service: a DMS customer document may carry phone and tax ID with `dms:ingest` alone, and they stay out
// of the API log and of reads without customers:pii; an idempotent replay to a key narrowed since leaves them out;
// a webhook object never carries them, whatever actor read it.
import test from 'ava';
import { operatorActor } from '../../server/platform/access/actor.js';
import { webhookObjects } from '../../server/composition/modules.js';
import { addConnection } from '../../server/modules/dms/connections.js';
import { actingOrganization, getOrganization } from '../../server/platform/access/organizations.js';
import { kyselyOver } from '../../server/platform/database/database.js';
import { inTransaction } from '../../server/platform/database/transaction.js';
import { webhookObject } from '../../server/platform/webhooks/objects.js';
import { ALL_SCOPES, createCaller } from '../support/callers.js';
import { useTestService } from '../support/service.js';

const api = useTestService(test, 'personal_fields');
const pool = () => api().service.database.pool;
const db = () => kyselyOver(pool());

async function logOf(organizationId: string) {
  await api().service.apiLog.flush();
  const { rows } = await pool().query(
    'SELECT method, path, status, request_body, response_body FROM api_log WHERE organization_id = $1 ORDER BY time, id',
    [organizationId],
  );
  return rows as {
    method: string;
    path: string;
    status: number;
    request_body: string | null;
    response_body: string | null;
  }[];
}

const PHONE = '+256 701 555123';
const TAX_ID = 'TIN-7776665554';

test("dms:ingest alone sets a customer's phone and tax ID from the DMS (the DMS is the master of outlets); the API log of the push keeps neither, and only a customers:pii key reads them back", async (t) => {
  const ingest = await createCaller(pool(), { scopes: ['dms:ingest'] });
  const org = ingest.organizationId;
  await inTransaction(db(), (tx) =>
    addConnection(tx, org, 'canonical', { distributorCode: 'DIST001', synchronous: true }),
  );
  const document = {
    documentType: 'customer',
    distributorCode: 'DIST001',
    documentNumber: 'UG0000777',
    documentDate: '2026-11-25',
    status: 'active',
    salesmanCode: 'SM01',
    body: { name: 'Kisenyi Corner Shop', channel: 'retail', phone: PHONE, taxId: TAX_ID, region: 'Central' },
  };
  const pushed = await api().request('POST', '/dms/canonical/documents', {
    headers: { ...ingest.auth, 'Idempotency-Key': 'dms-pii-1' },
    json: { documents: [document] },
  });
  t.is(pushed.status, 200, JSON.stringify(pushed.body));
  t.is(pushed.body.flags[0].state, 'posted', JSON.stringify(pushed.body.flags[0]));
  t.false(pushed.text.includes(PHONE) || pushed.text.includes(TAX_ID), 'the flags carry no personal field');

  const [row] = (await logOf(org)).filter((r) => r.path === '/api/v1/dms/canonical/documents');
  t.truthy(row?.request_body);
  for (const text of [row!.request_body!, row!.response_body!])
    t.false(text.includes(PHONE) || text.includes(TAX_ID), text);
  t.like(JSON.parse(row!.request_body!), {
    documents: [{ documentNumber: 'UG0000777', body: { name: 'Kisenyi Corner Shop', region: 'Central' } }],
  });

  const reader = await createCaller(pool(), { organizationId: org, scopes: ['customers:read'] });
  const withoutPii = await api().request('GET', '/customers?limit=10', { headers: reader.auth });
  t.is(withoutPii.status, 200);
  t.like(withoutPii.body.data[0], { outletCode: 'UG0000777', name: 'Kisenyi Corner Shop' });
  t.false('phone' in withoutPii.body.data[0] || 'taxId' in withoutPii.body.data[0]);
  const piiReader = await createCaller(pool(), { organizationId: org, scopes: ['customers:read', 'customers:pii'] });
  const withPii = await api().request('GET', '/customers?limit=10', { headers: piiReader.auth });
  t.like(withPii.body.data[0], { phone: PHONE, taxId: TAX_ID });
  const flags = await api().request('GET', '/dms/canonical/flags', {
    headers: (await createCaller(pool(), { organizationId: org, scopes: ['dms:flags:read'] })).auth,
  });
  t.is(flags.status, 200);
  t.false(flags.text.includes(PHONE) || flags.text.includes(TAX_ID), 'no read returns the stored document');
});

test('an idempotent replay to a key that no longer holds customers:pii leaves out the personal fields it stored; with the scope it is byte for byte', async (t) => {
  const caller = await createCaller(pool());
  const body = {
    outletCode: 'UG0000888',
    name: 'Replay Shop',
    channel: 'retail',
    phone: PHONE,
    taxId: TAX_ID,
    contact: { name: 'Grace Nakato', email: 'grace@example.com' },
  };
  const send = () =>
    api().request('POST', '/customers', { headers: { ...caller.auth, 'Idempotency-Key': 'replay-pii' }, json: body });
  const first = await send();
  t.is(first.status, 201);
  t.is(first.body.phone, PHONE);
  const again = await send();
  t.is(again.text, first.text, 'the same key with the scope: byte for byte');

  await pool().query('UPDATE api_keys SET scopes = $1, updated_at = now() WHERE id = $2', [
    ALL_SCOPES.filter((s) => s !== 'customers:pii'),
    caller.keyId,
  ]);
  let replay = await send();
  for (let i = 0; i < 50 && replay.body.phone !== undefined; i += 1) {
    // the process hears of the change by NOTIFY
    await new Promise((resolve) => setTimeout(resolve, 100));
    replay = await send();
  }
  t.is(replay.status, 201);
  t.is(replay.headers.get('idempotent-replayed'), 'true');
  t.is(replay.body.id, first.body.id);
  for (const field of ['phone', 'taxId', 'contact', 'location']) t.false(field in replay.body, field);
  t.false(replay.text.includes('Grace Nakato'));
});

test('a webhook object never carries a personal field, even when the record was read by an actor that may see them', async (t) => {
  const caller = await createCaller(pool());
  const created = await api().request('POST', '/customers', {
    headers: { ...caller.auth, 'Idempotency-Key': 'hook-pii' },
    json: { outletCode: 'UG0000999', name: 'Hook Shop', channel: 'retail', phone: PHONE, taxId: TAX_ID },
  });
  t.is(created.status, 201);
  const operator = operatorActor(
    actingOrganization(await getOrganization(db(), caller.organizationId)),
    'personal fields test',
  );
  const object = await webhookObject(webhookObjects['customer.created']!, db(), operator, created.body.id, new Date());
  t.like(object, { id: created.body.id, name: 'Hook Shop' });
  t.false('phone' in object || 'taxId' in object);
});
