// What the fuzz pass works against: two organisations on the real service, each seeded by sending every
// request example of the description (the contract command's plan), and the live records that seeding left:
// ids by kind, codes by collection, cursors by list. The first organisation is the caller; the second one's
// ids are the "other organisation's" ids, which must never be reachable with the first one's keys.
import type pg from 'pg';
import { operationsOf, type Json } from '../../scripts/contract/operations.js';
import { checkDeployment } from '../../scripts/contract/runner.js';
import { createCaller, ALL_SCOPES, type TestCaller } from '../support/callers.js';
import { kyselyOver } from '../../server/platform/database/database.js';
import { registerCodeSystem } from '../../server/platform/access/organizations.js';
import { openOneTrip } from '../support/trips.js';
import { notify } from '../../server/platform/webhooks/notifications.js';
import { inTransaction } from '../../server/platform/database/transaction.js';
import { addConnection } from '../../server/modules/dms/connections.js';

export interface Tenant {
  caller: TestCaller;
  /** Code systems it may use: `dms` and one registered partner system. */
  systems: string[];
  /** Record ids by prefix (`cus` -> ids). */
  ids: Map<string, string[]>;
  /** Codes of the records of each collection (`/customers` -> codes), from their externalCodes. */
  codes: Map<string, string[]>;
  /** A real cursor of each list (`/customers` -> the second page's cursor). */
  cursors: Map<string, string>;
  /** Examples the seeding could not send successfully (reported, not fatal). */
  seedingProblems: string[];
}

export interface World {
  apiRoot: URL;
  own: Tenant;
  other: Tenant;
  /** Keys of the caller's organisation with no scope at all, and with only the read scopes. */
  noScopeKey: string;
  readOnlyKey: string;
  /** Every id of the other organisation (ids only: codes may legitimately be the same in both). */
  foreignIds: Set<string>;
}

// Generous limits: the pass is about answers, not about the rate limiter (429 stays documented and allowed).
const UNLIMITED = { perMinute: 1_000_000, burst: 1_000_000 };
const rateLimits = { read: UNLIMITED, write: UNLIMITED, ingest: UNLIMITED };

export async function buildWorld(document: Json, pool: pg.Pool, apiRoot: URL): Promise<World> {
  const own = await seedTenant(document, pool, apiRoot, 'sap');
  const other = await seedTenant(document, pool, apiRoot, 'navision');
  const noScope = await createCaller(pool, { organizationId: own.caller.organizationId, scopes: [], rateLimits });
  const readOnly = await createCaller(pool, {
    organizationId: own.caller.organizationId,
    scopes: ALL_SCOPES.filter((s) => s.endsWith(':read')),
    rateLimits,
  });
  return {
    apiRoot,
    own,
    other,
    noScopeKey: noScope.secret,
    readOnlyKey: readOnly.secret,
    foreignIds: new Set([...other.ids.values()].flat()),
  };
}

async function seedTenant(document: Json, pool: pg.Pool, apiRoot: URL, partnerSystem: string): Promise<Tenant> {
  // With the delivery module, whose reads (trips) are otherwise 403 module_disabled.
  const caller = await createCaller(pool, { rateLimits, modules: ['delivery', 'field-sales'] });
  await registerCodeSystem(kyselyOver(pool), caller.organizationId, partnerSystem);
  // The API only reads trips: one is opened beforehand, for the examples' trip ids to stand for.
  await openOneTrip(pool, caller.organizationId);
  // Notifications are written by the service (a reconciliation with differences), never over the API: one is there
  // to be read and marked read, as in the sandbox.
  await notify(kyselyOver(pool), caller.organizationId, 'test', 'A notification to read.');
  // An operator connects the DMS (the examples' distributor), as the sandbox is connected.
  await inTransaction(kyselyOver(pool), (tx) =>
    addConnection(tx, caller.organizationId, 'canonical', { distributorCode: 'DIST001' }),
  );
  const seedingProblems: string[] = [];
  const root = apiRoot.toString().replace(/\/$/, '');
  for await (const outcome of checkDeployment({ document, apiRoot: root, key: caller.secret, timeoutMs: 15_000 })) {
    if (!outcome.passed)
      seedingProblems.push(`${outcome.request.method} ${outcome.request.template}: ${outcome.reason}`);
  }
  const ids = new Map<string, string[]>();
  const codes = new Map<string, string[]>();
  const cursors = new Map<string, string>();
  const get = async (target: string) => {
    const response = await fetch(`${root}${target}`, { headers: caller.auth });
    return response.status === 200
      ? ((await response.json()) as { data?: Json[]; nextCursor?: string | null })
      : undefined;
  };
  for (const { method, template, parameters } of operationsOf(document)) {
    if (method !== 'GET' || template.includes('{') || !parameters.some((p) => p.in === 'query' && p.name === 'limit'))
      continue;
    const page = await get(`${template}?limit=100`);
    for (const record of page?.data ?? []) {
      const id = record.id;
      if (typeof id === 'string' && /^[a-z][a-z0-9]{1,9}_/.test(id)) {
        const prefix = id.slice(0, id.indexOf('_'));
        ids.set(prefix, [...(ids.get(prefix) ?? []), id]);
      }
      const external = Object.values((record.externalCodes ?? {}) as Record<string, unknown>).filter(
        (c): c is string => typeof c === 'string',
      );
      codes.set(template, [...(codes.get(template) ?? []), ...external]);
    }
    const first = await get(`${template}?limit=1`);
    if (typeof first?.nextCursor === 'string') cursors.set(template, first.nextCursor);
  }
  return { caller, systems: ['dms', partnerSystem], ids, codes, cursors, seedingProblems };
}

// Tables that record the traffic itself rather than the organisation's data: a refused request may well
// leave a line in them (the API log, the rate-limit bucket, an idempotency record of a refusal).
const BOOKKEEPING = new Set([
  'api_keys',
  'rate_limit_buckets',
  'idempotency_keys',
  'api_log',
  'webhook_deliveries',
  'notifications',
]);

/**
 * A digest of every row of the organisation's data, table by table: equal before and after a request means the
 * request changed nothing. Events are compared by their ids only (the worker marks them as it publishes them).
 */
export async function dataFingerprint(pool: pg.Pool, organizationId: string): Promise<Record<string, string>> {
  const tables = (
    await pool.query<{ table_name: string }>(
      `SELECT table_name FROM information_schema.columns WHERE table_schema = current_schema() AND column_name = 'organization_id' ORDER BY table_name`,
    )
  ).rows
    .map((r) => r.table_name)
    .filter((t) => !BOOKKEEPING.has(t));
  const parts = tables.map((table) =>
    table === 'events'
      ? `SELECT 'events' AS t, md5(coalesce(string_agg(x.id::text, ',' ORDER BY x.id), '')) AS d FROM events x WHERE x.organization_id = $1`
      : // DMS documents by their flags: the worker tries waiting documents again in the background (when they are next
        // tried and how often is its bookkeeping; a flag that changes is data).
        table === 'dms_documents'
        ? `SELECT 'dms_documents' AS t, md5(coalesce(string_agg(concat_ws('|', x.id, x.state, x.note, x.reason_code, x.reason_text, x.mikono_table, x.mikono_id, x.quickbooks_ref, x.updated_at), ',' ORDER BY x.id), '')) AS d FROM dms_documents x WHERE x.organization_id = $1`
        : `SELECT '${table}' AS t, md5(coalesce(string_agg(row_to_json(x)::text, ',' ORDER BY row_to_json(x)::text), '')) AS d FROM "${table}" x WHERE x.organization_id = $1`,
  );
  const { rows } = await pool.query<{ t: string; d: string }>(parts.join(' UNION ALL '), [organizationId]);
  return Object.fromEntries(rows.map((r) => [r.t, r.d]));
}
