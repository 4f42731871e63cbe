// Issue 34, item 8: the accounting (QuickBooks) and fiscal (EFRIS) clients called whatever base URL a connection held,
// inside addresses included, and followed redirects (global fetch does), so a connection or a redirecting endpoint
// could send the company's token and documents to the cloud's metadata service or the database. Every call now goes
// through the webhook destination rules, checked on the address it connects to (server/connectors/guarded-fetch.ts),
// and a 3xx fails the call naming where it pointed, never followed. Proved against the simulators this service runs.
import test from 'ava';
import {
  accountingConnectorOf,
  fiscalConnectorOf,
  readConnection,
  setConnection,
  SIMULATOR_BASE_URL,
  type ExternalSystem,
} from '../../server/connectors/connections.js';
import { injectFailure } from '../../server/connectors/simulators/failures.js';
import { SIMULATED_REDIRECT_LOCATION } from '../../server/connectors/simulators/quickbooks/router.js';
import { kyselyOver } from '../../server/platform/database/database.js';
import { inTransaction } from '../../server/platform/database/transaction.js';
import { createCaller } from '../support/callers.js';
import { useTestService } from '../support/service.js';

const api = useTestService(test, 'connector_destinations', {
  env: { SIMULATORS: 'true', CONNECTOR_TIMEOUT_MS: '3000' },
});
const db = () => kyselyOver(api().service.database.pool);
let accounts = 0;

/** An organisation connected to `baseUrl` (stored as is: a row from before the rule, or written past the CLI). */
async function connected(system: ExternalSystem, baseUrl: string) {
  const caller = await createCaller(api().service.database.pool);
  const account = `${system === 'accounting' ? 'realm' : '100000'}${++accounts}`;
  await inTransaction(db(), (tx) =>
    setConnection(
      tx,
      caller.organizationId,
      system,
      { baseUrl, account, deviceNo: system === 'fiscal' ? 'D1' : undefined },
      null,
    ),
  );
  return { connection: (await readConnection(db(), caller.organizationId, system))!, account };
}

test('a connection to a private, link-local or loopback address is refused at the call, without connecting: accounting and fiscal', async (t) => {
  const simulatorLoopback = api().service.connectors.simulatorUrl!;
  for (const [baseUrl, reason] of [
    ['https://10.255.255.1', /10\.255\.255\.1, a private address, which connectors may not reach/],
    ['https://169.254.169.254', /a linkLocal address/],
    ['https://localhost:9', /resolves to (127\.0\.0\.1|::1), a loopback address/],
    // The simulators' own address is reachable only as `simulator`, never as a URL an operator typed.
    [`${simulatorLoopback}/quickbooks`, /connector URLs must use https/],
  ] as const) {
    const started = Date.now();
    const { connection } = await connected('accounting', baseUrl);
    const answer = await accountingConnectorOf(connection, api().service.connectors).holds({
      type: 'Invoice',
      id: '1',
    });
    t.like(answer, { ok: false, failure: { kind: 'rejected', code: 'destination_refused' } }, baseUrl);
    if (!answer.ok) t.regex(answer.failure.message, reason, baseUrl);
    t.true(Date.now() - started < 2_000, `${baseUrl}: refused before any connection (no timeout waited)`);
  }
  const { connection } = await connected('fiscal', 'https://192.168.7.7/efris');
  const answer = await fiscalConnectorOf(connection, api().service.connectors).queryCreditNote('CN-000001');
  t.like(answer, { ok: false, failure: { kind: 'rejected', code: 'destination_refused' } });
  if (!answer.ok) t.regex(answer.failure.message, /EFRIS was not called: .*192\.168\.7\.7, a private address/);
});

test('a redirecting endpoint is not followed: the call fails naming the Location (QuickBooks and EFRIS simulators)', async (t) => {
  const accounting = await connected('accounting', SIMULATOR_BASE_URL);
  await injectFailure(db(), 'accounting', accounting.account, 'redirect', 1);
  const started = Date.now();
  const quickBooks = await accountingConnectorOf(accounting.connection, api().service.connectors).holds({
    type: 'Invoice',
    id: '1',
  });
  t.like(quickBooks, { ok: false, failure: { kind: 'rejected', code: 'redirect' } });
  if (!quickBooks.ok)
    t.regex(
      quickBooks.failure.message,
      new RegExp(
        `QuickBooks answered HTTP 307 redirecting to ${SIMULATED_REDIRECT_LOCATION.replace(/[.]/g, '\\.')}; redirects are not followed`,
      ),
    );
  t.true(Date.now() - started < 2_000, 'answered at once: the metadata address was never tried');

  const fiscal = await connected('fiscal', SIMULATOR_BASE_URL);
  await injectFailure(db(), 'fiscal', fiscal.account, 'redirect', 1);
  const efris = await fiscalConnectorOf(fiscal.connection, api().service.connectors).queryCreditNote('CN-000001');
  t.like(efris, { ok: false, failure: { kind: 'rejected', code: 'redirect' } });
  if (!efris.ok) t.regex(efris.failure.message, /EFRIS answered HTTP 307 redirecting to http:\/\/169\.254\.169\.254\//);

  // The failure was the redirect alone: the next call reaches the simulator.
  const again = await fiscalConnectorOf(fiscal.connection, api().service.connectors).queryCreditNote('CN-000001');
  t.false(!again.ok && again.failure.kind === 'rejected' && again.failure.code === 'redirect');
});
