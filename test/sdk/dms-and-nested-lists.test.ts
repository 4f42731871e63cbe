// The SDK against lists and uploads under a path parameter: a DMS XML file goes out as its own bytes
// (application/xml), not as a JSON string, and the worker parses it; paginate and the change-feed poller take
// `params.path` as openapi-fetch does, and the poller the list's own feed parameter (`since` on DMS flags and trip
// trails) and the field naming its records (`documentId` on DMS flags).
import test from 'ava';
import {
  createChangeFeedPoller,
  createErpClient,
  MemoryCheckpointStore,
  paginate,
  paginatePages,
  uploadDmsFile,
  type ErpClient,
} from '../../client-sdk/src/index.js';
import { operatorActor } from '../../server/platform/access/actor.js';
import { addConnection } from '../../server/modules/dms/connections.js';
import { writeDmsFile } from '../../server/modules/dms/xml/write.js';
import { writeDistributor } from '../../server/modules/sandbox/sandbox-writer.js';
import { sandboxDistributor } from '../../server/modules/sandbox/synthetic-distributor.js';
import { actingOrganization, getOrganization } from '../../server/platform/access/organizations.js';
import { kyselyOver } from '../../server/platform/database/database.js';
import { inTransaction } from '../../server/platform/database/transaction.js';
import { ALL_SCOPES, createCaller } from '../support/callers.js';
import { dmsSetUp, masterData, saleInvoice, stockDay } from '../support/dms.js';
import { useSharedService } from '../support/service.js';
import { eventually } from '../webhooks/receiver.js';

const api = useSharedService(test);
const pool = () => api().pool;
const db = () => kyselyOver(pool());

/** An organisation with the DMS set up (route R01, its locations) and an asynchronous canonical connection. */
async function dmsShop(): Promise<ErpClient> {
  const caller = await createCaller(pool(), { scopes: ALL_SCOPES, modules: ['delivery', 'field-sales'] });
  const organization = actingOrganization(await getOrganization(db(), caller.organizationId));
  await inTransaction(db(), async (tx) => {
    await dmsSetUp(tx, operatorActor(organization, 'test'));
    await addConnection(tx, caller.organizationId, 'canonical', { distributorCode: 'DIST001', synchronous: false });
  });
  return createErpClient({ apiKey: caller.secret, baseUrl: `${api().baseUrl}/api/v1` });
}

async function parsed(erp: ErpClient, batchId: string) {
  return eventually(
    async () => {
      const { data } = await erp.GET('/dms/{system}/files/{batchId}', {
        params: { path: { system: 'canonical', batchId } },
      });
      return data.status === 'parsed' || data.status === 'failed' ? data : null;
    },
    20_000,
    `batch ${batchId} parsed`,
  );
}

const dayDocuments = () => [
  masterData.soda,
  masterData.prices,
  masterData.salesman(),
  masterData.customer('UG0000001'),
  ...stockDay(5),
  saleInvoice('CSR01000001', 'UG0000001', 2),
];

test("an XML file uploaded as the reference page's sample does (a string under application/xml) goes out as XML and is parsed", async (t) => {
  const erp = await dmsShop();
  const xml = writeDmsFile(dayDocuments());
  const { data: batch, response } = await erp.POST('/dms/{system}/files', {
    params: { path: { system: 'canonical' } },
    body: xml,
    headers: { 'Content-Type': 'application/xml' },
  });
  t.is(response.status, 202);
  t.is(batch.bytes, Buffer.byteLength(xml), 'the bytes of the file, not of a JSON string of it');
  const done = await parsed(erp, batch.batchId);
  t.is(done.error, null);
  t.is(done.status, 'parsed');
  t.is(done.documents, dayDocuments().length);
});

test('uploadDmsFile sends a Buffer or a Uint8Array as application/xml with the key given; the same key replays', async (t) => {
  const erp = await dmsShop();
  const documents = dayDocuments();
  const buffer = Buffer.from(writeDmsFile(documents), 'utf8');
  const first = await uploadDmsFile(erp, 'canonical', buffer, { idempotencyKey: 'dms-file-0001' });
  t.is(first.response.status, 202);
  t.is(first.data.bytes, buffer.length);
  const done = await parsed(erp, first.data.batchId);
  t.like(done, { status: 'parsed', error: null, documents: documents.length });

  const again = await uploadDmsFile(erp, 'canonical', new Uint8Array(buffer), { idempotencyKey: 'dms-file-0001' });
  t.is(again.response.headers.get('Idempotent-Replayed'), 'true');
  t.is(again.data.batchId, first.data.batchId);
});

test('paginate walks /dms/{system}/flags and /dms/{system}/reconciliations with params.path; the poller follows the flags by since and documentId', async (t) => {
  const erp = await dmsShop();
  const documents = dayDocuments();
  const { data: batch } = await uploadDmsFile(erp, 'canonical', writeDmsFile(documents));
  await parsed(erp, batch.batchId);
  await eventually(
    async () => {
      const { data } = await erp.GET('/dms/{system}/files/{batchId}', {
        params: { path: { system: 'canonical', batchId: batch.batchId } },
      });
      return data.counts.received === 0 ? data : null;
    },
    20_000,
    'every document final',
  );

  const flags: string[] = [];
  for await (const flag of paginate(erp, '/dms/{system}/flags', {
    params: { path: { system: 'canonical' }, query: { limit: 2 } },
  }))
    flags.push(flag.documentId);
  t.is(flags.length, documents.length);
  t.is(new Set(flags).size, documents.length, "each document's flag once");

  const pages = [];
  for await (const page of paginatePages(erp, '/dms/{system}/flags', {
    params: { path: { system: 'canonical' }, query: { limit: 3, state: 'rejected' } },
  }))
    pages.push(page);
  t.true(
    pages.every((page) => page.data.every((flag) => flag.state === 'rejected')),
    'the filters go with every page',
  );

  // No day was closed: an empty list, walked without the 400 a missing {system} gave.
  const reconciliations = [];
  for await (const reconciliation of paginate(erp, '/dms/{system}/reconciliations', {
    params: { path: { system: 'canonical' }, query: { limit: 5 } },
  }))
    reconciliations.push(reconciliation);
  t.deepEqual(reconciliations, []);

  const storage = new MemoryCheckpointStore();
  const poller = createChangeFeedPoller(erp, '/dms/{system}/flags', {
    storage,
    params: { path: { system: 'canonical' } },
    feedParameter: 'since',
    idField: 'documentId',
    query: { limit: 2 },
  });
  const handled: string[] = [];
  t.is(
    await poller.poll((flag) => {
      handled.push(flag.documentId);
    }),
    documents.length,
  );
  t.deepEqual([...handled].sort(), [...flags].sort());
  t.is(
    await poller.poll(() => {
      t.fail('nothing changed');
    }),
    0,
    'the overlap re-reads the flags and skips them by documentId and updatedAt',
  );
  t.deepEqual((await storage.load())!.handled.map((change) => change.id).sort(), [...flags].sort());
});

test("paginate and the poller walk a trip's trail (/trips/{id}/locations, fed by since)", async (t) => {
  const caller = await createCaller(pool(), { modules: ['delivery', 'field-sales'] });
  const organization = actingOrganization(await getOrganization(db(), caller.organizationId));
  await inTransaction(db(), (tx) =>
    writeDistributor(tx, operatorActor(organization, 'sdk test'), sandboxDistributor(30)),
  );
  const erp = createErpClient({ apiKey: caller.secret, baseUrl: `${api().baseUrl}/api/v1` });

  const { data: trips } = await erp.GET('/trips', { params: { query: { limit: 1 } } });
  const trip = trips.data[0]!;
  const { data: firstPage } = await erp.GET('/trips/{id}/locations', {
    params: { path: { id: trip.id }, query: { limit: 100 } },
  });
  t.true(firstPage.data.length > 0, 'the sandbox trip has fixes');

  const trail: string[] = [];
  for await (const fix of paginate(erp, '/trips/{id}/locations', {
    params: { path: { id: trip.id }, query: { limit: 2 } },
  }))
    trail.push(fix.id);
  t.is(new Set(trail).size, trail.length);
  t.true(trail.length >= firstPage.data.length);

  const poller = createChangeFeedPoller(erp, '/trips/{id}/locations', {
    storage: new MemoryCheckpointStore(),
    params: { path: { id: trip.id } },
    feedParameter: 'since',
    query: { limit: 3 },
  });
  const handled: string[] = [];
  t.is(
    await poller.poll((fix) => {
      handled.push(fix.id);
    }),
    trail.length,
  );
  t.deepEqual(handled, trail, 'in feed order');
  t.is(
    await poller.poll(() => {
      t.fail('nothing changed');
    }),
    0,
  );
});

test('a list with a path parameter needs params.path: the types require it, and JavaScript that leaves it out is told before any request', async (t) => {
  const erp = createErpClient({
    baseUrl: 'http://127.0.0.1:9/api/v1',
    fetch: async () => {
      throw new Error('no request expected');
    },
  });
  const walk = async (iterable: AsyncIterable<unknown>) => {
    for await (const _ of iterable) {
      /* nothing */
    }
  };
  // @ts-expect-error params.path is required for /dms/{system}/flags
  await t.throwsAsync(walk(paginate(erp, '/dms/{system}/flags')), {
    instanceOf: TypeError,
    message: /params\.path\.system is required/,
  });
  // @ts-expect-error params.path is required for /trips/{id}/locations
  await t.throwsAsync(walk(paginate(erp, '/trips/{id}/locations', { query: { limit: 2 } })), {
    instanceOf: TypeError,
    message: /params\.path\.id is required/,
  });
  await t.throwsAsync(walk(paginate(erp, '/customers', { query: { limit: 2 }, params: { query: { limit: 3 } } })), {
    instanceOf: TypeError,
    message: /not both/,
  });
  const untold = { storage: new MemoryCheckpointStore(), params: { path: { system: 'canonical' } } };
  // @ts-expect-error DMS flags have no updatedSince: the poller must be told their feed parameter and record field
  t.truthy(createChangeFeedPoller(erp, '/dms/{system}/flags', untold));
});
