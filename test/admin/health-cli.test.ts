// `admin health`: the service's processes and their heartbeats, and the job queues, read from the database (a worker
// has no port of its own). Exit 1 when no worker process is alive, so that a probe can rely on the exit code.
import test from 'ava';
import { runCli } from '../support/cli.js';
import { createTestDatabase } from '../support/database.js';
import { useTestService } from '../support/service.js';
import { PROCESS_LEASE_SECONDS } from '../../server/platform/jobs/processes.js';

const api = useTestService(test, 'health_cli'); // role all: one process that is also a worker
const health = async (databaseUrl: string) => {
  const run = await runCli(['health', '--json'], { DATABASE_URL: databaseUrl });
  return { code: run.code, body: JSON.parse(run.stdout || '{}'), stderr: run.stderr };
};

test.serial(
  "with a worker alive: exit 0, the process with its heartbeat, and a queue's waiting jobs and the oldest one's age",
  async (t) => {
    const { boss } = api().service.jobs;
    await boss.createQueue('health.unworked'); // no worker takes it: its jobs wait
    await boss.send('health.unworked', { n: 1 });
    await boss.send('health.unworked', { n: 2 }, { startAfter: 3600 });
    const { code, body } = await health(api().database.url);
    t.is(code, 0);
    t.is(body.workers.alive, 1);
    const me = body.processes.find((p: { id: string }) => p.id === api().service.processId);
    t.like(me, { role: 'all', pid: process.pid, alive: true });
    t.true(me.silentSeconds < PROCESS_LEASE_SECONDS);
    const queue = body.queues.find((q: { queue: string }) => q.queue === 'health.unworked');
    t.like(queue, { waiting: 1, active: 0, scheduled: 1 });
    t.true(queue.oldestWaitingSeconds >= 0);
  },
);

test.serial('with no worker alive: exit 1, alive 0 (a worker silent longer than the lease is dead)', async (t) => {
  const empty = await createTestDatabase('health_cli_none');
  try {
    const none = await health(empty.url);
    t.is(none.code, 1);
    t.deepEqual(none.body.workers, { alive: 0, lastHeartbeatAt: null });
    t.deepEqual(none.body.processes, []);
  } finally {
    await empty.drop();
  }
  // A worker whose heartbeat stopped (as after kill -9): dead once the lease has passed.
  await api().service.database.pool.query(
    `INSERT INTO service_processes (id, role, host, pid, heartbeat_at) VALUES ('proc_silent', 'worker', 'elsewhere', 1, now() - interval '6 seconds')`,
  );
  const { body } = await health(api().database.url);
  t.like(
    body.processes.find((p: { id: string }) => p.id === 'proc_silent'),
    { alive: false },
  );
  t.is(body.workers.alive, 1, 'only the running service counts');
});
