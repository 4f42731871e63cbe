// `admin connector set | show | fail | clear` and `admin postings [list] | retry`, run as an operator runs them (one
// test per group: CLI processes are costly). The posting rules themselves are proved in test/domain/postings.test.ts
// and, against the simulators, in test/service/postings.test.ts.
import test from 'ava';
import { sql } from 'kysely';
import { migrateSimulators } from '../../server/connectors/simulators/database.js';
import { listFailures } from '../../server/connectors/simulators/failures.js';
import { customers } from '../../server/modules/customers/service.js';
import { locations } from '../../server/modules/locations/service.js';
import { products } from '../../server/modules/products/service.js';
import { postStockAdjustment } from '../../server/modules/stock/documents.js';
import { createInvoice } from '../../server/modules/invoices/documents.js';
import { runCli, runCliJson } from '../support/cli.js';
import { domainWorld, type DomainWorld } from '../support/domain.js';

let world: DomainWorld;
test.before(async () => {
  world = await domainWorld('connector_cli');
});
test.after.always(async () => {
  await world?.close();
});
const env = () => ({ DATABASE_URL: world.database.url, WEBHOOK_SECRET_KEY: 'cd'.repeat(32) });

test("connector set creates a connection with its token sealed, show never prints it, fail adds failures only behind a simulator connection and only of the system's modes, clear removes them", async (t) => {
  const { organization } = await world.organization();
  const org = organization.id;
  const set = await runCliJson(
    [
      'connector',
      'set',
      '--org',
      org,
      '--system',
      'accounting',
      '--base-url',
      'simulator',
      '--account',
      '9130350',
      '--token',
      'secret-token-1',
    ],
    env(),
  );
  t.like(set, {
    system: 'accounting',
    provider: 'quickbooks',
    enabled: true,
    baseUrl: 'simulator',
    account: '9130350',
    hasCredentials: true,
  });
  const stored = await world.db
    .selectFrom('connector_connections')
    .select('credentials_ciphertext')
    .where('organization_id', '=', org)
    .executeTakeFirstOrThrow();
  t.truthy(stored.credentials_ciphertext);
  t.false(stored.credentials_ciphertext!.includes('secret-token-1'), 'the token is sealed at rest');
  const shown = await runCli(['connector', 'show', '--org', org, '--json'], env());
  t.is(shown.code, 0, shown.stderr);
  t.false(shown.stdout.includes('secret-token-1'));
  t.false(shown.stdout.includes(stored.credentials_ciphertext!));

  const badMode = await runCli(
    ['connector', 'fail', '--org', org, '--system', 'accounting', '--mode', 'unknown_error'],
    env(),
  );
  t.is(badMode.code, 1);
  t.regex(badMode.stderr, /not a mode of the accounting simulator; it has outage, rate_limit/);
  const noFiscal = await runCli(['connector', 'fail', '--org', org, '--system', 'fiscal', '--mode', 'outage'], env());
  t.is(noFiscal.code, 1);
  t.regex(noFiscal.stderr, /has no fiscal connection/);

  t.like(
    await runCliJson(
      ['connector', 'fail', '--org', org, '--system', 'accounting', '--mode', 'outage', '--for', '2'],
      env(),
    ),
    { system: 'accounting', account: '9130350' },
  );
  t.deepEqual(await listFailures(world.db, 'accounting', '9130350'), [{ mode: 'outage', remaining: 2, delayMs: 0 }]);
  t.deepEqual(await runCliJson(['connector', 'clear', '--org', org, '--system', 'accounting'], env()), { cleared: 1 });

  await runCliJson(
    ['connector', 'set', '--org', org, '--system', 'accounting', '--base-url', 'https://quickbooks.api.intuit.com'],
    env(),
  );
  const real = await runCli(['connector', 'fail', '--org', org, '--system', 'accounting', '--mode', 'outage'], env());
  t.is(real.code, 1);
  t.regex(real.stderr, /not to the simulators/);
  const badUrl = await runCli(
    ['connector', 'set', '--org', org, '--system', 'fiscal', '--base-url', 'ftp://x', '--account', '1000'],
    env(),
  );
  t.is(badUrl.code, 1);
  t.regex(badUrl.stderr, /--base-url ftp:\/\/x is refused: connector URLs must use https/);
});

test('connector set refuses a base URL the webhook destination rules refuse (inside addresses, plain http, loopback without WEBHOOK_ALLOW_LOOPBACK), and the simulators where they do not run, changing nothing', async (t) => {
  const { organization } = await world.organization();
  const org = organization.id;
  await runCliJson(
    ['connector', 'set', '--org', org, '--system', 'accounting', '--base-url', 'simulator', '--account', '9130352'],
    env(),
  );
  const refusals: [string, RegExp, Record<string, string>?][] = [
    [
      'https://10.0.0.5',
      /--base-url https:\/\/10\.0\.0\.5 is refused: 10\.0\.0\.5 resolves to 10\.0\.0\.5, a private address, which connectors may not reach/,
    ],
    ['https://169.254.169.254/latest', /169\.254\.169\.254, a linkLocal address, which connectors may not reach/],
    ['https://[::ffff:192.168.1.1]', /carries the IPv4 address 192\.168\.1\.1, a private address/],
    ['http://quickbooks.example.com', /connector URLs must use https/],
    ['https://user:pw@quickbooks.example.com', /connector URLs must not carry credentials/],
    [
      'https://127.0.0.1:9/quickbooks',
      /127\.0\.0\.1, a loopback address, which connectors may not reach.*WEBHOOK_ALLOW_LOOPBACK=true/,
    ],
    [
      'http://127.0.0.1:9/quickbooks',
      /connector URLs must use https.*WEBHOOK_ALLOW_LOOPBACK=true/,
      { WEBHOOK_ALLOW_LOOPBACK: 'false' },
    ],
    ['simulator', /names the simulators, which run only in the sandbox/, { SIMULATORS: 'false' }],
  ];
  for (const [url, reason, extra] of refusals) {
    const run = await runCli(['connector', 'set', '--org', org, '--system', 'accounting', '--base-url', url], {
      ...env(),
      ...extra,
    });
    t.is(run.code, 1, `${url}: ${run.stderr}`);
    t.regex(run.stderr, reason, url);
  }
  const fiscal = await runCli(
    [
      'connector',
      'set',
      '--org',
      org,
      '--system',
      'fiscal',
      '--base-url',
      'https://192.168.0.10/efrisws',
      '--account',
      '1000',
      '--device-no',
      'D1',
    ],
    env(),
  );
  t.is(fiscal.code, 1);
  t.regex(fiscal.stderr, /192\.168\.0\.10, a private address, which connectors may not reach/);
  const shown = await runCliJson(['connector', 'show', '--org', org], env());
  t.deepEqual(
    shown.connections.map((c: { system: string; baseUrl: string }) => [c.system, c.baseUrl]),
    [['accounting', 'simulator']],
    'nothing was stored',
  );
  // Loopback over http is for tests and local trials, with WEBHOOK_ALLOW_LOOPBACK as for webhooks.
  t.like(
    await runCliJson(
      ['connector', 'set', '--org', org, '--system', 'accounting', '--base-url', 'http://127.0.0.1:9/quickbooks'],
      { ...env(), WEBHOOK_ALLOW_LOOPBACK: 'true' },
    ),
    { baseUrl: 'http://127.0.0.1:9/quickbooks' },
  );
});

test("postings lists an organisation's postings by status; retry queues a failed one again (block back to pending) and is exit 1 when nothing failed", async (t) => {
  const { organization, operator } = await world.organization();
  const org = organization.id;
  await runCliJson(
    ['connector', 'set', '--org', org, '--system', 'accounting', '--base-url', 'simulator', '--account', '9130351'],
    env(),
  );
  const sold = await world.post(async (tx) => {
    const soda = await products.create(tx, operator, {
      productCode: '300001',
      name: 'Soda 300ml',
      packSize: 24,
      sellingUnits: ['case'],
      taxRate: 18,
    });
    const warehouse = await locations.create(tx, operator, { code: 'M01', name: 'Main' });
    const customer = await customers.create(tx, operator, {
      outletCode: 'UG0000001',
      name: 'Mama Shop',
      channel: 'retail',
    });
    await postStockAdjustment(tx, operator, {
      reasonCode: 'OPENING',
      lines: [{ productId: soda.id, locationId: warehouse.id, unit: 'case', quantity: 5, unitCost: '20000' }],
    });
    return createInvoice(tx, operator, {
      customerId: customer.id,
      locationId: warehouse.id,
      issueDate: '2026-11-24',
      currency: 'UGX',
      lines: [{ productId: soda.id, unit: 'case', quantity: 1, unitPrice: '25000' }],
    });
  });
  const pending = await runCliJson<{ postings: { documentNumber: string; status: string; system: string }[] }>(
    ['postings', '--org', org],
    env(),
  );
  t.like(pending.postings, [{ documentNumber: sold.number, system: 'accounting', status: 'pending' }]);
  const nothing = await runCli(['postings', 'retry', sold.id, '--org', org], env());
  t.is(nothing.code, 1);
  t.regex(nothing.stderr, /Nothing to retry/);

  // As the posting job leaves a refusal.
  await world.db
    .updateTable('external_postings')
    .set({
      status: 'failed',
      attempts: 1,
      last_attempt_at: new Date(),
      reason: 'The accounting system refused it (6000): no',
    })
    .where('document_id', '=', sold.id)
    .execute();
  await world.db
    .updateTable('invoices')
    .set({ posting_status: 'failed', posting_reason: 'The accounting system refused it (6000): no' })
    .where('id', '=', sold.id)
    .execute();
  const failed = await runCliJson<{ postings: { documentId: string; reason: string }[] }>(
    ['postings', '--org', org, '--status', 'failed'],
    env(),
  );
  t.like(failed.postings, [{ documentId: sold.id, reason: 'The accounting system refused it (6000): no' }]);
  t.deepEqual(
    (await runCliJson<{ postings: unknown[] }>(['postings', '--org', org, '--status', 'posted'], env())).postings,
    [],
  );

  const retried = await runCliJson<{ retried: { status: string; attempts: number }[] }>(
    ['postings', 'retry', sold.id, '--org', org],
    env(),
  );
  t.like(retried.retried, [{ status: 'pending', attempts: 0 }]);
  t.like(
    await world.db
      .selectFrom('invoices')
      .select(['posting_status', 'posting_reason'])
      .where('id', '=', sold.id)
      .executeTakeFirstOrThrow(),
    { posting_status: 'pending', posting_reason: null },
  );
  const badStatus = await runCli(['postings', '--org', org, '--status', 'lost'], env());
  t.is(badStatus.code, 1);
});

test('simulators shows what the QuickBooks and EFRIS simulators hold for the organisation, with the failures waiting; a connection elsewhere is exit 1', async (t) => {
  const { organization } = await world.organization();
  const org = organization.id;
  await runCliJson(
    ['connector', 'set', '--org', org, '--system', 'accounting', '--base-url', 'simulator', '--account', '9130352'],
    env(),
  );
  await runCliJson(
    [
      'connector',
      'set',
      '--org',
      org,
      '--system',
      'fiscal',
      '--base-url',
      'simulator',
      '--account',
      '1000023516',
      '--device-no',
      'TCS1',
    ],
    env(),
  );
  await migrateSimulators(world.db);
  // What the simulators keep after a posting each (their own behaviour is proved in test/connectors/).
  await sql`INSERT INTO simulators.qbo_realms (realm_id, book_close_date) VALUES ('9130352', '2026-10-31')`.execute(
    world.db,
  );
  await sql`INSERT INTO simulators.qbo_entities (realm_id, id, entity, doc_number, txn_date, total, balance, body) VALUES ('9130352', 101, 'Invoice', 'INV-000001', '2026-11-24', 29500, 29500, '{}')`.execute(
    world.db,
  );
  await sql`INSERT INTO simulators.efris_documents (tin, invoice_id, fdn, antifake_code, kind, reference_no, currency, buyer_name, gross_amount, tax_amount, lines)
    VALUES ('1000023516', '3220001', '322000150001', 'AF1', 'invoice', 'INV-000001', 'UGX', 'Mama Shop, Kisenyi', 29500, 4500, '[]')`.execute(
    world.db,
  );
  await runCliJson(['connector', 'fail', '--org', org, '--system', 'fiscal', '--mode', 'outage', '--for', '1'], env());

  const held = await runCliJson<{
    connections: unknown[];
    records: Record<string, unknown>[];
    failures: unknown[];
    bookCloseDate: string;
  }>(['simulators', '--org', org], env());
  t.deepEqual(
    (held.connections as { system: string; account: string }[]).map((c) => `${c.system} ${c.account}`).sort(),
    ['accounting 9130352', 'fiscal 1000023516'],
  );
  t.like(held.records, [
    {
      system: 'accounting',
      kind: 'Invoice',
      id: '101',
      number: 'INV-000001',
      date: '2026-11-24',
      status: 'active',
      total: '29500.0000',
    },
    {
      system: 'fiscal',
      kind: 'invoice',
      id: '3220001',
      number: 'INV-000001',
      status: 'fiscalised',
      currency: 'UGX',
      total: '29500.0000',
    },
  ]);
  t.is(held.bookCloseDate, '2026-10-31');
  t.like(held.failures, [{ system: 'fiscal', mode: 'outage', remaining: 1 }]);

  const text = await runCli(['simulators', '--org', org, '--system', 'fiscal'], env());
  t.is(text.code, 0, text.stderr);
  t.regex(
    text.stdout,
    /^SYSTEM\s+ACCOUNT\s+KIND\s+ID\s+NUMBER\s+DATE\s+STATUS\s+CURRENCY\s+TOTAL\s+DETAIL\nfiscal\s+1000023516\s+invoice\s+3220001\s+INV-000001/,
  );
  t.regex(
    text.stdout,
    /Failures waiting[^\n]*\nSYSTEM\s+ACCOUNT\s+MODE\s+REMAINING\s+DELAY MS\nfiscal\s+1000023516\s+outage\s+1\s+0/,
  );
  const csv = await runCli(['simulators', '--org', org, '--system', 'fiscal', '--csv'], env());
  t.regex(
    csv.stdout,
    /^SYSTEM,ACCOUNT,KIND,ID,NUMBER,DATE,STATUS,CURRENCY,TOTAL,DETAIL\r\nfiscal,1000023516,invoice,3220001,INV-000001,\d{4}-\d{2}-\d{2},fiscalised,UGX,29500.0000,"FDN 322000150001, tax 4500.0000, buyer Mama Shop, Kisenyi"\r\n$/,
  );

  const other = await world.organization();
  const none = await runCli(['simulators', '--org', other.organization.id], env());
  t.is(none.code, 1);
  t.regex(none.stderr, /has no accounting or fiscal connection to the simulators/);
});
