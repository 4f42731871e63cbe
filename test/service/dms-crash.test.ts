// A worker killed (SIGKILL) while it posts a batch of 200 DMS documents: after another worker starts, every
// document ends posted or rejected exactly once. Checked in the ledger (one invoice per posted CS document, none
// for a rejected one, the ledger checker clean) and in the accounting simulator (each invoice held once). A
// document is posted only under its row lock and while it is received, in the same transaction as its flag, so
// the posting the dead worker was in the middle of rolled back with its flag, and its lease hands it to the next.
import test from 'ava';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { setConnection, SIMULATOR_BASE_URL } from '../../server/connectors/connections.js';
import { migrateSimulators } from '../../server/connectors/simulators/database.js';
import { quickBooksPostingCount } from '../../server/connectors/simulators/quickbooks/router.js';
import { domainWorld, type DomainWorld } from '../support/domain.js';
import { dmsShop, masterData, saleInvoice, stockDay } from '../support/dms.js';
import { startWorker, type ServerProcess } from '../support/server-process.js';
import { eventually } from '../webhooks/receiver.js';

// Enough that the kill lands mid-batch (a fifth posted), few enough that the file is not the suite's longest.
const DOCUMENTS = 200;
const REALM = '5620816365';
let world: DomainWorld;
const dataDir = mkdtempSync(join(tmpdir(), 'erp-dms-crash-'));
const started: ServerProcess[] = [];
test.before(async () => {
  world = await domainWorld('dms_crash');
});
test.after.always(async () => {
  for (const p of started) if (p.child.exitCode === null) p.child.kill('SIGKILL');
  await Promise.all(started.map((p) => p.exited));
  await world?.close();
  rmSync(dataDir, { recursive: true, force: true });
});

const worker = () => startWorker(world.database.url, dataDir, started);

test('SIGKILL of the worker while it posts a 200-document batch: after a restart every document is posted or rejected exactly once, nothing posted twice', async (t) => {
  const shop = await dmsShop(world);
  const ready = await shop.push(
    masterData.soda,
    masterData.prices,
    masterData.salesman(),
    masterData.customer('UG0000001'),
    ...stockDay(DOCUMENTS),
  );
  t.true(ready.every((flag) => flag.state === 'posted'));
  await world.post((tx) =>
    setConnection(tx, shop.organizationId, 'accounting', { baseUrl: SIMULATOR_BASE_URL, account: REALM }, null),
  );
  await migrateSimulators(world.db);
  // Every 50th document does not add up (R04 at posting: a tax of 0): those must end rejected, and post nothing.
  const batch = Array.from({ length: DOCUMENTS }, (_, i) => {
    const invoice = saleInvoice(`CSR01${String(100000 + i)}`, 'UG0000001', 1);
    if (i % 50 === 49) Object.assign((invoice.body as any).totals, { tax: '0', total: '24000' });
    return invoice;
  });
  const flags = await shop.send(...batch);
  t.true(flags.every((flag) => flag.state === 'received'));
  const ids = flags.map((flag) => flag.documentId);
  const done = async () =>
    Number(
      (
        await world.db
          .selectFrom('dms_documents')
          .select((eb) => eb.fn.countAll<string>().as('n'))
          .where('organization_id', '=', shop.organizationId)
          .where('id', 'in', ids)
          .where('state', '<>', 'received')
          .executeTakeFirstOrThrow()
      ).n,
    );

  const first = await worker();
  await eventually(
    async () => (await done()) >= DOCUMENTS / 5,
    60_000,
    'a fifth of the documents posted by the first worker',
  );
  first.child.kill('SIGKILL');
  await first.exited;
  const atKill = await done();
  t.log(`killed with ${atKill} of ${DOCUMENTS} documents flagged`);
  t.true(atKill < DOCUMENTS, 'the worker was killed before it had posted everything');

  const restarted = Date.now();
  await worker();
  await eventually(async () => (await done()) === DOCUMENTS, 150_000, 'every document flagged after the restart');
  // The figure that shows how long the dead worker's documents waited (README, "An idle service stays idle").
  t.log(`every document flagged ${((Date.now() - restarted) / 1000).toFixed(1)} s after the restart`);
  const final = await shop.flags(ids);
  const rejected = final.filter((flag) => flag.state === 'rejected');
  t.deepEqual(
    rejected.map((flag) => `${flag.reasonCode} ${flag.reasonCode === 'R04' ? '' : flag.reasonText}`),
    Array(DOCUMENTS / 50).fill('R04 '),
  );
  const posted = final.filter((flag) => flag.state === 'posted');
  t.is(posted.length, DOCUMENTS - DOCUMENTS / 50);
  const invoices = await world.db
    .selectFrom('invoices')
    .select('id')
    .where('organization_id', '=', shop.organizationId)
    .execute();
  t.is(invoices.length, posted.length, 'one invoice per posted document, none for a rejected one');
  t.is(
    new Set(posted.map((flag) => flag.mikonoRef!.id)).size,
    posted.length,
    'each posted document has its own invoice',
  );
  await eventually(
    async () => (await quickBooksPostingCount(world.db, REALM)) === posted.length,
    120_000,
    'every invoice posted in the accounting system',
  );
  const numbers = await world.db
    .selectFrom('invoices')
    .select('number')
    .where('organization_id', '=', shop.organizationId)
    .execute();
  const twice: string[] = [];
  for (const { number } of numbers)
    if ((await quickBooksPostingCount(world.db, REALM, number)) !== 1) twice.push(number);
  t.deepEqual(twice, [], 'each invoice is held exactly once by the accounting system');
});
