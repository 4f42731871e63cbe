// `admin period close | reopen`, run as an operator runs it (one test: CLI processes are costly). The rule itself,
// period_closed on documents and cancels, is proved in test/domain/orders.test.ts.
import test from 'ava';
import { runCli, runCliJson } from '../support/cli.js';
import { domainWorld, type DomainWorld } from '../support/domain.js';

let world: DomainWorld;
test.before(async () => {
  world = await domainWorld('period_cli');
});
test.after.always(async () => {
  await world?.close();
});

test('period close sets the date the books are closed through; reopen moves it back or clears it; a backwards close is exit 1, a bad date exit 2', async (t) => {
  const { organization } = await world.organization();
  const env = { DATABASE_URL: world.database.url };
  const through = async () =>
    (
      await world.db
        .selectFrom('organizations')
        .select('books_closed_through')
        .where('id', '=', organization.id)
        .executeTakeFirstOrThrow()
    ).books_closed_through;

  t.deepEqual(
    await runCliJson(['period', 'close', '--org', organization.id, '--through', '2026-10-31', '--json'], env),
    { organizationId: organization.id, booksClosedThrough: '2026-10-31', previous: null },
  );
  t.truthy(await through());

  const backwards = await runCli(['period', 'close', '--org', organization.id, '--through', '2026-09-30'], env);
  t.is(backwards.code, 1);
  t.regex(backwards.stderr, /closed through 2026-10-31.*period reopen --through 2026-09-30/);

  const badDate = await runCli(['period', 'reopen', '--org', organization.id, '--through', '2026-02-30'], env);
  t.is(badDate.code, 2);

  const reopened = await runCli(['period', 'reopen', '--org', organization.id], env);
  t.is(reopened.code, 0, reopened.stderr);
  t.regex(reopened.stdout, /no period is closed \(they were closed through 2026-10-31\)/);
  t.is(await through(), null);
});
