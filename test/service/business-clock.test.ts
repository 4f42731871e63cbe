// The business clock (server/platform/clock.ts): "today" and the reconciliation's cut-off follow it, a test-only
// offset moves it, and production refuses the offset. The suite's own proof that nothing depends on the date it runs
// is the fuzz pass, whose service runs 60 days ahead (test/fuzz/operations.fuzz.test.ts), and the whole suite run as
// `TEST_CLOCK_OFFSET_DAYS=60 npm test` (README, "Tests and the date").
import test from 'ava';
import { ConfigError, loadConfig } from '../../server/platform/config.js';
import { businessToday, setClockOffsetDays } from '../../server/platform/clock.js';
import { reconcileDue } from '../../server/modules/dms/reconciliation.js';
import { domainWorld, type DomainWorld } from '../support/domain.js';
import { DAY, dmsShop, masterData, saleInvoice, stockDay } from '../support/dms.js';

let world: DomainWorld;
test.before(async () => { world = await domainWorld('business-clock'); });
test.after.always(async () => {
  setClockOffsetDays(0);
  await world?.close();
});

test('TEST_CLOCK_OFFSET_DAYS takes whole days, and production refuses it, naming the variable', (t) => {
  t.is(loadConfig({ TEST_CLOCK_OFFSET_DAYS: '60' }).testClockOffsetDays, 60);
  t.is(loadConfig({ TEST_CLOCK_OFFSET_DAYS: '-7' }).testClockOffsetDays, -7);
  t.regex(t.throws(() => loadConfig({ TEST_CLOCK_OFFSET_DAYS: '1.5' }), { instanceOf: ConfigError })!.message, /TEST_CLOCK_OFFSET_DAYS="1.5" is invalid/);
  const production = { ENVIRONMENT: 'production', DATABASE_URL: 'postgresql://db/erp', CURSOR_SECRET: 'x'.repeat(16), WEBHOOK_SECRET_KEY: 'a'.repeat(64) };
  t.regex(t.throws(() => loadConfig({ ...production, TEST_CLOCK_OFFSET_DAYS: '60' }), { instanceOf: ConfigError })!.message, /TEST_CLOCK_OFFSET_DAYS cannot be set when ENVIRONMENT=production/);
});

test.serial('the offset moves today, and the reconciliation reconciles only the days past their cut-off by that clock', async (t) => {
  const shop = await dmsShop(world);
  const flags = await shop.push(masterData.soda, masterData.prices, masterData.salesman(), masterData.customer('UG0000001'),
    ...stockDay(20), saleInvoice('CSR01000001', 'UG0000001', 1, { method: 'cash' }));
  t.deepEqual(flags.map((flag) => flag.state).filter((state) => state !== 'posted'), []);

  // A clock far behind the documents' day: that day has not closed yet, nothing is reconciled.
  const daysBefore = Math.round((Date.parse(`${DAY}T00:00:00Z`) - Date.now()) / 86_400_000) - 30;
  setClockOffsetDays(daysBefore);
  t.true(businessToday() < DAY);
  t.is(await reconcileDue(world.db, undefined, shop.organizationId), 0);

  // Sixty days ahead: the day is long closed and reconciled once, and again only when it changes.
  setClockOffsetDays(60);
  t.is(businessToday(), new Date(Date.now() + 60 * 86_400_000).toISOString().slice(0, 10));
  t.is(await reconcileDue(world.db, undefined, shop.organizationId), 1);
  t.is(await reconcileDue(world.db, undefined, shop.organizationId), 0);
});
