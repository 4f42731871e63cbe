// The safety nets of an idle worker (decision 0054): one statement asks when every watched loop's next work falls
// due (startLoopSafetyNet), and one asks which job queues have a job due (startJobs), so that neither the loops nor
// the job workers poll on their own but at a backstop ten times rarer. What each net must catch is work nobody
// notified this process of: a row made due without a NOTIFY, a job sent for later by another process.
import test from 'ava';
import pino from 'pino';
import { sql } from 'kysely';
import { domainWorld, type DomainWorld } from '../support/domain.js';
import { sendOnlyJobs } from '../support/jobs.js';
import { startLoop, startLoopSafetyNet } from '../../server/platform/jobs/loop.js';
import { startJobs, JOB_BACKSTOP_FACTOR } from '../../server/platform/jobs/jobs.js';

let world: DomainWorld;
test.before(async () => {
  world = await domainWorld('safety-net');
  // Work of a loop of the test's own: a row is due at its time (nothing notifies).
  await sql`CREATE TABLE safety_net_work (due_at timestamptz NOT NULL)`.execute(world.db);
});
test.after.always(async () => {
  await world?.close();
});

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));
/** Waits until `done()` (checked every 50 ms), at most 15 s: a loaded machine may be slow, never wrong. */
const until = async (done: () => boolean) => {
  for (const deadline = Date.now() + 15_000; !done() && Date.now() < deadline; ) await sleep(50);
};

test.serial("the loops' safety net wakes a loop when its work is due, and only then", async (t) => {
  const passes: number[] = [];
  // The loop's own poll is an hour away: every pass after its first comes from the safety net.
  const loop = startLoop({
    pass: async () => {
      passes.push(Date.now());
      return false;
    },
    onError: (error) => t.fail(String(error)),
    pollIntervalMs: 3_600_000,
  });
  const net = startLoopSafetyNet({ db: world.db, intervalMs: 200, onError: (error) => t.fail(String(error)) });
  net.watch(loop, sql<Date | null>`SELECT min(due_at) FROM safety_net_work`);
  try {
    await sleep(1_000); // five looks of the net, nothing due
    t.is(passes.length, 1, 'only the loop’s first pass: the net found nothing due');

    // The loop's own poll is an hour away: a second pass can only come from the net.
    await sql`INSERT INTO safety_net_work VALUES (now())`.execute(world.db);
    await until(() => passes.length >= 2);
    t.true(passes.length >= 2, 'work due now: a look of the net woke the loop');

    // Work due in 1.5 s: the net tells the loop when, the loop passes then (not at the net's next look).
    await sql`DELETE FROM safety_net_work`.execute(world.db);
    await sleep(400);
    const before = passes.length;
    await sql`INSERT INTO safety_net_work VALUES (now() + interval '1500 milliseconds')`.execute(world.db);
    const written = Date.now();
    await until(() => passes.length > before);
    const later = passes.slice(before);
    t.true(later.length >= 1, 'the loop passed when its work fell due');
    t.true(later[0]! - written >= 1_400, `not before its time (${later[0]! - written} ms)`);
  } finally {
    await net.stop();
    await loop.stop();
    await sql`DELETE FROM safety_net_work`.execute(world.db);
  }
});

test.serial("the job queues' safety net finds a job due that nobody told this worker of", async (t) => {
  const queue = 'safety.net.test';
  const handled: number[] = [];
  // The worker: its safety net looks every second; its job worker's own poll comes JOB_BACKSTOP_FACTOR times rarer.
  const worker = await startJobs({
    databaseUrl: world.database.url,
    runWorkers: true,
    definitions: [
      {
        queue,
        async handle() {
          handled.push(Date.now());
        },
      },
    ],
    logger: pino({ level: 'silent' }),
    pollingIntervalSeconds: 1,
  });
  // Another process sends it for later: no NOTIFY (not due now), and the worker sets no timer (not its send).
  const sender = await sendOnlyJobs(world.database.url, queue);
  try {
    await sleep(500); // past the worker's first fetch and the net's first look
    const sent = Date.now();
    await sender.sendMany(queue, [{ data: { n: 1 }, startAfter: 2 }]);
    await until(() => handled.length > 0);
    t.is(handled.length, 1);
    const after = handled[0]! - sent;
    t.true(after >= 1_900, `not before its time (${after} ms)`);
    // Its own poll would have come JOB_BACKSTOP_FACTOR seconds after its first fetch; the net's look is within 1 s.
    t.true(
      after < JOB_BACKSTOP_FACTOR * 1_000 - 2_000,
      `found by the safety net, not the worker's own poll (${after} ms)`,
    );
  } finally {
    await sender.stop(1_000);
    await worker.stop(1_000);
  }
});
