// The console's pages on the sandbox's synthetic distributor (its trips, invoices, DMS documents, members): each
// answers 200, and the time each took is logged. The aim (under 200 ms a page) is a figure to read, not an assertion:
// timed assertions fail on a busy machine (the README's convention: speed is measured, not asserted in tests). The sandbox's owner gets a console password here, as `admin console owner` gives one.
import test from 'ava';
import { kyselyOver } from '../../server/platform/database/database.js';
import { setPassword } from '../../server/console/sessions.js';
import { startTestService, type TestService } from '../support/service.js';
import { ConsoleClient } from './support.js';

let running: TestService;
test.before(async () => {
  running = await startTestService('console_sandbox', { env: { SANDBOX_BOOTSTRAP: 'true' }, scheduledJobs: false });
});
test.after.always(async () => {
  await running?.stop();
});

test('every console page answers on the sandbox distributor (times logged)', async (t) => {
  const db = kyselyOver(running.service.database.pool);
  const owner = await db
    .selectFrom('members')
    .select(['organization_id', 'id', 'email'])
    .where('role', '=', 'owner')
    .executeTakeFirstOrThrow();
  await setPassword(db, owner.organization_id, owner.id, 'a sandbox console password');
  const client = new ConsoleClient(running.baseUrl);
  t.is((await client.signIn(owner.email, 'a sandbox console password')).status, 303);
  const trip = await db
    .selectFrom('trips')
    .select('id')
    .where('organization_id', '=', owner.organization_id)
    .orderBy('created_at', 'desc')
    .executeTakeFirst();
  const document = await db
    .selectFrom('dms_documents')
    .select('id')
    .where('organization_id', '=', owner.organization_id)
    .executeTakeFirst();
  const posting = await db
    .selectFrom('external_postings')
    .select('id')
    .where('organization_id', '=', owner.organization_id)
    .where('status', '=', 'posted')
    .executeTakeFirst();
  const pages = [
    '/console/dms',
    '/console/dms?state=rejected',
    '/console/notifications',
    '/console/keys',
    '/console/postings',
    '/console/log',
    '/console/reconciliation',
    '/console/webhooks',
    '/console/members',
    '/console/trips',
    '/console/dms?format=csv',
    ...(trip ? [`/console/trips/${trip.id}`] : []),
    ...(document ? [`/console/dms/${document.id}`] : []),
    ...(posting ? [`/console/postings/${posting.id}`] : []),
  ];
  for (const path of pages) await client.get(path); // warm
  for (const path of pages) {
    const started = performance.now();
    const response = await client.get(path);
    const ms = performance.now() - started;
    t.is(response.status, 200, path);
    t.log(`${path}: ${ms.toFixed(1)} ms`);
  }
});
