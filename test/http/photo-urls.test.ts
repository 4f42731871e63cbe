// Issue 34, item 6: photo URLs were built from the request's Host header, so `Host: evil.example` got a signed URL on
// that host (a client following it hands the photo's signature to whoever holds the name). They are built on the
// configured PUBLIC_BASE_URL (here with a path prefix, as behind a proxy), or the listen address in the sandbox
// (test/http/field-activity.test.ts); the photo itself is sent with X-Content-Type-Options: nosniff.
import test from 'ava';
import http from 'node:http';
import { operatorActor } from '../../server/platform/access/actor.js';
import { customers } from '../../server/modules/customers/service.js';
import { recordObservation, recordVisit } from '../../server/modules/field-activity/service.js';
import { syntheticPng } from '../../server/modules/sandbox/synthetic-field-activity.js';
import { salespeople } from '../../server/modules/salespeople/service.js';
import { actingOrganization, getOrganization } from '../../server/platform/access/organizations.js';
import { kyselyOver } from '../../server/platform/database/database.js';
import { inTransaction } from '../../server/platform/database/transaction.js';
import { createCaller } from '../support/callers.js';
import { useTestService } from '../support/service.js';

const PUBLIC_BASE_URL = 'https://erp.example.com/distributor';
const api = useTestService(test, 'photo_urls', { env: { PUBLIC_BASE_URL: `${PUBLIC_BASE_URL}/` } });

/** GET with a Host header of the caller's choosing (fetch would send the URL's own). */
function getWithHost(
  path: string,
  host: string,
  headers: Record<string, string>,
): Promise<{ status: number; body: any }> {
  const target = new URL(api().baseUrl);
  return new Promise((resolve, reject) => {
    http
      .get(
        { hostname: target.hostname, port: target.port, path: `/api/v1${path}`, headers: { ...headers, host } },
        (response) => {
          let text = '';
          response.on('data', (chunk: Buffer) => {
            text += chunk;
          });
          response.on('end', () => resolve({ status: response.statusCode ?? 0, body: JSON.parse(text) }));
        },
      )
      .on('error', reject);
  });
}

test('a request with Host: evil.example gets photo URLs on PUBLIC_BASE_URL, and the photo is served with nosniff', async (t) => {
  const caller = await createCaller(api().service.database.pool);
  const db = kyselyOver(api().service.database.pool);
  const operator = operatorActor(
    actingOrganization(await getOrganization(db, caller.organizationId)),
    'photo url test',
  );
  const png = syntheticPng(4, 4, [10, 200, 30]);
  const observed = await inTransaction(db, async (tx) => {
    const shop = await customers.create(tx, operator, { outletCode: 'UG0000001', name: 'Shop', channel: 'retail' });
    const person = await salespeople.create(tx, operator, { salesmanCode: 'SM01', name: 'Joseph Okello' });
    const visit = await recordVisit(tx, operator, {
      customerId: shop.id,
      salespersonId: person.id,
      checkInAt: '2026-11-02T07:00:00.000Z',
      checkOutAt: '2026-11-02T07:20:00.000Z',
      outcome: 'sale',
    });
    return recordObservation(tx, operator, {
      visitId: visit.id,
      customerId: shop.id,
      observedBy: person.id,
      brand: 'Rival Cola',
      isOwnBrand: false,
      quantity: 3,
      observedAt: '2026-11-02',
      photo: png,
    });
  });

  const listed = await getWithHost('/competitor-observations', 'evil.example', caller.auth);
  t.is(listed.status, 200);
  const photoUrl: string = listed.body.data[0].photoUrl;
  t.true(photoUrl.startsWith(`${PUBLIC_BASE_URL}/api/v1/photos/${observed.photoId}?`), photoUrl);
  t.notRegex(photoUrl, /evil\.example/);

  // The same path on the listen address (the proxy's job in a deployment): the bytes, with nosniff.
  const path = photoUrl.slice(`${PUBLIC_BASE_URL}/api/v1`.length);
  const served = await api().request('GET', path);
  t.is(served.status, 200);
  t.is(served.headers.get('x-content-type-options'), 'nosniff');
  t.is(served.headers.get('content-type'), 'image/png');
  // A refused URL carries it too: every answer of the keyless photo operation.
  const refused = await api().request('GET', path.replace(/signature=[^&]+/, `signature=${'A'.repeat(43)}`));
  t.is(refused.status, 403);
  t.is(refused.headers.get('x-content-type-options'), 'nosniff');
});
