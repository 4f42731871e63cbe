// A DMS document is sent once while it waits in the queue, and a job lost by a dead worker does not hold its
// documents for the queue's expiry (server/modules/dms/dispatch.ts, platform/jobs/lost.ts). Driven by hand, as the
// worker's loops and its heartbeat sweep drive them: no worker runs, the test takes jobs as a worker would, and a job
// "lost" is one a worker took (active) whose start is set back past UNCLAIMED_JOB_SECONDS.
import test from 'ava';
import { sql } from 'kysely';
import { domainWorld, type DomainWorld } from '../support/domain.js';
import { dmsShop, saleInvoice, type DmsShop } from '../support/dms.js';
import type { Jobs } from '../../server/platform/jobs/jobs.js';
import { sendOnlyJobs } from '../support/jobs.js';
import { failLostJobs, lostJobsExist, UNCLAIMED_JOB_SECONDS } from '../../server/platform/jobs/lost.js';
import {
  abandonedDocumentsExist,
  claimDocuments,
  DMS_QUEUE,
  dispatchDmsDocuments,
  releaseDocuments,
  requeueAbandonedDocuments,
  unclaimedDmsJobs,
  type DmsJob,
} from '../../server/modules/dms/dispatch.js';

let world: DomainWorld;
let jobs: Jobs;
test.before(async () => {
  world = await domainWorld('dms-dispatch');
  jobs = await sendOnlyJobs(world.database.url, DMS_QUEUE); // the test fetches the jobs as a worker would
});
test.after.always(async () => {
  await jobs?.stop(1_000);
  await world?.close();
});

/** The shop's documents as the dispatcher reads them: due now (by the database's clock), its job, its claim. */
const documentsOf = (shop: DmsShop) =>
  world.db
    .selectFrom('dms_documents')
    .select(['id', 'job_id', 'claimed_by', sql<boolean>`next_attempt_at <= now()`.as('due')])
    .where('organization_id', '=', shop.organizationId)
    .orderBy('position')
    .execute();

/** The shop's dms.process jobs (pg-boss's own table: raw SQL), oldest first. */
const jobsOf = async (shop: DmsShop) =>
  (
    await sql<{ id: string; state: string; data: DmsJob }>`SELECT id, state, data FROM pgboss.job
      WHERE name = ${DMS_QUEUE} AND data->>'organizationId' = ${shop.organizationId} ORDER BY created_on`.execute(
      world.db,
    )
  ).rows;

/** Their look-up time comes (a test cannot wait QUEUED_CHECK_SECONDS): due now again, as the dispatcher will find them. */
const dueAgain = (shop: DmsShop) =>
  world.db
    .updateTable('dms_documents')
    .set({ next_attempt_at: sql<Date>`now()` })
    .where('organization_id', '=', shop.organizationId)
    .where('state', '=', 'received')
    .execute();

/** Puts earlier tests' jobs out of the way (taken), so that each test fetches only its own. */
const emptyQueue = async () => {
  while ((await jobs.boss.fetch(DMS_QUEUE)).length > 0) {
    /* taken */
  }
};

const pushed = async (count: number) => {
  const shop = await dmsShop(world);
  const flags = await shop.send(
    ...Array.from({ length: count }, (_, i) => saleInvoice(`CSR01${String(i + 1).padStart(6, '0')}`, 'UG0000001', 1)),
  );
  return { shop, ids: flags.map((flag) => flag.documentId) };
};

const probe = async (exists: ReturnType<typeof lostJobsExist>) =>
  (await sql<{ found: boolean }>`SELECT ${exists} AS found`.execute(world.db)).rows[0]!.found;

test.serial(
  'a queued document is sent once, however long its job waits; only a job gone without it sends it again',
  async (t) => {
    await emptyQueue();
    const { shop, ids } = await pushed(3);
    t.is(await dispatchDmsDocuments(world.db, jobs.sendMany), 1);
    const [job] = await jobsOf(shop);
    t.deepEqual(job!.data.documentIds, ids);
    t.deepEqual(
      (await documentsOf(shop)).map((row) => [row.job_id, row.due]),
      ids.map(() => [job!.id, false]),
      'each document names its job, and is not due while it waits',
    );
    // Their look-up comes while the job still waits, then while it runs (a worker took it): no second job.
    await dueAgain(shop);
    t.is(await dispatchDmsDocuments(world.db, jobs.sendMany), 0);
    t.true(
      (await documentsOf(shop)).every((row) => row.job_id === job!.id && !row.due),
      'looked at again later',
    );
    await jobs.boss.fetch(DMS_QUEUE);
    await dueAgain(shop);
    t.is(await dispatchDmsDocuments(world.db, jobs.sendMany), 0);
    t.is((await jobsOf(shop)).length, 1, 'one job for the three documents all along');
    // The job gone without claiming them (cancelled here; failed for good alike): they are sent again.
    await jobs.boss.cancel(DMS_QUEUE, job!.id);
    await dueAgain(shop);
    t.is(await dispatchDmsDocuments(world.db, jobs.sendMany), 1);
    const [, second] = await jobsOf(shop);
    t.deepEqual(second!.data.documentIds, ids);
    t.true((await documentsOf(shop)).every((row) => row.job_id === second!.id));
  },
);

test.serial(
  `a job taken by a worker that died before claiming its documents is failed after ${UNCLAIMED_JOB_SECONDS} s and retried, not left to its expiry`,
  async (t) => {
    await emptyQueue();
    const { shop, ids } = await pushed(2);
    await dispatchDmsDocuments(world.db, jobs.sendMany);
    const [taken] = await jobs.boss.fetch<DmsJob>(DMS_QUEUE);
    t.is(taken!.data.organizationId, shop.organizationId);
    t.false(await probe(lostJobsExist(unclaimedDmsJobs)), 'a job just taken is its worker’s to claim');
    // Its worker died: the job stays active, its documents still name it, past UNCLAIMED_JOB_SECONDS.
    await sql`UPDATE pgboss.job SET started_on = now() - make_interval(secs => ${UNCLAIMED_JOB_SECONDS + 1})
    WHERE name = ${DMS_QUEUE} AND id = ${taken!.id}`.execute(world.db);
    t.true(await probe(lostJobsExist(unclaimedDmsJobs)));
    const fail = (tx: Parameters<Parameters<typeof failLostJobs>[2]>[0], lost: { id: string; retryCount: number }[]) =>
      jobs.failInTransaction(DMS_QUEUE, lost, tx);
    t.is(await failLostJobs(world.db, unclaimedDmsJobs, fail), 1);
    t.deepEqual(
      (await jobsOf(shop)).map((job) => job.state),
      ['retry'],
      'pg-boss retries it (after the queue’s retryDelay)',
    );
    // Its retry claims the documents: the job is no longer lost, though it runs long, and nothing else takes them.
    await claimDocuments(world.db, 'proc_retry', taken!.id, taken!.data);
    await sql`UPDATE pgboss.job SET state = 'active' WHERE name = ${DMS_QUEUE} AND id = ${taken!.id}`.execute(world.db);
    t.false(await probe(lostJobsExist(unclaimedDmsJobs)));
    t.is(await failLostJobs(world.db, unclaimedDmsJobs, fail), 0);
    t.deepEqual(
      (await documentsOf(shop)).map((row) => [row.id, row.job_id, row.claimed_by, row.due]),
      ids.map((id) => [id, null, 'proc_retry', false]),
    );
    // Its end: released (a document still received is due when its flag says).
    await releaseDocuments(world.db, 'proc_retry', taken!.data);
    t.true((await documentsOf(shop)).every((row) => row.claimed_by === null));
  },
);

test.serial(
  'documents claimed by a dead process are due again at once; a live one keeps its own until it releases them',
  async (t) => {
    await emptyQueue();
    const { shop, ids } = await pushed(2);
    await dispatchDmsDocuments(world.db, jobs.sendMany);
    const [first, second] = (await jobsOf(shop)).flatMap((job) => [
      { id: job.id, data: { organizationId: shop.organizationId, documentIds: [job.data.documentIds[0]!] } },
      { id: job.id, data: { organizationId: shop.organizationId, documentIds: [job.data.documentIds[1]!] } },
    ]);
    // One process beats (its heartbeat set ahead, so that a slow machine does not let its lease run out during the
    // test), the other never did (or stopped beating: the same to the sweep).
    await world.db
      .insertInto('service_processes')
      .values({
        id: 'proc_live',
        role: 'worker',
        host: 'test',
        pid: 1,
        heartbeat_at: sql<Date>`now() + interval '1 hour'`,
      })
      .execute();
    await claimDocuments(world.db, 'proc_live', first!.id, first!.data);
    await claimDocuments(world.db, 'proc_dead', second!.id, second!.data);
    t.true(await probe(abandonedDocumentsExist()));
    t.is(await requeueAbandonedDocuments(world.db), 1);
    t.false(await probe(abandonedDocumentsExist()));
    t.deepEqual(
      (await documentsOf(shop)).map((row) => [row.id, row.claimed_by, row.due]),
      [
        [ids[0], 'proc_live', false],
        [ids[1], null, true],
      ],
    );
    await releaseDocuments(world.db, 'proc_live', first!.data);
    t.deepEqual(
      (await documentsOf(shop)).map((row) => row.claimed_by),
      [null, null],
    );
  },
);
