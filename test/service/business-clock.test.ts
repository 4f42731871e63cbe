// The business clock (server/platform/clock.ts): "today" and the reconciliation's cut-off follow it, a test-only
// offset moves it, and production refuses the offset. The suite's own proof that nothing depends on the date it runs
// is the fuzz pass, whose service runs 60 days ahead (test/fuzz/operations.fuzz.test.ts), and the whole suite run as
// `TEST_CLOCK_OFFSET_DAYS=60 npm test` (README, "Tests and the date").
import test from 'ava';
import { ConfigError, loadConfig } from '../../server/platform/config.js';
import {
  businessNow,
  businessTodayIn,
  isIanaTimeZone,
  localTimeIn,
  setClockOffsetDays,
} from '../../server/platform/clock.js';
import { lastClosedDate, reconcileDue } from '../../server/modules/dms/reconciliation.js';
import { organizationToday, updateOrganization } from '../../server/platform/access/organizations.js';
import { domainWorld, type DomainWorld } from '../support/domain.js';
import { DAY, dmsShop, masterData, saleInvoice, stockDay } from '../support/dms.js';

let world: DomainWorld;
test.before(async () => {
  world = await domainWorld('business-clock');
});
test.after.always(async () => {
  setClockOffsetDays(0);
  await world?.close();
});

test('TEST_CLOCK_OFFSET_DAYS takes whole days, and production refuses it, naming the variable', (t) => {
  t.is(loadConfig({ TEST_CLOCK_OFFSET_DAYS: '60' }).testClockOffsetDays, 60);
  t.is(loadConfig({ TEST_CLOCK_OFFSET_DAYS: '-7' }).testClockOffsetDays, -7);
  t.regex(
    t.throws(() => loadConfig({ TEST_CLOCK_OFFSET_DAYS: '1.5' }), { instanceOf: ConfigError })!.message,
    /TEST_CLOCK_OFFSET_DAYS="1.5" is invalid/,
  );
  const production = {
    ENVIRONMENT: 'production',
    DATABASE_URL: 'postgresql://db/erp',
    CURSOR_SECRET: 'x'.repeat(16),
    WEBHOOK_SECRET_KEY: 'a'.repeat(64),
  };
  t.regex(
    t.throws(() => loadConfig({ ...production, TEST_CLOCK_OFFSET_DAYS: '60' }), { instanceOf: ConfigError })!.message,
    /TEST_CLOCK_OFFSET_DAYS cannot be set when ENVIRONMENT=production/,
  );
});

test.serial(
  'the offset moves today, and the reconciliation reconciles only the days past their cut-off by that clock',
  async (t) => {
    const shop = await dmsShop(world);
    const flags = await shop.push(
      masterData.soda,
      masterData.prices,
      masterData.salesman(),
      masterData.customer('UG0000001'),
      ...stockDay(20),
      saleInvoice('CSR01000001', 'UG0000001', 1, { method: 'cash' }),
    );
    t.deepEqual(
      flags.map((flag) => flag.state).filter((state) => state !== 'posted'),
      [],
    );

    // A clock far behind the documents' day: that day has not closed yet, nothing is reconciled.
    const daysBefore = Math.round((Date.parse(`${DAY}T00:00:00Z`) - Date.now()) / 86_400_000) - 30;
    setClockOffsetDays(daysBefore);
    t.true(businessTodayIn('UTC') < DAY);
    t.is(await reconcileDue(world.db, undefined, shop.organizationId), 0);

    // Sixty days ahead: the day is long closed and reconciled once, and again only when it changes.
    setClockOffsetDays(60);
    t.is(businessTodayIn('UTC'), new Date(Date.now() + 60 * 86_400_000).toISOString().slice(0, 10));
    t.is(await reconcileDue(world.db, undefined, shop.organizationId), 1);
    t.is(await reconcileDue(world.db, undefined, shop.organizationId), 0);
  },
);

test("a business date is the distributor's local date: businessTodayIn follows the zone, and past 21:00 UTC it is already tomorrow in Kampala", (t) => {
  t.deepEqual(localTimeIn(new Date('2026-11-26T21:30:00.000Z'), 'Africa/Kampala'), { date: '2026-11-27', minutes: 30 });
  t.deepEqual(localTimeIn(new Date('2026-11-26T21:30:00.000Z'), 'UTC'), { date: '2026-11-26', minutes: 21 * 60 + 30 });
  t.is(businessTodayIn('UTC'), businessNow().toISOString().slice(0, 10));
  t.is(
    businessTodayIn('Africa/Kampala'),
    localTimeIn(businessNow(), 'Africa/Kampala').date,
    'on the business clock, offset included',
  );
  t.true(isIanaTimeZone('Africa/Kampala') && isIanaTimeZone('Europe/London') && isIanaTimeZone('UTC'));
  for (const bad of ['Africa/Kampal', '+03:00', 'EAT', '', 'Kampala']) t.false(isIanaTimeZone(bad), bad);
});

test("a 20:00 cut-off is 20:00 in the organisation's zone: at 17:30 UTC (20:30 in Kampala) the day is closed in Kampala, not in a UTC organisation", async (t) => {
  t.is(lastClosedDate(new Date(`${DAY}T17:30:00.000Z`), '20:00', 'Africa/Kampala'), DAY);
  t.is(lastClosedDate(new Date(`${DAY}T17:30:00.000Z`), '20:00', 'UTC'), '2026-11-24');
  t.is(lastClosedDate(new Date(`${DAY}T16:59:00.000Z`), '20:00', 'Africa/Kampala'), '2026-11-24', '19:59 in Kampala');

  const at = new Date(`${DAY}T17:30:00.000Z`);
  const kampala = await dmsShop(world);
  const utc = await dmsShop(world);
  await updateOrganization(world.db, utc.organizationId, { timeZone: 'UTC' });
  for (const shop of [kampala, utc]) {
    await shop.push(
      masterData.soda,
      masterData.prices,
      masterData.salesman(),
      masterData.customer('UG0000001'),
      ...stockDay(20),
      saleInvoice('CSR01000001', 'UG0000001', 1, { method: 'cash' }),
    );
  }
  t.is(await reconcileDue(world.db, at, kampala.organizationId), 1, 'Kampala: past its 20:00');
  t.is(await reconcileDue(world.db, at, utc.organizationId), 0, 'UTC: 17:30, before its 20:00');
  await t.throwsAsync(updateOrganization(world.db, utc.organizationId, { timeZone: 'Mars/Olympus' }), {
    message: /--time-zone must be an IANA time zone/,
  });
});

test("an organisation's today (the default date of its credit notes, returns and activities) is the business clock's date in its zone", async (t) => {
  t.is(
    await organizationToday(world.db, (await world.organization()).organization.id),
    businessTodayIn('Africa/Kampala'),
  );
});
