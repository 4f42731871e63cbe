import test from 'ava';
import pg from 'pg';
import { pino } from 'pino';
import { responseContract } from '../../scripts/contract/response-contract.js';
import type { JobDefinition } from '../../server/platform/jobs/jobs.js';
import { fixtureDocument, fixtureRouter, slowRequestArrived } from '../fixtures/fixture-operations.js';
import { startTestService } from '../support/service.js';

const document = fixtureDocument();

function deferred(): { promise: Promise<void>; resolve: () => void } {
  let resolve!: () => void;
  const promise = new Promise<void>((r) => {
    resolve = r;
  });
  return { promise, resolve };
}

test('a graceful stop finishes the in-flight request and the running job before closing, and then refuses connections', async (t) => {
  const jobStarted = deferred();
  let jobFinished = false;
  const slowJob: JobDefinition = {
    queue: 'test.slow-job',
    async handle() {
      jobStarted.resolve();
      await new Promise((r) => setTimeout(r, 1_500));
      jobFinished = true;
    },
  };
  const running = await startTestService('graceful_stop', {
    jobs: [slowJob as JobDefinition<never>],
    document,
    extraRouters: [fixtureRouter()],
    contract: responseContract(document as never),
  });
  try {
    await running.service.jobs.send('test.slow-job', {});
    await jobStarted.promise;
    const arrived = deferred();
    slowRequestArrived.listener = () => arrived.resolve();
    const inFlight = running.request('GET', '/test-fixtures/slow?ms=1500');
    await arrived.promise; // the request is in its handler (a fixed wait lost the race on a busy machine)
    await running.service.stop();

    const response = await inFlight;
    t.is(response.status, 200, 'the in-flight request was answered');
    t.deepEqual(response.body, { waitedMs: 1500 });
    t.true(jobFinished, 'the running job was finished, not abandoned');
    await t.throwsAsync(fetch(running.baseUrl + '/api/v1/health'), undefined, 'no new connections after the stop');

    const client = new pg.Client({ connectionString: running.database.url });
    await client.connect();
    const { rows } = await client.query("SELECT state FROM pgboss.job WHERE name = 'test.slow-job'");
    await client.end();
    t.deepEqual(
      rows.map((r) => r.state),
      ['completed'],
      'the job is recorded as completed',
    );
  } finally {
    await running.service.stop();
    await running.database.drop();
  }
});

test('the api role serves HTTP without running jobs; the worker role runs jobs without serving HTTP', async (t) => {
  let handled = 0;
  const counter: JobDefinition = {
    queue: 'test.count',
    async handle(jobs) {
      handled += jobs.length;
    },
  };
  const api = await startTestService('role_api', { role: 'api', jobs: [counter as JobDefinition<never>] });
  try {
    t.is((await api.request('GET', '/health')).status, 200);
    await api.service.jobs.send('test.count', {});
    await new Promise((r) => setTimeout(r, 1_500));
    t.is(handled, 0, 'the api role only sends');

    const { startService } = await import('../../server/composition/service.js');
    const worker = await startService(api.config, pino({ level: 'silent' }), {
      role: 'worker',
      jobs: [counter as JobDefinition<never>],
    });
    try {
      t.is(worker.url, null, 'the worker role does not listen');
      const deadline = Date.now() + 10_000;
      while (handled === 0 && Date.now() < deadline) await new Promise((r) => setTimeout(r, 100));
      t.is(handled, 1, 'the worker picked up the job the api role sent');
    } finally {
      await worker.stop();
    }
  } finally {
    await api.stop();
  }
});
