// Fair to every distributor (decision 0040): one organisation's backlog does not hold another's document behind it,
// neither when the documents are leased (each organisation's due documents side by side), nor in the job queue (a job
// waits behind its own organisation's waiting jobs only), nor when files are parsed (organisations take turns). Shown
// by the order things happen in, with no worker running and no clock read: the dispatcher and the queue are driven
// by hand, as the worker's loops drive them.
import test from 'ava';
import { sql } from 'kysely';
import { domainWorld, type DomainWorld } from '../support/domain.js';
import { dmsShop, masterData, saleInvoice, type DmsShop } from '../support/dms.js';
import type { Jobs } from '../../server/platform/jobs/jobs.js';
import { sendOnlyJobs } from '../support/jobs.js';
import { DMS_QUEUE, dispatchDmsDocuments, type DmsJob } from '../../server/modules/dms/dispatch.js';
import { parseNextFile, receiveFile } from '../../server/modules/dms/files.js';
import { writeDmsFile } from '../../server/modules/dms/xml/write.js';

let world: DomainWorld;
let jobs: Jobs;
test.before(async () => {
  world = await domainWorld('dms-fairness');
  jobs = await sendOnlyJobs(world.database.url, DMS_QUEUE); // the test fetches the jobs as a worker would
});
test.after.always(async () => {
  await jobs?.stop(1_000);
  await world?.close();
});

const invoices = (count: number) =>
  Array.from({ length: count }, (_, i) => saleInvoice(`CSR01${String(i + 1).padStart(6, '0')}`, 'UG0000001', 1));

/** The organisation's received documents due now (not leased), by the database's clock as the dispatcher reads it. */
const dueNow = async (shop: DmsShop) =>
  Number(
    (
      await world.db
        .selectFrom('dms_documents')
        .select((eb) => eb.fn.countAll<string>().as('n'))
        .where('organization_id', '=', shop.organizationId)
        .where('state', '=', 'received')
        .where('next_attempt_at', '<=', sql<Date>`now()`)
        .executeTakeFirstOrThrow()
    ).n,
  );

/** Takes the next job of the queue as a worker would (highest priority, then oldest). */
const nextJob = async () => (await jobs.boss.fetch<DmsJob>(DMS_QUEUE))[0]?.data ?? null;

/** Puts earlier tests' documents and jobs out of the way (not due for a day; taken), so that each test reads only its own. */
const emptyQueue = async () => {
  await world.db
    .updateTable('dms_documents')
    .set({ next_attempt_at: sql<Date>`now() + interval '1 day'` })
    .where('state', '=', 'received')
    .execute();
  while (await nextJob()) {
    /* taken */
  }
};

test.serial(
  "one pass leases a later organisation's document beside an earlier one's backlog, not after it",
  async (t) => {
    await emptyQueue();
    const a = await dmsShop(world);
    const b = await dmsShop(world);
    t.true((await a.send(...invoices(150))).every((flag) => flag.state === 'received'));
    const [pushed] = await b.send(saleInvoice('CSR01900001', 'UG0000001', 1));
    // A pass of 50 documents an organisation: in one global order (received first) it would have taken 50 of A's.
    await dispatchDmsDocuments(world.db, jobs.sendMany, 50);
    t.is(await dueNow(b), 0, "B's document is leased in the first pass");
    t.is(await dueNow(a), 100, "while A's backlog is still to be leased");
    const leased = [await nextJob(), await nextJob()];
    t.deepEqual(leased.map((job) => job?.organizationId).sort(), [a.organizationId, b.organizationId].sort());
    t.deepEqual(leased.find((job) => job?.organizationId === b.organizationId)?.documentIds, [pushed!.documentId]);
  },
);

test.serial("a job waits behind its own organisation's waiting jobs only", async (t) => {
  await emptyQueue();
  const a = await dmsShop(world);
  const b = await dmsShop(world);
  t.true((await a.send(...invoices(150))).every((flag) => flag.state === 'received'));
  await dispatchDmsDocuments(world.db, jobs.sendMany); // A's backlog: three jobs of 50
  const first = await nextJob(); // a worker takes A's first
  t.is(first?.organizationId, a.organizationId);
  const [pushed] = await b.send(saleInvoice('CSR01900001', 'UG0000001', 1));
  await dispatchDmsDocuments(world.db, jobs.sendMany);
  // The next job a worker takes is B's, though A's two others were queued before it.
  const next = await nextJob();
  t.is(next?.organizationId, b.organizationId);
  t.deepEqual(next?.documentIds, [pushed!.documentId]);
  const rest = [await nextJob(), await nextJob(), await nextJob()];
  t.deepEqual(
    rest.map((job) => job?.organizationId ?? null),
    [a.organizationId, a.organizationId, null],
    "A's backlog follows, in its own order",
  );
});

test.serial(
  "files are parsed with organisations in turns: one organisation's second file after another's first",
  async (t) => {
    const a = await dmsShop(world);
    const b = await dmsShop(world);
    const file = (code: string) => ({
      bytes: Buffer.from(writeDmsFile([masterData.customer(code)])),
      name: `${code}.xml`,
    });
    const a1 = await world.post((tx) => receiveFile(tx, a.connection, file('UG0000101')));
    const a2 = await world.post((tx) => receiveFile(tx, a.connection, file('UG0000102')));
    const b1 = await world.post((tx) => receiveFile(tx, b.connection, file('UG0000201')));
    const parsedOrder: string[] = [];
    while (await parseNextFile(world.db)) {
      const parsed = await world.db
        .selectFrom('dms_batches')
        .select('id')
        .where('id', 'in', [a1.batchId, a2.batchId, b1.batchId])
        .where('file_status', '=', 'parsed')
        .execute();
      const newly = parsed.map((row) => row.id).filter((id) => !parsedOrder.includes(id));
      parsedOrder.push(...newly);
    }
    t.deepEqual(parsedOrder, [a1.batchId, b1.batchId, a2.batchId]);
  },
);
