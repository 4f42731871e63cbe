// A posting is sent once while its job waits in the queue, however long the queue (an accounting system's rate limit
// holds thousands behind it): the sweep's rule for a posting queued and unclaimed for UNCLAIMED_SECONDS looks its job
// up, and queues it again only when that job is gone (server/modules/postings/dispatch.ts). Driven by hand, as the
// worker's dispatch loop and heartbeat sweep drive it: no worker runs, and the queue's long wait is the row's times
// set back (a test cannot wait a minute).
import test from 'ava';
import { sql } from 'kysely';
import { domainWorld, type DomainWorld } from '../support/domain.js';
import type { Jobs } from '../../server/platform/jobs/jobs.js';
import { sendOnlyJobs } from '../support/jobs.js';
import {
  abandonedPostingsExist,
  dispatchPostings,
  requeueAbandonedPostings,
  UNCLAIMED_SECONDS,
} from '../../server/modules/postings/dispatch.js';
import { POSTING_QUEUE } from '../../server/modules/postings/run.js';

let world: DomainWorld;
let jobs: Jobs;
test.before(async () => {
  world = await domainWorld('postings-queue');
  jobs = await sendOnlyJobs(world.database.url, POSTING_QUEUE); // the test fetches the jobs as a worker would
});
test.after.always(async () => {
  await jobs?.stop(1_000);
  await world?.close();
});

test(`a posting whose job waits for more than ${UNCLAIMED_SECONDS} s is not queued again; one whose job is gone is`, async (t) => {
  const { organization } = await world.organization();
  const org = organization.id;
  // A due posting as a document's transaction writes it (what it posts does not matter here: nothing is sent).
  await world.db
    .insertInto('external_postings')
    .values({
      organization_id: org,
      id: 'pst_queue_1',
      document_type: 'invoice',
      document_id: 'inv_queue_1',
      document_number: 'CS000001',
      system: 'accounting',
      status: 'pending',
      request_id: 'req_queue_1',
    })
    .execute();
  const row = () =>
    world.db
      .selectFrom('external_postings')
      .select(['job_id', 'queued_at'])
      .where('organization_id', '=', org)
      .where('id', '=', 'pst_queue_1')
      .executeTakeFirstOrThrow();
  const jobStates = async () =>
    (
      await sql<{ id: string; state: string }>`SELECT id, state FROM pgboss.job
        WHERE name = ${POSTING_QUEUE} AND data->>'organizationId' = ${org} ORDER BY created_on`.execute(world.db)
    ).rows;
  // The queue's long wait: due and queued longer ago than UNCLAIMED_SECONDS, unclaimed.
  const waitedLong = () =>
    world.db
      .updateTable('external_postings')
      .set({
        next_attempt_at: sql<Date>`now() - make_interval(secs => ${UNCLAIMED_SECONDS + 1})`,
        queued_at: sql<Date>`now() - make_interval(secs => ${UNCLAIMED_SECONDS + 1})`,
      })
      .where('organization_id', '=', org)
      .execute();
  const probe = async () =>
    (await sql<{ found: boolean }>`SELECT ${abandonedPostingsExist()} AS found`.execute(world.db)).rows[0]!.found;

  t.is(await dispatchPostings(world.db, jobs.sendMany), 1);
  const [job] = await jobStates();
  t.is((await row()).job_id, job!.id, 'the posting names its job');
  t.false(await probe(), 'just queued: nothing for the sweep');

  await waitedLong();
  t.true(await probe(), 'the sweep looks it up');
  t.is(await requeueAbandonedPostings(world.db), 0, 'its job still waits: not queued again');
  t.not((await row()).queued_at, null);
  t.false(await probe(), 'looked at again only after another UNCLAIMED_SECONDS');
  t.is((await jobStates()).length, 1);

  // Its job gone without running it (cancelled here; failed for good alike): queued again, in a new job.
  await jobs.boss.cancel(POSTING_QUEUE, job!.id);
  await waitedLong();
  t.is(await requeueAbandonedPostings(world.db), 1);
  t.is((await row()).queued_at, null);
  t.is(await dispatchPostings(world.db, jobs.sendMany), 1);
  const states = await jobStates();
  t.deepEqual(
    states.map((s) => s.state),
    ['cancelled', 'created'],
  );
  t.is((await row()).job_id, states[1]!.id);
});
