// `admin field visit | activity | observation`, run as an operator runs them: each records through the
// field-activity module's posting functions and prints the record; the photo is read from a file; a refused
// record exits 1 with the rule's message and writes nothing. (Each CLI run costs a process: one test.)
import test from 'ava';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { customers } from '../../server/modules/customers/service.js';
import { syntheticPng } from '../../server/modules/sandbox/synthetic-field-activity.js';
import { salespeople } from '../../server/modules/salespeople/service.js';
import { runCli, runCliJson } from '../support/cli.js';
import { domainWorld, type DomainWorld } from '../support/domain.js';

let world: DomainWorld;
test.before(async () => {
  world = await domainWorld('field_cli');
});
test.after.always(async () => {
  await world?.close();
});

test('field visit, activity and observation --photo record and print; a customer of another organisation exits 1', async (t) => {
  const { organization, operator } = await world.organization();
  const customer = await world.post((tx) =>
    customers.create(tx, operator, { outletCode: 'UG0000001', name: 'Shop', channel: 'retail' }),
  );
  const person = await world.post((tx) =>
    salespeople.create(tx, operator, { salesmanCode: 'SM01', name: 'Joseph Okello' }),
  );
  const stranger = await world.organization();
  const theirs = await world.post((tx) =>
    customers.create(tx, stranger.operator, { outletCode: 'UG0000002', name: 'Elsewhere', channel: 'retail' }),
  );
  const env = { DATABASE_URL: world.database.url };
  const dir = mkdtempSync(join(tmpdir(), 'erp-field-cli-'));
  try {
    const png = syntheticPng(6, 6, [0, 120, 255]);
    writeFileSync(join(dir, 'shelf.png'), png);
    const org = ['--org', organization.id];

    const visit = await runCliJson(
      [
        'field',
        'visit',
        ...org,
        '--customer',
        customer.id,
        '--salesperson',
        person.id,
        '--check-in',
        '2026-11-20T07:42:00Z',
        '--outcome',
        'no_sale',
        '--reason',
        'Owner away',
      ],
      env,
    );
    t.like(visit, {
      customerId: customer.id,
      salespersonId: person.id,
      visitDate: '2026-11-20',
      outcome: 'no_sale',
      noSaleReason: 'Owner away',
    });
    const activity = await runCliJson(
      [
        'field',
        'activity',
        ...org,
        '--customer',
        customer.id,
        '--salesperson',
        person.id,
        '--visit',
        visit.id,
        '--kind',
        'cooler_check',
      ],
      env,
    );
    t.like(activity, { visitId: visit.id, kind: 'cooler_check', performedOn: '2026-11-20' });
    const recorded = await runCliJson(
      [
        'field',
        'observation',
        ...org,
        '--visit',
        visit.id,
        '--customer',
        customer.id,
        '--observer',
        person.id,
        '--brand',
        'Rival Cola',
        '--quantity',
        '7',
        '--photo',
        join(dir, 'shelf.png'),
      ],
      env,
    );
    t.like(recorded.observation, {
      visitId: visit.id,
      brand: 'Rival Cola',
      isOwnBrand: false,
      quantity: 7,
      observedAt: '2026-11-20',
    });
    const stored = await world.db
      .selectFrom('photos')
      .select(['bytes', 'content_type'])
      .where('organization_id', '=', organization.id)
      .where('id', '=', recorded.photoId)
      .executeTakeFirstOrThrow();
    t.is(stored.content_type, 'image/png');
    t.true(stored.bytes.equals(png), "the file's bytes, as they were");

    const refused = await runCli(
      [
        'field',
        'visit',
        ...org,
        '--customer',
        theirs.id,
        '--salesperson',
        person.id,
        '--check-in',
        '2026-11-20T09:00:00Z',
        '--outcome',
        'sale',
      ],
      env,
    );
    t.is(refused.code, 1);
    t.regex(refused.stderr, new RegExp(`no customer ${theirs.id} in this organisation`));
    const visits = await world.db
      .selectFrom('visits')
      .select('id')
      .where('organization_id', '=', organization.id)
      .execute();
    t.deepEqual(
      visits.map((v) => v.id),
      [visit.id],
    );
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
});
