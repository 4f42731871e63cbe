// A worker killed (SIGKILL) in the middle of 200 accounting postings: after another worker starts, every invoice is
// posted exactly once in the accounting system (the simulator's own count: one active Invoice per number), none
// twice, none lost. The attempts the dead worker had sent are made again with the same request id: QuickBooks (the
// simulator, as the real one documents) answers a repeated request id with the first answer instead of booking it
// again; a claim of the dead worker is freed once its heartbeat is 5 s old.
import test from 'ava';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { setConnection, SIMULATOR_BASE_URL } from '../../server/connectors/connections.js';
import { migrateSimulators } from '../../server/connectors/simulators/database.js';
import { injectFailure } from '../../server/connectors/simulators/failures.js';
import { quickBooksPostingCount } from '../../server/connectors/simulators/quickbooks/router.js';
import { customers } from '../../server/modules/customers/service.js';
import { locations } from '../../server/modules/locations/service.js';
import { products } from '../../server/modules/products/service.js';
import { postStockAdjustment } from '../../server/modules/stock/documents.js';
import { createInvoice } from '../../server/modules/invoices/documents.js';
import { domainWorld, type DomainWorld } from '../support/domain.js';
import { startWorker, type ServerProcess } from '../support/server-process.js';
import { eventually } from '../webhooks/receiver.js';

const INVOICES = 200;
const REALM = '4620816365';
let world: DomainWorld;
const dataDir = mkdtempSync(join(tmpdir(), 'erp-postings-crash-'));
const started: ServerProcess[] = [];
test.before(async () => {
  world = await domainWorld('postings_crash');
});
test.after.always(async () => {
  for (const p of started) if (p.child.exitCode === null) p.child.kill('SIGKILL');
  await Promise.all(started.map((p) => p.exited));
  await world?.close();
  rmSync(dataDir, { recursive: true, force: true });
});

const worker = () => startWorker(world.database.url, dataDir, started);
const posted = async (organizationId: string) =>
  Number(
    (
      await world.db
        .selectFrom('external_postings')
        .select((eb) => eb.fn.countAll().as('n'))
        .where('organization_id', '=', organizationId)
        .where('status', '=', 'posted')
        .executeTakeFirstOrThrow()
    ).n,
  );

test('SIGKILL of the worker in the middle of 200 postings: after a restart every invoice is posted exactly once in the accounting system, none twice, none lost', async (t) => {
  const { organization, operator } = await world.organization();
  const numbers = await world.post(async (tx) => {
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
      lines: [{ productId: soda.id, locationId: warehouse.id, unit: 'case', quantity: INVOICES, unitCost: '20000' }],
    });
    await setConnection(tx, organization.id, 'accounting', { baseUrl: SIMULATOR_BASE_URL, account: REALM }, null);
    const made: string[] = [];
    for (let i = 0; i < INVOICES; i += 1) {
      made.push(
        (
          await createInvoice(tx, operator, {
            customerId: customer.id,
            locationId: warehouse.id,
            issueDate: '2026-11-24',
            currency: 'UGX',
            lines: [{ productId: soda.id, unit: 'case', quantity: 1, unitPrice: '25000' }],
          })
        ).number,
      );
    }
    return made;
  });
  // Every answer of the accounting system takes 40 ms, so the worker is still posting when it is killed.
  await migrateSimulators(world.db);
  await injectFailure(world.db, 'accounting', REALM, 'slow', null, 40);

  const first = await worker();
  await eventually(async () => (await posted(organization.id)) >= 40, 60_000, '40 postings done by the first worker');
  first.child.kill('SIGKILL');
  await first.exited;
  const atKill = await posted(organization.id);
  t.log(`killed with ${atKill} of ${INVOICES} posted`);
  t.true(atKill < INVOICES, 'the worker was killed before it had posted everything');

  await worker();
  await eventually(
    async () => (await posted(organization.id)) === INVOICES,
    120_000,
    'every posting done after the restart',
  );

  t.is(await quickBooksPostingCount(world.db, REALM), INVOICES, 'the accounting system holds exactly 200 invoices');
  const twice: string[] = [];
  for (const number of numbers) if ((await quickBooksPostingCount(world.db, REALM, number)) !== 1) twice.push(number);
  t.deepEqual(twice, [], 'each invoice number is held exactly once');
  const invoices = await world.db
    .selectFrom('invoices')
    .select(['posting_status'])
    .where('organization_id', '=', organization.id)
    .execute();
  t.deepEqual([...new Set(invoices.map((i) => i.posting_status))], ['posted']);
  const repeated = await world.db
    .selectFrom('external_postings')
    .select('id')
    .where('organization_id', '=', organization.id)
    .where('attempts', '>', 1)
    .execute();
  t.log(`${repeated.length} posting(s) needed a second attempt after the kill`);
});
