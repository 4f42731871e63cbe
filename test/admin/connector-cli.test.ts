// `admin connector set | show | fail | clear` and `admin postings [list] | retry`, run as an operator runs them (one
// test per group: CLI processes are costly). The posting rules themselves are proved in test/domain/postings.test.ts
// and, against the simulators, in test/service/postings.test.ts.
import test from 'ava';
import { listFailures } from '../../server/connectors/simulators/failures.js';
import { customers } from '../../server/modules/customers/service.js';
import { locations } from '../../server/modules/locations/service.js';
import { products } from '../../server/modules/products/service.js';
import { postStockAdjustment } from '../../server/modules/stock/documents.js';
import { createInvoice } from '../../server/modules/invoices/documents.js';
import { runCli, runCliJson } from '../support/cli.js';
import { domainWorld, type DomainWorld } from '../support/domain.js';

let world: DomainWorld;
test.before(async () => { world = await domainWorld('connector_cli'); });
test.after.always(async () => { await world?.close(); });
const env = () => ({ DATABASE_URL: world.database.url, WEBHOOK_SECRET_KEY: 'cd'.repeat(32) });

test('connector set creates a connection with its token sealed, show never prints it, fail adds failures only behind a simulator connection and only of the system\'s modes, clear removes them', async (t) => {
  const { organization } = await world.organization();
  const org = organization.id;
  const set = await runCliJson(['connector', 'set', '--org', org, '--system', 'accounting', '--base-url', 'simulator', '--account', '9130350', '--token', 'secret-token-1'], env());
  t.like(set, { system: 'accounting', provider: 'quickbooks', enabled: true, baseUrl: 'simulator', account: '9130350', hasCredentials: true });
  const stored = await world.db.selectFrom('connector_connections').select('credentials_ciphertext').where('organization_id', '=', org).executeTakeFirstOrThrow();
  t.truthy(stored.credentials_ciphertext);
  t.false(stored.credentials_ciphertext!.includes('secret-token-1'), 'the token is sealed at rest');
  const shown = await runCli(['connector', 'show', '--org', org, '--json'], env());
  t.is(shown.code, 0, shown.stderr);
  t.false(shown.stdout.includes('secret-token-1'));
  t.false(shown.stdout.includes(stored.credentials_ciphertext!));

  const badMode = await runCli(['connector', 'fail', '--org', org, '--system', 'accounting', '--mode', 'unknown_error'], env());
  t.is(badMode.code, 1);
  t.regex(badMode.stderr, /not a mode of the accounting simulator; it has outage, rate_limit/);
  const noFiscal = await runCli(['connector', 'fail', '--org', org, '--system', 'fiscal', '--mode', 'outage'], env());
  t.is(noFiscal.code, 1);
  t.regex(noFiscal.stderr, /has no fiscal connection/);

  t.like(await runCliJson(['connector', 'fail', '--org', org, '--system', 'accounting', '--mode', 'outage', '--for', '2'], env()), { system: 'accounting', account: '9130350' });
  t.deepEqual(await listFailures(world.db, 'accounting', '9130350'), [{ mode: 'outage', remaining: 2, delayMs: 0 }]);
  t.deepEqual(await runCliJson(['connector', 'clear', '--org', org, '--system', 'accounting'], env()), { cleared: 1 });

  await runCliJson(['connector', 'set', '--org', org, '--system', 'accounting', '--base-url', 'https://quickbooks.api.intuit.com'], env());
  const real = await runCli(['connector', 'fail', '--org', org, '--system', 'accounting', '--mode', 'outage'], env());
  t.is(real.code, 1);
  t.regex(real.stderr, /not to the simulators/);
  const badUrl = await runCli(['connector', 'set', '--org', org, '--system', 'fiscal', '--base-url', 'ftp://x', '--account', '1000'], env());
  t.is(badUrl.code, 1);
  t.regex(badUrl.stderr, /--base-url ftp:\/\/x is refused: connector URLs must use https/);
});

test('connector set refuses a base URL the webhook destination rules refuse (inside addresses, plain http, loopback without WEBHOOK_ALLOW_LOOPBACK), and the simulators where they do not run, changing nothing', async (t) => {
  const { organization } = await world.organization();
  const org = organization.id;
  await runCliJson(['connector', 'set', '--org', org, '--system', 'accounting', '--base-url', 'simulator', '--account', '9130352'], env());
  const refusals: [string, RegExp, Record<string, string>?][] = [
    ['https://10.0.0.5', /--base-url https:\/\/10\.0\.0\.5 is refused: 10\.0\.0\.5 resolves to 10\.0\.0\.5, a private address, which connectors may not reach/],
    ['https://169.254.169.254/latest', /169\.254\.169\.254, a linkLocal address, which connectors may not reach/],
    ['https://[::ffff:192.168.1.1]', /carries the IPv4 address 192\.168\.1\.1, a private address/],
    ['http://quickbooks.example.com', /connector URLs must use https/],
    ['https://user:pw@quickbooks.example.com', /connector URLs must not carry credentials/],
    ['https://127.0.0.1:9/quickbooks', /127\.0\.0\.1, a loopback address, which connectors may not reach.*WEBHOOK_ALLOW_LOOPBACK=true/],
    ['http://127.0.0.1:9/quickbooks', /connector URLs must use https.*WEBHOOK_ALLOW_LOOPBACK=true/, { WEBHOOK_ALLOW_LOOPBACK: 'false' }],
    ['simulator', /names the simulators, which run only in the sandbox/, { SIMULATORS: 'false' }],
  ];
  for (const [url, reason, extra] of refusals) {
    const run = await runCli(['connector', 'set', '--org', org, '--system', 'accounting', '--base-url', url], { ...env(), ...extra });
    t.is(run.code, 1, `${url}: ${run.stderr}`);
    t.regex(run.stderr, reason, url);
  }
  const fiscal = await runCli(['connector', 'set', '--org', org, '--system', 'fiscal', '--base-url', 'https://192.168.0.10/efrisws', '--account', '1000', '--device-no', 'D1'], env());
  t.is(fiscal.code, 1);
  t.regex(fiscal.stderr, /192\.168\.0\.10, a private address, which connectors may not reach/);
  const shown = await runCliJson(['connector', 'show', '--org', org], env());
  t.deepEqual(shown.connections.map((c: { system: string; baseUrl: string }) => [c.system, c.baseUrl]), [['accounting', 'simulator']], 'nothing was stored');
  // Loopback over http is for tests and local trials, with WEBHOOK_ALLOW_LOOPBACK as for webhooks.
  t.like(await runCliJson(['connector', 'set', '--org', org, '--system', 'accounting', '--base-url', 'http://127.0.0.1:9/quickbooks'], { ...env(), WEBHOOK_ALLOW_LOOPBACK: 'true' }), { baseUrl: 'http://127.0.0.1:9/quickbooks' });
});

test('postings lists an organisation\'s postings by status; retry queues a failed one again (block back to pending) and is exit 1 when nothing failed', async (t) => {
  const { organization, operator } = await world.organization();
  const org = organization.id;
  await runCliJson(['connector', 'set', '--org', org, '--system', 'accounting', '--base-url', 'simulator', '--account', '9130351'], env());
  const sold = await world.post(async (tx) => {
    const soda = await products.create(tx, operator, { productCode: '300001', name: 'Soda 300ml', packSize: 24, sellingUnits: ['case'], taxRate: 18 });
    const warehouse = await locations.create(tx, operator, { code: 'M01', name: 'Main' });
    const customer = await customers.create(tx, operator, { outletCode: 'UG0000001', name: 'Mama Shop', channel: 'retail' });
    await postStockAdjustment(tx, operator, { reasonCode: 'OPENING', lines: [{ productId: soda.id, locationId: warehouse.id, unit: 'case', quantity: 5, unitCost: '20000' }] });
    return createInvoice(tx, operator, { customerId: customer.id, locationId: warehouse.id, issueDate: '2026-11-24', currency: 'UGX', lines: [{ productId: soda.id, unit: 'case', quantity: 1, unitPrice: '25000' }] });
  });
  const pending = await runCliJson<{ postings: { documentNumber: string; status: string; system: string }[] }>(['postings', '--org', org], env());
  t.like(pending.postings, [{ documentNumber: sold.number, system: 'accounting', status: 'pending' }]);
  const nothing = await runCli(['postings', 'retry', sold.id, '--org', org], env());
  t.is(nothing.code, 1);
  t.regex(nothing.stderr, /Nothing to retry/);

  // As the posting job leaves a refusal.
  await world.db.updateTable('external_postings').set({ status: 'failed', attempts: 1, last_attempt_at: new Date(), reason: 'The accounting system refused it (6000): no' }).where('document_id', '=', sold.id).execute();
  await world.db.updateTable('invoices').set({ posting_status: 'failed', posting_reason: 'The accounting system refused it (6000): no' }).where('id', '=', sold.id).execute();
  const failed = await runCliJson<{ postings: { documentId: string; reason: string }[] }>(['postings', '--org', org, '--status', 'failed'], env());
  t.like(failed.postings, [{ documentId: sold.id, reason: 'The accounting system refused it (6000): no' }]);
  t.deepEqual((await runCliJson<{ postings: unknown[] }>(['postings', '--org', org, '--status', 'posted'], env())).postings, []);

  const retried = await runCliJson<{ retried: { status: string; attempts: number }[] }>(['postings', 'retry', sold.id, '--org', org], env());
  t.like(retried.retried, [{ status: 'pending', attempts: 0 }]);
  t.like(await world.db.selectFrom('invoices').select(['posting_status', 'posting_reason']).where('id', '=', sold.id).executeTakeFirstOrThrow(), { posting_status: 'pending', posting_reason: null });
  const badStatus = await runCli(['postings', '--org', org, '--status', 'lost'], env());
  t.is(badStatus.code, 1);
});
