// The stock part of `npm run bench` (issue 22): three figures, each beside its raw pg baseline measured in the same
// run, as the median of a few short rounds in which the targets take turns (so that a slow moment of the machine
// falls on all of them alike):
//   1. a 100-line transfer (100 products, warehouse -> van): documents/s of POST /stock-transfers through HTTP (a
//      fresh Idempotency-Key each), against the raw pg baseline's route doing the same statements (raw-pg.ts,
//      raw-stock.ts); and without HTTP, postStockTransfer in inTransaction against the raw statements on a pool;
//   2. the stock-movements feed walked page by page (since, limit=100): records/s with 10 000 movements, then with
//      --stock-movements (default 1 000 000) bulk-inserted into the same organisation: the first and the last 10 000
//      of them. A keyset read costs the same wherever it starts, so the three should match (an offset would slow
//      down with the depth). Walking all of a million at a few thousand records/s would take minutes: the last
//      10 000 are walked to the end instead;
//   3. concurrent removals on one level: N workers (8, 32) posting single-line adjustments of -1 bottle on the same
//      (location, product) through postStockAdjustment, against the raw statements; ops/s, and the check that the
//      level, its valuation and the ledger moved by exactly the successes.
// Seeding: one opening receipt through postStockAdjustment (10^9 bottles a line: the bench never runs out); the
// feed's movements go straight into the ledger (inserts only: the ledger refuses UPDATE and DELETE) with ULID-like
// ids ('smv_' + 26 digits, the length of a real id) and created/updated 1 ms apart, in their own organisation, by
// INSERT ... SELECT generate_series without the foreign-key checks (see insertMovements), then ANALYZE.
import pg from 'pg';
import { createApiKey } from '../../server/platform/access/api-keys.js';
import { actingOrganization, createOrganization } from '../../server/platform/access/organizations.js';
import { kyselyOver } from '../../server/platform/database/database.js';
import { inTransaction, type Db } from '../../server/platform/database/transaction.js';
import { jobActor, type Actor } from '../../server/platform/access/actor.js';
import { postStockAdjustment, postStockTransfer, type TransferCommand } from '../../server/modules/stock/documents.js';
import { listStockMovements } from '../../server/modules/stock/repository.js';
import { toStockMovement } from '../../server/modules/stock/representation.js';
import { movementJson, rawAdjustment, rawMovementsPage, rawTransfer } from './baselines/raw-stock.js';
import { figure, noise, noRounds, percent, ratio, rawInTransaction, takeTurns, type Rounds } from './turns.js';

export interface StockOptions {
  databaseUrl: string;
  /** Seconds of one round of a target. */
  roundSeconds: number;
  /** Seconds of warm-up of each target before its first round. */
  warmup: number;
  rounds: number;
  /** Movements in the feed's organisation for the second walk (the first is at 10 000). */
  movements: number;
  /** Concurrent requests / workers posting transfers. */
  transferWorkers: number;
  /** Worker counts of the removals on one level. */
  removalWorkers: number[];
  startService: () => Promise<Started>;
  startRawPg: (keys: string[]) => Promise<Started>;
}
export interface Started {
  port: number;
  stop: () => Promise<void>;
}

export type { Rounds };
export interface WalkRow {
  label: string;
  records: number;
  targets: Record<WalkTarget, Rounds>;
}
export interface RemovalRow {
  workers: number;
  targets: Record<DirectTarget, Rounds & { successes: number; moved: Snapshot }>;
}
/** The removal level, its product's valuation and the product's movements in the ledger (or how much each moved). */
export interface Snapshot {
  level: number;
  valuation: number;
  movements: number;
}
export interface StockFigures {
  options: Pick<StockOptions, 'roundSeconds' | 'warmup' | 'rounds' | 'transferWorkers'>;
  transfer: Record<TransferTarget, Rounds>;
  walks: WalkRow[];
  load: { rows: number; seconds: number } | null;
  removals: RemovalRow[];
}
type TransferTarget = 'HTTP: service' | 'HTTP: raw pg' | 'no HTTP: postStockTransfer' | 'no HTTP: raw pg';
type WalkTarget = 'HTTP: service' | 'HTTP: raw pg' | 'no HTTP: listStockMovements' | 'no HTTP: raw pg';
type DirectTarget = 'postStockAdjustment' | 'raw pg';

const PRODUCTS = 100;
const OPENING = 1_000_000_000; // bottles a line; a level is an int4 (2.1 x 10^9)
const FIRST_WALK = 10_000;
const BASE_TIME = Date.parse('2025-01-01T00:00:00.000Z');
const UNLIMITED = { perMinute: 100_000_000, burst: 10_000_000 };

export async function benchStock(options: StockOptions): Promise<StockFigures> {
  // Two pools of 40 (32 workers at most): one under Kysely for the service's functions, one for the raw statements.
  const pool = new pg.Pool({ connectionString: options.databaseUrl, max: 40 });
  const kyselyPool = new pg.Pool({ connectionString: options.databaseUrl, max: 40 });
  const db = kyselyOver(kyselyPool);
  // pg's end() resolves before the connections have closed; the database stopped right after must not crash the bench.
  let closing = false;
  for (const p of [pool, kyselyPool])
    p.on('error', (error) => {
      if (!closing) process.stderr.write(`stock bench: idle connection: ${error.message}\n`);
    });
  const children: Started[] = [];
  try {
    const setup = await prepare(db, pool);
    children.push(await options.startService());
    children.push(await options.startRawPg([setup.key, setup.feedKey]));
    const [service, raw] = children as [Started, Started];

    // 1. The 100-line transfer, warehouse -> van.
    process.stderr.write('measuring stock: 100-line transfers\n');
    const transferBody = JSON.stringify(setup.transfer);
    let sequence = 0;
    const viaHttp = (port: number) => async () => {
      sequence += 1;
      const response = await fetch(`http://127.0.0.1:${port}/api/v1/stock-transfers`, {
        method: 'POST',
        body: transferBody,
        headers: {
          authorization: `Bearer ${setup.key}`,
          'content-type': 'application/json',
          'idempotency-key': `bench-stock-${sequence}`,
        },
      });
      const text = await response.text();
      if (response.status !== 201)
        throw new Error(`POST /stock-transfers answered ${response.status}: ${text.slice(0, 300)}`);
    };
    const transfer = await takeTurns(
      options,
      options.transferWorkers,
      {
        'HTTP: service': viaHttp(service.port),
        'HTTP: raw pg': viaHttp(raw.port),
        'no HTTP: postStockTransfer': async () => {
          await inTransaction(db, (tx) => postStockTransfer(tx, setup.actor, setup.transfer));
        },
        'no HTTP: raw pg': () =>
          rawInTransaction(pool, (client) => rawTransfer(client, setup.organizationId, setup.transfer)),
      },
      {},
      'stock bench',
    );

    // 2. The movements feed: at 10 000 movements, then at options.movements (the first and the last 10 000).
    const walkers = feedWalkers(db, pool, setup, service.port, raw.port);
    const walks: WalkRow[] = [];
    const first = Math.min(FIRST_WALK, options.movements);
    await insertMovements(pool, setup, 0, first);
    process.stderr.write(`measuring stock: feed walk of ${first} movements\n`);
    walks.push({
      label: `${count(first)} in the ledger: all, to the end`,
      records: first,
      targets: await walkTurns(options, walkers, 0, first, true),
    });
    let load: StockFigures['load'] = null;
    if (options.movements > first) {
      process.stderr.write(`loading ${options.movements - first} more movements\n`);
      const started = performance.now();
      await insertMovements(pool, setup, first, options.movements);
      load = { rows: options.movements - first, seconds: (performance.now() - started) / 1000 };
      process.stderr.write(`measuring stock: feed walks at ${options.movements} movements\n`);
      walks.push({
        label: `${count(options.movements)}: the first ${count(first)}`,
        records: first,
        targets: await walkTurns(options, walkers, 0, first, false),
      });
      walks.push({
        label: `${count(options.movements)}: the last ${count(first)}, to the end`,
        records: first,
        targets: await walkTurns(options, walkers, options.movements - first, first, false),
      });
    }
    await Promise.all(children.splice(0).map((child) => child.stop()));

    // 3. Removals of one bottle on one level, N workers at once; each period of a target is bracketed by snapshots,
    // so that what moved while it ran is set against its successes.
    const removals: RemovalRow[] = [];
    const line = {
      productId: setup.removalProductId,
      locationId: setup.removalLocationId,
      unit: 'bottle' as const,
      quantity: -1,
    };
    for (const workers of options.removalWorkers) {
      process.stderr.write(`measuring stock: removals on one level, ${workers} workers\n`);
      const moved: Record<DirectTarget, Snapshot & { successes: number }> = {
        postStockAdjustment: { level: 0, valuation: 0, movements: 0, successes: 0 },
        'raw pg': { level: 0, valuation: 0, movements: 0, successes: 0 },
      };
      let before: Snapshot | null = null;
      const rounds = await takeTurns(
        options,
        workers,
        {
          postStockAdjustment: async () => {
            await inTransaction(db, (tx) =>
              postStockAdjustment(tx, setup.actor, { reasonCode: 'BENCH', lines: [line] }),
            );
          },
          'raw pg': () =>
            rawInTransaction(pool, (client) =>
              rawAdjustment(client, setup.organizationId, { reasonCode: 'BENCH', lines: [line] }),
            ),
        },
        {
          before: async () => {
            before = await snapshot(pool, setup);
          },
          after: async (target, ok) => {
            const after = await snapshot(pool, setup);
            const m = moved[target];
            m.level += after.level - before!.level;
            m.valuation += after.valuation - before!.valuation;
            m.movements += after.movements - before!.movements;
            m.successes += ok;
          },
        },
        'stock bench',
      );
      removals.push({
        workers,
        targets: {
          postStockAdjustment: {
            ...rounds.postStockAdjustment,
            successes: moved.postStockAdjustment.successes,
            moved: moved.postStockAdjustment,
          },
          'raw pg': { ...rounds['raw pg'], successes: moved['raw pg'].successes, moved: moved['raw pg'] },
        },
      });
    }
    return {
      options: {
        roundSeconds: options.roundSeconds,
        warmup: options.warmup,
        rounds: options.rounds,
        transferWorkers: options.transferWorkers,
      },
      transfer,
      walks,
      load,
      removals,
    };
  } finally {
    await Promise.all(children.map((child) => child.stop()));
    closing = true;
    await db.destroy(); // ends kyselyPool
    await pool.end();
  }
}

interface Setup {
  organizationId: string;
  actor: Actor;
  key: string;
  transfer: TransferCommand;
  removalProductId: string;
  removalLocationId: string;
  feedOrganizationId: string;
  feedActor: Actor;
  feedKey: string;
  feedProductId: string;
  feedLocations: [string, string];
}

/**
 * Two organisations: one that posts (100 products for the transfer and one for the removals; a warehouse, a van
 * and a second warehouse for the removals, stocked by one opening receipt), one whose ledger the feed walks.
 */
async function prepare(db: Db, pool: pg.Pool): Promise<Setup> {
  const posting = await createOrganization(db, { name: 'Bench Stock', baseCurrency: 'UGX' });
  const feed = await createOrganization(db, { name: 'Bench Stock Feed', baseCurrency: 'UGX' });
  // No payments:read: the answers carry no unitCost, as the raw baseline's.
  const issue = async (organizationId: string, scopes: string[]) =>
    (
      await createApiKey(db, {
        organizationId,
        name: 'bench stock',
        environment: 'production',
        scopes,
        rateLimits: { read: UNLIMITED, write: UNLIMITED },
      })
    ).secret;
  const key = await issue(posting.id, ['stock:read', 'stock:write']);
  const feedKey = await issue(feed.id, ['stock:read']);
  const id = (prefix: string, n: number) => `${prefix}_${String(n).padStart(26, '0')}`;
  for (const [org, count] of [
    [posting.id, PRODUCTS + 1],
    [feed.id, 1],
  ] as const) {
    // Products and locations straight into their tables, as npm run bench seeds its products.
    await pool.query(
      `INSERT INTO products (organization_id, id, product_code, name, status, pack_size, selling_units, tracks_stock, tax_rate, is_empty)
       SELECT $1, 'prd_' || lpad(g::text, 26, '0'), lpad(g::text, 6, '0'), 'Bench product ' || g, 'active', 24, ARRAY['case', 'bottle'], true, 18, false
         FROM generate_series(1, $2::int) AS g`,
      [org, count],
    );
    await pool.query(
      `INSERT INTO locations (organization_id, id, code, kind, stock_condition, name, active) VALUES
         ($1, $2, 'M01', 'main', NULL, 'Main warehouse', true), ($1, $3, 'V_R01-G', 'van', 'good', 'Van R01 good', true), ($1, $4, 'M02', 'main', NULL, 'Second warehouse', true)`,
      [org, id('loc', 1), id('loc', 2), id('loc', 3)],
    );
  }
  const actor = jobActor(actingOrganization(posting), 'bench', ['stock:read', 'stock:write']);
  const products = Array.from({ length: PRODUCTS }, (_, i) => id('prd', i + 1));
  const removalProductId = id('prd', PRODUCTS + 1);
  await inTransaction(db, (tx) =>
    postStockAdjustment(tx, actor, {
      reasonCode: 'OPENING',
      lines: [
        ...products.map((productId) => ({
          productId,
          locationId: id('loc', 1),
          unit: 'bottle' as const,
          quantity: OPENING,
          unitCost: '1000',
        })),
        {
          productId: removalProductId,
          locationId: id('loc', 3),
          unit: 'bottle' as const,
          quantity: OPENING,
          unitCost: '1000',
        },
      ],
    }),
  );
  return {
    organizationId: posting.id,
    actor,
    key,
    transfer: {
      fromLocationId: id('loc', 1),
      toLocationId: id('loc', 2),
      lines: products.map((productId) => ({ productId, unit: 'case' as const, quantity: 1 })),
    },
    removalProductId,
    removalLocationId: id('loc', 3),
    feedOrganizationId: feed.id,
    feedActor: jobActor(actingOrganization(feed), 'bench', ['stock:read']),
    feedKey,
    feedProductId: id('prd', 1),
    feedLocations: [id('loc', 1), id('loc', 2)],
  };
}

/** The feed organisation's movements number `from` to `to - 1`: ids 'smv_' + 26 digits, updated `number` ms after BASE_TIME. */
async function insertMovements(pool: pg.Pool, setup: Setup, from: number, to: number): Promise<void> {
  if (to <= from) return;
  const client = await pool.connect();
  try {
    await client.query('BEGIN');
    // Without the foreign-key checks (four a row, three quarters of the load time): every row names the feed
    // organisation's own product and locations, which exist. The bench's own embedded server, whose user may set it.
    await client.query('SET LOCAL session_replication_role = replica');
    await insertRange(client, setup, from, to);
    await client.query('COMMIT');
  } catch (error) {
    await client.query('ROLLBACK');
    throw error;
  } finally {
    client.release();
  }
  // Fresh statistics, as autovacuum would take after such a load, so that every walk is planned on what it walks.
  await pool.query('ANALYZE stock_movements');
}

async function insertRange(client: pg.PoolClient, setup: Setup, from: number, to: number): Promise<void> {
  // One set-based insert: transfers of 100 lines each (document = number / 100), increasing ids and times.
  await client.query(
    `INSERT INTO stock_movements (organization_id, id, document_type, document_id, line_number, product_id, from_location_id, to_location_id, quantity, unit_cost, created_at, updated_at)
     SELECT $1, 'smv_' || lpad(g::text, 26, '0'), 'stock_document', 'sdc_' || lpad((g / 100)::text, 26, '0'), g % 100 + 1, $2, $3, $4, 24, 1000,
            $5::timestamptz + g * interval '1 millisecond', $5::timestamptz + g * interval '1 millisecond'
       FROM generate_series($6::int, $7::int) AS g`,
    [
      setup.feedOrganizationId,
      setup.feedProductId,
      setup.feedLocations[0],
      setup.feedLocations[1],
      new Date(BASE_TIME).toISOString(),
      from,
      to - 1,
    ],
  );
}

/** The `since` of the movement numbered n (its updated_at). */
const at = (n: number) => new Date(BASE_TIME + n).toISOString();

type Walker = (since: string, stopAfter: number, deadline: number) => Promise<number>;

/** Walks the feed from `since` page by page (100 a page) until it ends, `stopAfter` records or the deadline; answers the records read. */
function feedWalkers(
  db: Db,
  pool: pg.Pool,
  setup: Setup,
  servicePort: number,
  rawPort: number,
): Record<WalkTarget, Walker> {
  const http =
    (port: number): Walker =>
    async (since, stopAfter, deadline) => {
      let records = 0;
      let cursor: string | null = null;
      do {
        const url = `http://127.0.0.1:${port}/api/v1/stock-movements?since=${encodeURIComponent(since)}&limit=100${cursor ? `&cursor=${encodeURIComponent(cursor)}` : ''}`;
        const response = await fetch(url, { headers: { authorization: `Bearer ${setup.feedKey}` } });
        if (!response.ok)
          throw new Error(`GET /stock-movements answered ${response.status}: ${(await response.text()).slice(0, 300)}`);
        const page = (await response.json()) as { data: unknown[]; nextCursor: string | null };
        records += page.data.length;
        cursor = page.nextCursor;
      } while (cursor && records < stopAfter && performance.now() < deadline);
      return records;
    };
  return {
    'HTTP: service': http(servicePort),
    'HTTP: raw pg': http(rawPort),
    // The service's read and its JSON objects, without HTTP (no JSON text either).
    'no HTTP: listStockMovements': async (since, stopAfter, deadline) => {
      let records = 0;
      let cursor: string | undefined;
      do {
        const page = await listStockMovements(
          db,
          setup.feedActor,
          { limit: 100, updatedSince: since, ...(cursor ? { cursor } : {}) },
          {},
        );
        records += page.rows.map((row) => toStockMovement(row, setup.feedActor)).length;
        cursor = page.nextCursor ?? undefined;
      } while (cursor && records < stopAfter && performance.now() < deadline);
      return records;
    },
    'no HTTP: raw pg': async (since, stopAfter, deadline) => {
      let records = 0;
      let after: { t: string; id: string } | null = null;
      let more = true;
      do {
        const page = await rawMovementsPage(pool, setup.feedOrganizationId, since, after, 100);
        records += page.rows.map(movementJson).length;
        const last = page.rows[page.rows.length - 1];
        after = last ? { t: last.updated_at.toISOString(), id: last.id } : null;
        more = page.hasMore;
      } while (more && records < stopAfter && performance.now() < deadline);
      return records;
    },
  };
}

/** Each target walks `records` movements from the movement numbered `start`, once a round, the targets taking turns (warm: a warm-up walk first). */
async function walkTurns(
  options: StockOptions,
  walkers: Record<WalkTarget, Walker>,
  start: number,
  records: number,
  warm: boolean,
): Promise<Record<WalkTarget, Rounds>> {
  const targets = Object.keys(walkers) as WalkTarget[];
  const result = noRounds(targets);
  // One whole walk each: a short warm-up leaves the first figure the cold one, which made the later walks look faster.
  if (warm && options.warmup > 0)
    for (const target of targets) await walkers[target](at(start), records, Infinity).catch(() => 0);
  for (let round = 0; round < options.rounds; round += 1) {
    for (const target of targets) {
      const started = performance.now();
      try {
        const read = await walkers[target](at(start), records, Infinity);
        if (read !== records) throw new Error(`read ${read} records, not ${records}`);
        result[target].perSecond.push(read / ((performance.now() - started) / 1000));
      } catch (error) {
        result[target].failed += 1;
        process.stderr.write(`stock feed walk, ${target}: ${(error as Error).message}\n`);
      }
    }
  }
  return result;
}

async function snapshot(pool: pg.Pool, setup: Setup): Promise<Snapshot> {
  // Three counts in one read: the level, its product's valuation, and the product's movements out of the location.
  const {
    rows: [row],
  } = await pool.query<Snapshot>(
    `SELECT (SELECT quantity FROM stock_levels WHERE organization_id = $1 AND location_id = $2 AND product_id = $3) AS level,
            (SELECT quantity FROM stock_valuations WHERE organization_id = $1 AND product_id = $3) AS valuation,
            (SELECT count(*)::int FROM stock_movements WHERE organization_id = $1 AND product_id = $3 AND from_location_id = $2) AS movements`,
    [setup.organizationId, setup.removalLocationId, setup.removalProductId],
  );
  return row!;
}

const count = (n: number) =>
  n >= 1_000_000 && n % 1_000_000 === 0
    ? `${n / 1_000_000}M`
    : n >= 1_000 && n % 1_000 === 0
      ? `${n / 1_000}k`
      : String(n);

/** The lines npm run bench prints for the stock part. */
export function stockReport(f: StockFigures): string[] {
  const o = f.options;
  const lines = [
    `stock (issue 22): medians of ${o.rounds} rounds of ${o.roundSeconds} s after ${o.warmup} s of warm-up, the targets taking turns; noise = (max - min) / median of the rounds`,
  ];
  lines.push(`  100-line transfer (100 products, warehouse -> van), documents/s, ${o.transferWorkers} at once:`);
  for (const [target, r] of Object.entries(f.transfer) as [TransferTarget, Rounds][])
    lines.push(`    ${target.padEnd(34)}${figure(r).padEnd(16)}noise ${percent(noise(r.perSecond))}`);
  const t = f.transfer;
  lines.push(
    `    service / raw pg: over HTTP ${ratio(t['HTTP: service'], t['HTTP: raw pg'])}, without HTTP ${ratio(t['no HTTP: postStockTransfer'], t['no HTTP: raw pg'])}`,
  );
  lines.push(
    `    HTTP / no HTTP (HTTP, the key, the Idempotency-Key's claim and row, the read-back of the document): service ${ratio(t['HTTP: service'], t['no HTTP: postStockTransfer'])}, raw pg ${ratio(t['HTTP: raw pg'], t['no HTTP: raw pg'])}`,
  );
  lines.push('  stock-movements feed walk (since, limit=100), records/s:');
  lines.push(
    `    ${'walk'.padEnd(40)}${'HTTP service'.padEnd(14)}${'HTTP raw pg'.padEnd(13)}${'ratio'.padEnd(8)}${'listStockMovements'.padEnd(20)}${'raw pg'.padEnd(9)}${'ratio'.padEnd(8)}noise`,
  );
  for (const w of f.walks) {
    const r = w.targets;
    const worst = Math.max(...Object.values<Rounds>(r).map((x) => noise(x.perSecond)));
    lines.push(
      `    ${w.label.padEnd(40)}${figure(r['HTTP: service']).padEnd(14)}${figure(r['HTTP: raw pg']).padEnd(13)}${ratio(r['HTTP: service'], r['HTTP: raw pg']).padEnd(8)}` +
        `${figure(r['no HTTP: listStockMovements']).padEnd(20)}${figure(r['no HTTP: raw pg']).padEnd(9)}${ratio(r['no HTTP: listStockMovements'], r['no HTTP: raw pg']).padEnd(8)}${percent(worst)}`,
    );
  }
  const flat = (label: string, a: WalkRow, b: WalkRow) =>
    lines.push(
      `    flat? ${label}: ` +
        (Object.keys(a.targets) as WalkTarget[])
          .map((target) => `${target.replace('no HTTP: ', '')} ${ratio(a.targets[target], b.targets[target])}`)
          .join(', ') +
        ' (1.00 = flat; an offset would fall with the depth)',
    );
  if (f.walks.length === 3) {
    flat('the last 10k / the first 10k of the big ledger', f.walks[2]!, f.walks[1]!);
    flat('the last 10k of the big ledger / the 10k ledger', f.walks[2]!, f.walks[0]!);
  }
  if (f.load)
    lines.push(
      `    loaded ${f.load.rows} movements in ${f.load.seconds.toFixed(1)} s (${(f.load.rows / f.load.seconds).toFixed(0)} rows/s: one INSERT ... SELECT generate_series without the foreign-key checks, then ANALYZE)`,
    );
  lines.push(
    '  removals of 1 bottle on one level (single-line adjustments), ops/s, and the check that the level moved by exactly the successes:',
  );
  for (const row of f.removals) {
    const r = row.targets;
    const check = (x: RemovalRow['targets'][DirectTarget]) =>
      x.moved.level === -x.successes && x.moved.valuation === -x.successes && x.moved.movements === x.successes
        ? `ok: level -${x.successes} = ${x.successes} successes`
        : `MISMATCH: ${x.successes} successes, level ${x.moved.level}, valuation ${x.moved.valuation}, movements +${x.moved.movements}`;
    lines.push(
      `    ${String(row.workers).padStart(2)} workers: postStockAdjustment ${figure(r.postStockAdjustment)} (noise ${percent(noise(r.postStockAdjustment.perSecond))}), ` +
        `raw pg ${figure(r['raw pg'])} (noise ${percent(noise(r['raw pg'].perSecond))}), ratio ${ratio(r.postStockAdjustment, r['raw pg'])}`,
    );
    lines.push(`      postStockAdjustment ${check(r.postStockAdjustment)}; raw pg ${check(r['raw pg'])}`);
  }
  return lines;
}
