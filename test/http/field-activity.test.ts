// The field activity reads over HTTP: the three lists and their filters, competitor observations newest
// observation date first across pages, photoUrl only with customers:pii, the signed photo URL that serves the
// bytes and is refused when expired or edited, and a filter id of another organisation as 404.
import test from 'ava';
import { operatorActor, type OperatorActor } from '../../server/platform/access/actor.js';
import { customers } from '../../server/modules/customers/service.js';
import { photoUrlSigner } from '../../server/modules/field-activity/photos.js';
import { recordActivity, recordObservation, recordVisit } from '../../server/modules/field-activity/service.js';
import { syntheticPng } from '../../server/modules/sandbox/synthetic-field-activity.js';
import { salespeople } from '../../server/modules/salespeople/service.js';
import { actingOrganization, getOrganization } from '../../server/platform/access/organizations.js';
import { kyselyOver } from '../../server/platform/database/database.js';
import { inTransaction, type Tx } from '../../server/platform/database/transaction.js';
import { createCaller, type TestCaller } from '../support/callers.js';
import { useSharedService } from '../support/service.js';

const api = useSharedService(test);
const db = () => kyselyOver(api().pool);
const post = <T>(fn: (tx: Tx) => Promise<T>) => inTransaction(db(), fn);
const get = async (caller: TestCaller, path: string) => api().request('GET', path, { headers: caller.auth });
const ids = (body: { data: { id: string }[] }) => body.data.map((record) => record.id);

let outletNumber = 0;
/** An organisation with a key (every scope), two outlets and a salesperson. */
async function world() {
  const caller = await createCaller(api().pool);
  const operator: OperatorActor = operatorActor(
    actingOrganization(await getOrganization(db(), caller.organizationId)),
    'field activity test',
  );
  const [a, b] = await Promise.all(
    [1, 2].map(() =>
      post((tx) =>
        customers.create(tx, operator, {
          outletCode: `UG${String(++outletNumber).padStart(7, '0')}`,
          name: 'Shop',
          channel: 'retail',
        }),
      ),
    ),
  );
  const person = await post((tx) => salespeople.create(tx, operator, { salesmanCode: 'SM01', name: 'Joseph Okello' }));
  return { caller, operator, a: a!.id, b: b!.id, salespersonId: person.id };
}

type World = Awaited<ReturnType<typeof world>>;
const visitAt = (w: World, customerId: string, day: string) =>
  post((tx) =>
    recordVisit(tx, w.operator, {
      customerId,
      salespersonId: w.salespersonId,
      checkInAt: `${day}T07:00:00.000Z`,
      checkOutAt: `${day}T07:20:00.000Z`,
      outcome: 'sale',
    }),
  );
const observe = (w: World, visit: { id: string; customerId: string }, observedAt: string, photo?: Buffer) =>
  post((tx) =>
    recordObservation(tx, w.operator, {
      visitId: visit.id,
      customerId: visit.customerId,
      observedBy: w.salespersonId,
      brand: 'Rival Cola',
      isOwnBrand: false,
      quantity: 3,
      observedAt,
      photo,
    }),
  );

test('visits and outlet activities: newest first, each filter keeps only its records, and the change feed is oldest change first', async (t) => {
  const w = await world();
  const v1 = await visitAt(w, w.a, '2026-11-02');
  const v2 = await visitAt(w, w.b, '2026-11-03');
  const v3 = await visitAt(w, w.a, '2026-11-04');
  const list = await get(w.caller, '/visits');
  t.is(list.status, 200);
  t.deepEqual(ids(list.body), [v3.id, v2.id, v1.id]);
  t.like(list.body.data[2], {
    customerId: w.a,
    salespersonId: w.salespersonId,
    tripId: null,
    visitDate: '2026-11-02',
    checkInAt: '2026-11-02T07:00:00.000Z',
    outcome: 'sale',
  });
  t.deepEqual(ids((await get(w.caller, `/visits?customerId=${w.a}`)).body), [v3.id, v1.id]);
  t.deepEqual(ids((await get(w.caller, `/visits?salespersonId=${w.salespersonId}&limit=2`)).body), [v3.id, v2.id]);
  t.deepEqual(ids((await get(w.caller, `/visits?updatedSince=2020-01-01T00:00:00Z`)).body), [v1.id, v2.id, v3.id]);

  const merch = await post((tx) =>
    recordActivity(tx, w.operator, {
      customerId: w.a,
      salespersonId: w.salespersonId,
      visitId: v1.id,
      kind: 'merchandising',
    }),
  );
  const survey = await post((tx) =>
    recordActivity(tx, w.operator, {
      customerId: w.b,
      salespersonId: w.salespersonId,
      kind: 'survey',
      description: 'Volumes',
      performedOn: '2026-11-05',
    }),
  );
  t.deepEqual(ids((await get(w.caller, '/outlet-activities')).body), [survey.id, merch.id]);
  t.deepEqual(ids((await get(w.caller, `/outlet-activities?visitId=${v1.id}`)).body), [merch.id]);
  t.deepEqual(ids((await get(w.caller, `/outlet-activities?customerId=${w.b}`)).body), [survey.id]);
  t.deepEqual(ids((await get(w.caller, '/outlet-activities?kind=merchandising')).body), [merch.id]);
  t.like((await get(w.caller, `/outlet-activities?visitId=${v1.id}`)).body.data[0], {
    visitId: v1.id,
    performedOn: '2026-11-02',
    description: null,
  });
});

test('competitor observations come newest observation date first (ties newest first) across pages, whatever order they were recorded in', async (t) => {
  const w = await world();
  const visit = await visitAt(w, w.a, '2026-11-02');
  const other = await visitAt(w, w.b, '2026-11-02');
  // Recorded in an order that is neither the date's nor its reverse: an id order would not pass.
  const o10 = await observe(w, visit, '2026-11-10');
  const o03 = await observe(w, visit, '2026-11-03');
  const o20 = await observe(w, other, '2026-11-20');
  const o10b = await observe(w, visit, '2026-11-10');
  const o01 = await observe(w, other, '2026-11-01');
  const expected = [o20, o10b, o10, o03, o01].map((o) => o.observation.id);

  const seen: string[] = [];
  let cursor: string | null = null;
  let pages = 0;
  do {
    const page = await get(w.caller, `/competitor-observations?limit=2${cursor ? `&cursor=${cursor}` : ''}`);
    t.is(page.status, 200);
    seen.push(...ids(page.body));
    cursor = page.body.nextCursor;
    pages += 1;
  } while (cursor);
  t.deepEqual(seen, expected);
  t.is(pages, 3);
  t.deepEqual(
    (await get(w.caller, '/competitor-observations')).body.data.map((o: { observedAt: string }) => o.observedAt),
    ['2026-11-20', '2026-11-10', '2026-11-10', '2026-11-03', '2026-11-01'],
  );
  t.deepEqual(ids((await get(w.caller, `/competitor-observations?customerId=${w.b}`)).body), [
    o20.observation.id,
    o01.observation.id,
  ]);
  const coded = await post((tx) =>
    recordObservation(tx, w.operator, {
      visitId: visit.id,
      customerId: w.a,
      observedBy: w.salespersonId,
      brand: 'Nile Fresh',
      isOwnBrand: false,
      quantity: 1,
      observedAt: '2026-11-02',
      externalCodes: { dms: 'OBS-000001' },
    }),
  );
  t.deepEqual(ids((await get(w.caller, '/competitor-observations?externalCode=OBS-000001')).body), [
    coded.observation.id,
  ]);
  t.deepEqual(ids((await get(w.caller, '/competitor-observations?externalCode=OBS-000002')).body), []);
  // The change feed is by updatedAt like every list: the recording order.
  t.deepEqual(
    ids((await get(w.caller, '/competitor-observations?updatedSince=2020-01-01T00:00:00Z')).body),
    [o10, o03, o20, o10b, o01, coded].map((o) => o.observation.id),
  );
  // A cursor of this list with another filter is refused.
  const first = await get(w.caller, '/competitor-observations?limit=1');
  const foreign = await get(
    w.caller,
    `/competitor-observations?limit=1&customerId=${w.a}&cursor=${first.body.nextCursor}`,
  );
  t.is(foreign.status, 400);
  t.is(foreign.body.code, 'invalid_field');
});

test('photoUrl only with customers:pii; the signed URL serves the bytes, and is refused once expired or edited', async (t) => {
  const w = await world();
  const visit = await visitAt(w, w.a, '2026-11-02');
  const png = syntheticPng(8, 6, [200, 30, 40]);
  const withPhoto = await observe(w, visit, '2026-11-02', png);
  const without = await observe(w, visit, '2026-11-01');
  const reader = await createCaller(api().pool, { organizationId: w.caller.organizationId, scopes: ['trips:read'] });

  const plain = await get(reader, '/competitor-observations');
  t.is(plain.status, 200);
  t.deepEqual(
    plain.body.data.map((o: object) => 'photoUrl' in o),
    [false, false],
    'omitted, not null, without customers:pii',
  );

  const personal = await get(w.caller, '/competitor-observations');
  const [first, second] = personal.body.data as { id: string; photoUrl: string | null }[];
  t.is(first!.id, withPhoto.observation.id);
  t.is(second!.photoUrl, null, 'null for an observation without a photo');
  const url = new URL(first!.photoUrl!);
  t.is(url.pathname, `/api/v1/photos/${withPhoto.photoId}`);
  t.is(
    url.origin,
    api().baseUrl,
    'without PUBLIC_BASE_URL, the sandbox builds URLs on its own listen address (the port PORT=0 bound)',
  );
  const expires = Number(url.searchParams.get('expires'));
  t.true(expires > Date.now() / 1000 + 240 && expires <= Date.now() / 1000 + 300, 'valid for 5 minutes');

  // No key: the URL is the permission.
  const served = await fetch(url);
  t.is(served.status, 200);
  t.is(served.headers.get('content-type'), 'image/png');
  t.is(served.headers.get('x-content-type-options'), 'nosniff', 'a browser never sniffs another type');
  t.deepEqual(Buffer.from(await served.arrayBuffer()), png);
  t.truthy(without);

  const path = (u: URL) => u.pathname.slice('/api/v1'.length) + u.search;
  const edited = new URL(url);
  edited.searchParams.set('expires', String(expires + 3600));
  const longer = await api().request('GET', path(edited));
  t.is(longer.status, 403);
  t.is(longer.body.code, 'invalid_signature');
  const anotherOrg = new URL(url);
  const other = await createCaller(api().pool);
  anotherOrg.searchParams.set('organizationId', other.organizationId);
  t.is((await api().request('GET', path(anotherOrg))).body.code, 'invalid_signature');

  // Signed alike but past its expiry: as the same URL read 10 minutes after the list was.
  const stale = new URL(
    photoUrlSigner(api().config.cursorSecret).url(
      url.origin,
      w.caller.organizationId,
      withPhoto.photoId!,
      new Date(Date.now() - 10 * 60_000),
    ),
  );
  const expired = await api().request('GET', path(stale));
  t.is(expired.status, 403);
  t.is(expired.body.code, 'url_expired');
  // ...and a URL signed with another secret is not this deployment's.
  const forged = new URL(
    photoUrlSigner('another-deployment-secret').url(url.origin, w.caller.organizationId, withPhoto.photoId!),
  );
  t.is((await api().request('GET', path(forged))).body.code, 'invalid_signature');
});

test('a filter id of another organisation (or of none) is 404 not_found naming the parameter; its own records answer 200', async (t) => {
  const owner = await world();
  const stranger = await world();
  const visit = await visitAt(owner, owner.a, '2026-11-02');
  for (const path of [
    `/visits?customerId=${owner.a}`,
    `/visits?salespersonId=${owner.salespersonId}`,
    '/visits?tripId=trp_01JD4R7Q8S6T9V3X5Z7B9D1F3H',
    `/outlet-activities?customerId=${owner.a}`,
    `/outlet-activities?visitId=${visit.id}`,
    `/competitor-observations?customerId=${owner.a}`,
  ]) {
    const answer = await get(stranger.caller, path);
    t.is(answer.status, 404, path);
    t.is(answer.body.code, 'not_found', path);
    t.is(answer.body.errors[0].field, `/query/${path.split('?')[1]!.split('=')[0]}`, path);
    if (!path.includes('tripId')) t.is((await get(owner.caller, path)).status, 200, path);
  }
});
