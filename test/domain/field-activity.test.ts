// The rules of recording field activity, at the service level: every record a command names must be the
// organisation's (422 naming the field), an activity or observation on a visit is at that visit's outlet, and a
// photo is a PNG or JPEG of at most 2 MB, stored with its sha256; a refused command writes nothing.
import test from 'ava';
import { createHash } from 'node:crypto';
import type { OperatorActor } from '../../server/platform/access/actor.js';
import { customers } from '../../server/modules/customers/service.js';
import { MAX_PHOTO_BYTES } from '../../server/modules/field-activity/photos.js';
import {
  recordActivity,
  recordObservation,
  recordObservations,
  recordVisit,
  recordVisits,
} from '../../server/modules/field-activity/service.js';
import { syntheticPng } from '../../server/modules/sandbox/synthetic-field-activity.js';
import { salespeople } from '../../server/modules/salespeople/service.js';
import { ApiError } from '../../server/platform/errors/api-error.js';
import { domainWorld, type DomainWorld } from '../support/domain.js';

let world: DomainWorld;
test.before(async () => {
  world = await domainWorld('field_activity');
});
test.after.always(async () => {
  await world?.close();
});

let outletNumber = 0;
async function setUp(): Promise<{
  operator: OperatorActor;
  customerId: string;
  otherCustomerId: string;
  salespersonId: string;
}> {
  const { operator } = await world.organization();
  const [a, b] = await Promise.all(
    [1, 2].map(() =>
      world.post((tx) =>
        customers.create(tx, operator, {
          outletCode: `UG${String(++outletNumber).padStart(7, '0')}`,
          name: 'Shop',
          channel: 'retail',
        }),
      ),
    ),
  );
  const person = await world.post((tx) =>
    salespeople.create(tx, operator, { salesmanCode: 'SM01', name: 'Joseph Okello' }),
  );
  return { operator, customerId: a!.id, otherCustomerId: b!.id, salespersonId: person.id };
}

const refusal = (error: unknown) => {
  const e = error as ApiError;
  return `${e.code} ${e.errors?.map((f) => f.field).join(',')}`;
};
const count = async (
  table: 'visits' | 'outlet_activities' | 'competitor_observations' | 'photos',
  organizationId: string,
) =>
  Number(
    (
      await world.db
        .selectFrom(table)
        .select((eb) => eb.fn.countAll<string>().as('n'))
        .where('organization_id', '=', organizationId)
        .executeTakeFirstOrThrow()
    ).n,
  );

test("recording refuses another organisation's customer, salesperson and visit, naming the field, and writes nothing", async (t) => {
  const mine = await setUp();
  const theirs = await setUp();
  const org = mine.operator.organization.id;
  const visitOf = (s: typeof mine) =>
    world.post((tx) =>
      recordVisit(tx, s.operator, {
        customerId: s.customerId,
        salespersonId: s.salespersonId,
        checkInAt: '2026-11-02T07:00:00Z',
        outcome: 'sale',
      }),
    );
  const myVisit = await visitOf(mine);
  const theirVisit = await visitOf(theirs);
  t.is(myVisit.visitDate, '2026-11-02');

  const visit = (patch: object) =>
    world.post((tx) =>
      recordVisit(tx, mine.operator, {
        customerId: mine.customerId,
        salespersonId: mine.salespersonId,
        checkInAt: '2026-11-02T07:00:00Z',
        outcome: 'sale',
        ...patch,
      }),
    );
  t.is(
    refusal(await t.throwsAsync(visit({ customerId: theirs.customerId }), { instanceOf: ApiError })),
    'customer_not_found /customerId',
  );
  t.is(
    refusal(await t.throwsAsync(visit({ salespersonId: theirs.salespersonId }), { instanceOf: ApiError })),
    'business_rule /salespersonId',
  );
  t.is(
    refusal(await t.throwsAsync(visit({ tripId: 'trp_01JD4R7Q8S6T9V3X5Z7B9D1F3H' }), { instanceOf: ApiError })),
    'business_rule /tripId',
  );
  t.is(
    refusal(await t.throwsAsync(visit({ checkOutAt: '2026-11-02T06:00:00Z' }), { instanceOf: ApiError })),
    'business_rule /checkOutAt',
  );
  t.is(refusal(await t.throwsAsync(visit({ outcome: 'maybe' }), { instanceOf: ApiError })), 'invalid_field /outcome');

  const activity = (patch: object) =>
    world.post((tx) =>
      recordActivity(tx, mine.operator, {
        customerId: mine.customerId,
        salespersonId: mine.salespersonId,
        kind: 'survey',
        ...patch,
      }),
    );
  t.is(
    refusal(await t.throwsAsync(activity({ customerId: theirs.customerId }), { instanceOf: ApiError })),
    'customer_not_found /customerId',
  );
  t.is(
    refusal(await t.throwsAsync(activity({ salespersonId: theirs.salespersonId }), { instanceOf: ApiError })),
    'business_rule /salespersonId',
  );
  t.is(
    refusal(await t.throwsAsync(activity({ visitId: theirVisit.id }), { instanceOf: ApiError })),
    'business_rule /visitId',
  );
  t.is(
    refusal(
      await t.throwsAsync(activity({ visitId: myVisit.id, customerId: mine.otherCustomerId }), {
        instanceOf: ApiError,
      }),
    ),
    'business_rule /visitId',
    'on a visit, at its outlet',
  );

  const observation = (patch: object) =>
    world.post((tx) =>
      recordObservation(tx, mine.operator, {
        visitId: myVisit.id,
        customerId: mine.customerId,
        observedBy: mine.salespersonId,
        brand: 'Rival Cola',
        isOwnBrand: false,
        quantity: 4,
        ...patch,
      }),
    );
  t.is(
    refusal(await t.throwsAsync(observation({ customerId: theirs.customerId }), { instanceOf: ApiError })),
    'customer_not_found /customerId',
  );
  t.is(
    refusal(await t.throwsAsync(observation({ observedBy: theirs.salespersonId }), { instanceOf: ApiError })),
    'business_rule /observedBy',
  );
  t.is(
    refusal(await t.throwsAsync(observation({ visitId: theirVisit.id }), { instanceOf: ApiError })),
    'business_rule /visitId',
  );
  t.is(
    refusal(await t.throwsAsync(observation({ quantity: -1 }), { instanceOf: ApiError })),
    'invalid_field /quantity',
  );

  t.deepEqual(
    [await count('visits', org), await count('outlet_activities', org), await count('competitor_observations', org)],
    [1, 0, 0],
    'only the first visit was written',
  );
  const ok = await observation({});
  t.is(ok.observation.observedAt, '2026-11-02', "the visit's day by default");
  t.is(ok.photoId, null);
});

test("the batch forms (the sandbox's) apply the same rules, naming the member: one bad member and nothing is written", async (t) => {
  const mine = await setUp();
  const theirs = await setUp();
  const org = mine.operator.organization.id;
  const good = {
    customerId: mine.customerId,
    salespersonId: mine.salespersonId,
    checkInAt: '2026-11-02T07:00:00Z',
    outcome: 'sale',
  };
  const error = await t.throwsAsync(
    world.post((tx) => recordVisits(tx, mine.operator, [good, { ...good, customerId: theirs.customerId }, good])),
    { instanceOf: ApiError },
  );
  t.is(refusal(error), 'customer_not_found /1/customerId');
  t.is(
    refusal(
      await t.throwsAsync(
        world.post((tx) => recordVisits(tx, mine.operator, [good, { ...good, salespersonId: theirs.salespersonId }])),
        { instanceOf: ApiError },
      ),
    ),
    'business_rule /1/salespersonId',
  );
  t.is(await count('visits', org), 0);
  const [v1, v2] = await world.post((tx) =>
    recordVisits(tx, mine.operator, [good, { ...good, checkInAt: '2026-11-03T07:00:00Z' }]),
  );
  t.deepEqual([v1!.visitDate, v2!.visitDate], ['2026-11-02', '2026-11-03'], 'in the order given');
  const observation = {
    customerId: mine.customerId,
    observedBy: mine.salespersonId,
    brand: 'Rival Cola',
    isOwnBrand: false,
    quantity: 1,
  };
  t.is(
    refusal(
      await t.throwsAsync(
        world.post((tx) =>
          recordObservations(tx, mine.operator, [
            { ...observation, visitId: v1!.id },
            { ...observation, visitId: v2!.id, photo: Buffer.from('GIF89a') },
          ]),
        ),
        { instanceOf: ApiError },
      ),
    ),
    'unsupported_media_type /1/photo',
  );
  t.is(await count('competitor_observations', org), 0);
});

test('a photo must be a PNG or a JPEG (by its bytes) of at most 2 MB; an accepted one is stored with its type and sha256', async (t) => {
  const s = await setUp();
  const org = s.operator.organization.id;
  const visit = await world.post((tx) =>
    recordVisit(tx, s.operator, {
      customerId: s.customerId,
      salespersonId: s.salespersonId,
      checkInAt: '2026-11-02T07:00:00Z',
      outcome: 'sale',
    }),
  );
  const observe = (photo: Buffer) =>
    world.post((tx) =>
      recordObservation(tx, s.operator, {
        visitId: visit.id,
        customerId: s.customerId,
        observedBy: s.salespersonId,
        brand: 'Nile Fresh',
        isOwnBrand: false,
        quantity: 2,
        photo,
      }),
    );

  const gif = Buffer.from('GIF89a\x01\x00\x01\x00\x00\x00\x00;', 'latin1');
  t.is(refusal(await t.throwsAsync(observe(gif), { instanceOf: ApiError })), 'unsupported_media_type /photo');
  t.is(
    refusal(await t.throwsAsync(observe(Buffer.from('not an image')), { instanceOf: ApiError })),
    'unsupported_media_type /photo',
  );
  const png = syntheticPng(4, 4, [10, 200, 10]);
  const huge = Buffer.concat([png, Buffer.alloc(MAX_PHOTO_BYTES + 1 - png.length)]);
  t.is(refusal(await t.throwsAsync(observe(huge), { instanceOf: ApiError })), 'payload_too_large /photo');
  t.deepEqual(
    [await count('photos', org), await count('competitor_observations', org)],
    [0, 0],
    'a refused photo writes neither the photo nor the observation',
  );

  const accepted = await observe(png);
  const jpeg = Buffer.from([0xff, 0xd8, 0xff, 0xe0, 0x00, 0x10, 0x4a, 0x46, 0x49, 0x46, 0x00, 0xff, 0xd9]);
  const acceptedJpeg = await observe(jpeg);
  const rows = await world.db
    .selectFrom('photos')
    .select(['id', 'content_type', 'sha256', 'bytes'])
    .where('organization_id', '=', org)
    .orderBy('id')
    .execute();
  t.deepEqual(
    rows.map((r) => [
      r.id,
      r.content_type,
      r.sha256,
      Buffer.compare(r.bytes, r.content_type === 'image/png' ? png : jpeg),
    ]),
    [
      [accepted.photoId, 'image/png', createHash('sha256').update(png).digest('hex'), 0],
      [acceptedJpeg.photoId, 'image/jpeg', createHash('sha256').update(jpeg).digest('hex'), 0],
    ],
  );
});
