// Lists and change feeds through the SDK (spec: Pagination and change feed rules): paginate walks every page
// once; the change-feed poller starts each poll at its checkpoint minus the overlap, skips (id, updatedAt) pairs
// it already handled, and saves its checkpoint page by page, so each change reaches the handler exactly once.
import test from 'ava';
import {
  createChangeFeedPoller,
  createErpClient,
  MemoryCheckpointStore,
  paginate,
  paginatePages,
  type Checkpoint,
  type components,
  type ErpClient,
} from '../../client-sdk/src/index.js';
import { createCaller } from '../support/callers.js';
import { useSharedService } from '../support/service.js';
import { settledWithin, standIn } from './transport.js';

type Customer = components['schemas']['Customer'];

const api = useSharedService(test);
const pool = () => api().pool;

let sequence = 0;
async function newOrganisation(): Promise<ErpClient> {
  const caller = await createCaller(pool(), {
    rateLimits: { write: { perMinute: 6000, burst: 200 }, read: { perMinute: 6000, burst: 200 } },
  });
  return createErpClient({ apiKey: caller.secret, baseUrl: `${api().baseUrl}/api/v1` });
}
async function createCustomers(erp: ErpClient, count: number): Promise<Customer[]> {
  const created: Customer[] = [];
  for (let i = 0; i < count; i++) {
    const { data } = await erp.POST('/customers', {
      body: {
        outletCode: `UG${String(8_000_000 + ++sequence).padStart(7, '0')}`,
        name: `Feed Shop ${sequence}`,
        channel: 'retail',
      },
    });
    created.push(data);
  }
  return created;
}
/** Sets updated_at in the database, as a write committed late (or several in one instant) would leave it. */
async function stamp(ids: string[], at: Date): Promise<void> {
  await pool().query('UPDATE customers SET updated_at = $1 WHERE id = ANY($2)', [at, ids]);
}
const rename = async (erp: ErpClient, id: string, name: string) =>
  (await erp.PATCH('/customers/{id}', { params: { path: { id } }, body: { name } })).data;

test('paginate walks every customer across pages exactly once', async (t) => {
  const erp = await newOrganisation();
  const created = await createCustomers(erp, 30);

  const seen: string[] = [];
  for await (const customer of paginate(erp, '/customers', { query: { limit: 7 } })) seen.push(customer.id);
  t.is(seen.length, 30);
  t.deepEqual([...seen].sort(), created.map((c) => c.id).sort());

  const pages = [];
  for await (const page of paginatePages(erp, '/customers', { query: { limit: 7 } })) pages.push(page);
  t.deepEqual(
    pages.map((p) => p.data.length),
    [7, 7, 7, 7, 2],
  );
  t.deepEqual(
    pages.map((p) => p.hasMore),
    [true, true, true, true, false],
  );

  // Filters go with every page.
  const [blocked] = created;
  await erp.PATCH('/customers/{id}', { params: { path: { id: blocked!.id } }, body: { status: 'blocked' } });
  const active: string[] = [];
  for await (const customer of paginate(erp, '/customers', { query: { status: 'active', limit: 7 } }))
    active.push(customer.id);
  t.is(active.length, 29);
  t.false(active.includes(blocked!.id));
});

test('two polls with changes between them hand each change exactly once; records in the overlap window are not repeated', async (t) => {
  const erp = await newOrganisation();
  const storage = new MemoryCheckpointStore();
  const poller = createChangeFeedPoller(erp, '/customers', { storage, query: { limit: 2 } });
  const first = await createCustomers(erp, 5);

  const handled: Customer[] = [];
  t.is(
    await poller.poll((customer) => {
      handled.push(customer);
    }),
    5,
  );
  t.deepEqual(
    handled.map((c) => c.id),
    first.map((c) => c.id),
    'in feed order, oldest change first',
  );

  const added = await createCustomers(erp, 2);
  const renamed = await rename(erp, first[1]!.id, 'Renamed Feed Shop');
  handled.length = 0;
  t.is(
    await poller.poll((customer) => {
      handled.push(customer);
    }),
    3,
    'the five of the first poll are read again (overlap) but skipped',
  );
  t.deepEqual(
    handled.map((c) => [c.id, c.updatedAt]),
    [...added, renamed].map((c) => [c.id, c.updatedAt]),
  );
  t.is(handled[2]!.name, 'Renamed Feed Shop');

  handled.length = 0;
  t.is(
    await poller.poll((customer) => {
      handled.push(customer);
    }),
    0,
    'nothing changed, nothing handed over',
  );

  const checkpoint = (await storage.load())!;
  t.is(checkpoint.updatedAt, renamed.updatedAt, 'the high-water mark is the newest updatedAt handled');
  t.is(checkpoint.handled.length, 8, 'every pair of the window: 5 created, 2 added, 1 renamed');
});

test('a handler that throws stops the poll; what it handled before stays saved and the next poll resumes at the failed record', async (t) => {
  const erp = await newOrganisation();
  const storage = new MemoryCheckpointStore();
  const poller = createChangeFeedPoller(erp, '/customers', { storage, query: { limit: 10 } });
  const created = await createCustomers(erp, 4);

  const handled: string[] = [];
  const failure = await t.throwsAsync(
    poller.poll((customer) => {
      if (customer.id === created[2]!.id) throw new Error('the warehouse system is down');
      handled.push(customer.id);
    }),
  );
  t.is(failure!.message, 'the warehouse system is down');
  t.deepEqual(handled, [created[0]!.id, created[1]!.id]);
  const saved = (await storage.load())!;
  t.is(saved.updatedAt, created[1]!.updatedAt);
  t.deepEqual(
    saved.handled.map((c) => c.id),
    [created[0]!.id, created[1]!.id],
    'the failed record and those after it are not marked',
  );

  handled.length = 0;
  t.is(
    await poller.poll((customer) => {
      handled.push(customer.id);
    }),
    2,
  );
  t.deepEqual(handled, [created[2]!.id, created[3]!.id]);
});

test('the first poll starts at startAt, and the checkpoint keeps only the pairs within the overlap window', async (t) => {
  const erp = await newOrganisation();
  const before = await createCustomers(erp, 2);
  await new Promise((resolve) => setTimeout(resolve, 20)); // updatedAt has millisecond resolution
  const startAt = new Date();
  const after = await createCustomers(erp, 3);

  // A zero overlap: the window is the high-water instant itself, so only pairs with that updatedAt are kept.
  const storage = new MemoryCheckpointStore();
  const poller = createChangeFeedPoller(erp, '/customers', { storage, startAt, overlapMs: 0 });
  const handled: string[] = [];
  t.is(
    await poller.poll((customer) => {
      handled.push(customer.id);
    }),
    3,
  );
  t.deepEqual(
    handled,
    after.map((c) => c.id),
    'nothing from before startAt',
  );
  t.false(handled.includes(before[0]!.id));
  const checkpoint: Checkpoint = (await storage.load())!;
  t.deepEqual(checkpoint.handled, [{ id: after[2]!.id, updatedAt: after[2]!.updatedAt }]);
  // The feed includes the high-water instant (updatedSince is "at or after"): that record is read again and skipped.
  t.is(
    await poller.poll(() => {
      t.fail('nothing new');
    }),
    0,
  );
});

test('a second poll while one runs is refused rather than racing on the checkpoint', async (t) => {
  const erp = await newOrganisation();
  await createCustomers(erp, 1);
  const poller = createChangeFeedPoller(erp, '/customers', { storage: new MemoryCheckpointStore() });
  let release!: () => void;
  const held = new Promise<void>((resolve) => {
    release = resolve;
  });
  const running = poller.poll(() => held);
  await t.throwsAsync(
    poller.poll(() => {}),
    { message: /already running/ },
  );
  release();
  t.is(await running, 1);
});

test('a page with hasMore true and no nextCursor is inconsistent: the walk throws instead of stopping short', async (t) => {
  const server = await standIn((_request, response) => {
    response
      .writeHead(200, { 'content-type': 'application/json' })
      .end(JSON.stringify({ data: [{ id: 'cus_1' }], nextCursor: null, hasMore: true }));
  });
  t.teardown(() => server.close());
  const seen: string[] = [];
  await t.throwsAsync(
    async () => {
      for await (const customer of paginate(createErpClient({ baseUrl: server.baseUrl }), '/customers'))
        seen.push(customer.id);
    },
    { message: /Inconsistent page .*hasMore is true but nextCursor is null/ },
  );
  t.deepEqual(seen, ['cus_1'], 'the records of the page came through before the walk stopped');
  t.is(server.requests.length, 1);
});

test('the overlap: a change that becomes visible after a poll, stamped before its checkpoint but within 5 minutes, is handed over once by the next poll', async (t) => {
  const erp = await newOrganisation();
  const storage = new MemoryCheckpointStore();
  const poller = createChangeFeedPoller(erp, '/customers', { storage, query: { limit: 2 } });
  await createCustomers(erp, 3);
  t.is(await poller.poll(() => {}), 3);
  const checkpoint = (await storage.load())!;

  // A write whose transaction took its updatedAt 2 minutes before the checkpoint but committed after the poll:
  // a poll starting at the checkpoint itself would never see it.
  const [late] = await createCustomers(erp, 1);
  const lateAt = new Date(Date.parse(checkpoint.updatedAt) - 2 * 60_000);
  await stamp([late!.id], lateAt);

  const handled: [string, string][] = [];
  t.is(
    await poller.poll((customer) => {
      handled.push([customer.id, customer.updatedAt]);
    }),
    1,
    'the three of the first poll are read again and skipped',
  );
  t.deepEqual(handled, [[late!.id, lateAt.toISOString()]]);
  t.is(
    (await storage.load())!.updatedAt,
    checkpoint.updatedAt,
    'an older change does not move the high-water mark back',
  );
  t.is(
    await poller.poll(() => {
      t.fail('handed over twice');
    }),
    0,
  );
});

test('records sharing one updatedAt across a page boundary: a handler failing at the boundary loses none, and the next poll hands each of the rest once', async (t) => {
  const erp = await newOrganisation();
  const created = await createCustomers(erp, 5);
  const sameAt = new Date(Date.now() - 60_000);
  await stamp(
    created.map((c) => c.id),
    sameAt,
  );
  const poller = createChangeFeedPoller(erp, '/customers', {
    storage: new MemoryCheckpointStore(),
    query: { limit: 2 },
  });

  const times = new Map<string, number>();
  let calls = 0;
  const failure = await t.throwsAsync(
    poller.poll((customer) => {
      if (++calls === 3) throw new Error('fails on the first record of the second page');
      times.set(customer.id, (times.get(customer.id) ?? 0) + 1);
    }),
  );
  t.regex(failure!.message, /second page/);
  t.is(times.size, 2);

  t.is(
    await poller.poll((customer) => {
      times.set(customer.id, (times.get(customer.id) ?? 0) + 1);
    }),
    3,
    'the two handled are skipped although the checkpoint is their own updatedAt',
  );
  t.deepEqual([...times.keys()].sort(), created.map((c) => c.id).sort());
  t.deepEqual([...times.values()], [1, 1, 1, 1, 1], 'each record handled exactly once over both polls');
});

test('a server that gives back a cursor already followed (the same one again, or a cycle) makes the walk throw instead of looping for ever', async (t) => {
  const next: Record<string, string> = { '': 'same', same: 'same' };
  const cycle: Record<string, string> = { '': 'A', A: 'B', B: 'A' };
  for (const [name, cursors, requests] of [
    ['the same cursor', next, 2],
    ['a cycle of two', cycle, 3],
  ] as const) {
    const server = await standIn((request, response) => {
      const cursor = new URL(request.url!, 'http://x').searchParams.get('cursor') ?? '';
      response
        .writeHead(200, { 'content-type': 'application/json' })
        .end(JSON.stringify({ data: [{ id: `cus_${cursor}` }], nextCursor: cursors[cursor], hasMore: true }));
    });
    t.teardown(() => server.close());
    const seen: string[] = [];
    const outcome = await settledWithin(
      (async () => {
        for await (const customer of paginate(createErpClient({ baseUrl: server.baseUrl }), '/customers'))
          seen.push(customer.id);
      })(),
      10_000,
    );
    if (outcome === 'pending' || !('error' in outcome)) {
      t.fail(`${name}: the walk did not throw: ${JSON.stringify(outcome)}`);
      continue;
    }
    t.regex((outcome.error as Error).message, /Inconsistent page .*is a cursor already followed/, name);
    t.is(server.requests.length, requests, name);
    t.is(seen.length, requests, `${name}: each page's records came through before the walk stopped`);
  }
});

test("when the handler throws and saving the checkpoint fails too, the poll rejects with the handler's error, the save failure attached to it", async (t) => {
  const server = await standIn((_request, response) => {
    response.writeHead(200, { 'content-type': 'application/json' }).end(
      JSON.stringify({
        data: [
          { id: 'cus_1', updatedAt: '2026-01-01T00:00:00.000Z' },
          { id: 'cus_2', updatedAt: '2026-01-01T00:00:01.000Z' },
        ],
        nextCursor: null,
        hasMore: false,
      }),
    );
  });
  t.teardown(() => server.close());
  const saveFailure = new Error('disk full');
  const storage = {
    load: async () => undefined,
    save: async () => {
      throw saveFailure;
    },
  };
  const poller = createChangeFeedPoller(createErpClient({ baseUrl: server.baseUrl }), '/customers', { storage });

  class WarehouseDown extends Error {}
  const handlerFailure = new WarehouseDown('the warehouse system is down', { cause: 'its own cause' });
  const error = await t.throwsAsync(
    poller.poll((customer) => {
      if (customer.id === 'cus_2') throw handlerFailure;
    }),
  );
  t.is(error, handlerFailure, "the handler's own error, not the save failure");
  t.is(error!.cause, 'its own cause', 'its cause untouched');
  t.is((error as Error & { checkpointSaveError?: unknown }).checkpointSaveError, saveFailure);

  // Without a handler error, the save failure is the poll's error.
  await t.throwsAsync(
    poller.poll(() => {}),
    { is: saveFailure },
  );
});
