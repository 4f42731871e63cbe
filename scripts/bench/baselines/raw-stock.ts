// Raw pg baselines of the stock ledger (issue 22's bench, stock.ts; the HTTP routes of raw-pg.ts): what a posting
// of server/modules/stock (documents.ts postStockTransfer / postStockAdjustment -> postDocument -> ledger.ts
// postMovements) sends, statement for statement and in the same order, written by hand with plain pg:
//    1. the lines' products          2. their locations        (resolveLines: two reads on the one connection)
//    3. valuations created at zero   4. valuations locked FOR UPDATE in byte order of product
//    5. levels created at zero       6. levels locked FOR UPDATE in byte order of (location, product)
//    7. the movements appended       8. the levels updated     9. the valuations updated (jsonb_to_recordset)
//   10. the document number         11. the document          12. its stock.movement.created event
// The caller sends BEGIN and COMMIT around it, so a posting is 14 round trips here as in the service. The statements
// are hand-written equivalents, not Kysely's text: sets go as arrays or one JSON parameter (unnest,
// jsonb_to_recordset) where Kysely binds one parameter per value (the level lock's WHERE is 200 ORed pairs there,
// an IN over unnest here). Locks, rows written, order and checks are the same. Only what the bench posts is
// supported: transfers and adjustments of signed quantities (a receipt here comes in at the moving average; the
// service's receipt with a unitCost averages it in, which the bench posts only once, through the service, to seed).
import type pg from 'pg';
import { newId } from '../../../server/platform/ids.js';

type Client = pg.PoolClient | pg.Client;
type Unit = 'case' | 'bottle' | 'piece';

export interface RawTransfer {
  fromLocationId: string;
  toLocationId: string;
  lines: { productId: string; unit: Unit; quantity: number }[];
}
export interface RawAdjustment {
  reasonCode: string;
  lines: { productId: string; locationId: string; unit: Unit; quantity: number }[];
}

export interface RawMovement {
  id: string;
  document_type: string;
  document_id: string;
  line_number: number;
  product_id: string;
  from_location_id: string | null;
  to_location_id: string | null;
  quantity: number;
  unit_cost: string;
  created_at: Date;
}
export interface RawDocument {
  id: string;
  number: string;
  type: string;
  reason_code: string | null;
  created_at: Date;
  movements: RawMovement[];
}

/** A refusal of the posting (the caller rolls back): the service's 404/422 cases, by code. */
export class RawRefusal extends Error {
  constructor(readonly code: 'not_found' | 'business_rule' | 'insufficient_stock') {
    super(code);
  }
}

/** One movement to post: the document line, the product, from and to (null: a receipt, an issue), base units. */
export interface RawMove {
  line: number;
  productId: string;
  from: string | null;
  to: string | null;
  quantity: number;
}
type Move = RawMove;

const byteOrder = (a: string, b: string) => (a < b ? -1 : a > b ? 1 : 0);

export async function rawTransfer(client: Client, organizationId: string, command: RawTransfer): Promise<RawDocument> {
  if (command.fromLocationId === command.toLocationId) throw new RawRefusal('business_rule');
  const packs = await resolve(
    client,
    organizationId,
    command.lines.map((l) => l.productId),
    [command.fromLocationId, command.toLocationId],
  );
  const moves = command.lines.map(
    (l, i): Move => ({
      line: i + 1,
      productId: l.productId,
      from: command.fromLocationId,
      to: command.toLocationId,
      quantity: l.quantity * (l.unit === 'case' ? packs.get(l.productId)! : 1),
    }),
  );
  return post(client, organizationId, 'transfer', 'TRF', null, moves);
}

export async function rawAdjustment(
  client: Client,
  organizationId: string,
  command: RawAdjustment,
): Promise<RawDocument> {
  const packs = await resolve(
    client,
    organizationId,
    command.lines.map((l) => l.productId),
    command.lines.map((l) => l.locationId),
  );
  const moves = command.lines.map((l, i): Move => {
    const change = l.quantity * (l.unit === 'case' ? packs.get(l.productId)! : 1);
    return {
      line: i + 1,
      productId: l.productId,
      from: change < 0 ? l.locationId : null,
      to: change > 0 ? l.locationId : null,
      quantity: Math.abs(change),
    };
  });
  return post(client, organizationId, 'adjustment', 'ADJ', command.reasonCode, moves);
}

/** Statements 1 and 2: the products (pack sizes) and locations, refused as the service refuses them. */
async function resolve(
  client: Client,
  organizationId: string,
  productIds: string[],
  locationIds: string[],
): Promise<Map<string, number>> {
  const products = await client.query<{ id: string; pack_size: number; tracks_stock: boolean; is_empty: boolean }>(
    'SELECT id, pack_size, tracks_stock, is_empty FROM products WHERE organization_id = $1 AND id = ANY($2::text[])',
    [organizationId, [...new Set(productIds)]],
  );
  const locations = await client.query<{ id: string; active: boolean }>(
    'SELECT id, active FROM locations WHERE organization_id = $1 AND id = ANY($2::text[])',
    [organizationId, [...new Set(locationIds)]],
  );
  const packs = new Map(products.rows.map((row) => [row.id, row.pack_size]));
  if (productIds.some((id) => !packs.has(id))) throw new RawRefusal('not_found');
  if (products.rows.some((row) => !row.tracks_stock)) throw new RawRefusal('business_rule');
  const active = new Map(locations.rows.map((row) => [row.id, row.active]));
  if (locationIds.some((id) => active.get(id) !== true)) throw new RawRefusal('business_rule');
  return packs;
}

/** Statements 3 to 12 (postDocument and postMovements). */
async function post(
  client: Client,
  organizationId: string,
  type: string,
  prefix: string,
  reasonCode: string | null,
  moves: Move[],
): Promise<RawDocument> {
  const id = newId('sdc');
  const movements = await rawPostMovements(client, organizationId, { type: 'stock_document', id }, moves);
  const sequence = await client.query<{ last_number: number }>(
    `INSERT INTO document_sequences (organization_id, document_type, last_number) VALUES ($1, $2, 1)
    ON CONFLICT (organization_id, document_type) DO UPDATE SET last_number = document_sequences.last_number + 1 RETURNING last_number`,
    [organizationId, `stock_${type}`],
  );
  const number = `${prefix}-${String(sequence.rows[0]!.last_number).padStart(6, '0')}`;
  const document = await client.query<{ created_at: Date }>(
    'INSERT INTO stock_documents (organization_id, id, number, type, reason_code, note, trip_id) VALUES ($1, $2, $3, $4, $5, NULL, NULL) RETURNING created_at',
    [organizationId, id, number, type, reasonCode],
  );
  await client.query(
    `INSERT INTO events (organization_id, id, type, resource, record_id) VALUES ($1, $2, 'stock.movement.created', 'stock_document', $3)`,
    [organizationId, newId('evt'), id],
  );
  return { id, number, type, reason_code: reasonCode, created_at: document.rows[0]!.created_at, movements };
}

/**
 * Statements 3 to 9 (ledger.ts postMovements): the valuations and levels created at zero and locked in byte order,
 * the movements appended, the levels and valuations updated; answers the movements written. The invoice baseline
 * (raw-money.ts) posts its goods through it too, as createInvoice does through postMovements.
 */
export async function rawPostMovements(
  client: Client,
  organizationId: string,
  document: { type: string; id: string },
  moves: RawMove[],
): Promise<RawMovement[]> {
  const productIds = [...new Set(moves.map((m) => m.productId))].sort(byteOrder);
  await client.query(
    `INSERT INTO stock_valuations (organization_id, product_id, quantity, average_cost)
    SELECT $1, p, 0, 0 FROM unnest($2::text[]) AS p ON CONFLICT DO NOTHING`,
    [organizationId, productIds],
  );
  const valuationRows = await client.query<{ product_id: string; quantity: number; average_cost: string }>(
    `SELECT product_id, quantity, average_cost FROM stock_valuations WHERE organization_id = $1 AND product_id = ANY($2::text[])
      ORDER BY product_id COLLATE "C" FOR UPDATE`,
    [organizationId, productIds],
  );
  const valuations = new Map(
    valuationRows.rows.map((row) => [row.product_id, { quantity: row.quantity, averageCost: row.average_cost }]),
  );

  const pairs = [
    ...new Map(
      moves.flatMap((m) =>
        [m.from, m.to]
          .filter((l): l is string => l !== null)
          .map((l) => [`${l}|${m.productId}`, [l, m.productId] as const]),
      ),
    ).values(),
  ].sort((a, b) => (a[0] === b[0] ? byteOrder(a[1], b[1]) : byteOrder(a[0], b[0])));
  const pairLocations = pairs.map((p) => p[0]);
  const pairProducts = pairs.map((p) => p[1]);
  await client.query(
    `INSERT INTO stock_levels (organization_id, location_id, product_id, quantity)
    SELECT $1, l, p, 0 FROM unnest($2::text[], $3::text[]) AS x(l, p) ON CONFLICT DO NOTHING`,
    [organizationId, pairLocations, pairProducts],
  );
  const levelRows = await client.query<{ location_id: string; product_id: string; quantity: number }>(
    `SELECT location_id, product_id, quantity FROM stock_levels
      WHERE organization_id = $1 AND (location_id, product_id) IN (SELECT * FROM unnest($2::text[], $3::text[]))
      ORDER BY location_id COLLATE "C", product_id COLLATE "C" FOR UPDATE`,
    [organizationId, pairLocations, pairProducts],
  );
  const levels = new Map(levelRows.rows.map((row) => [`${row.location_id}|${row.product_id}`, row.quantity]));

  const rows: Omit<RawMovement, 'created_at'>[] = [];
  let short = false;
  for (const m of moves) {
    const valuation = valuations.get(m.productId)!;
    if (m.from) {
      const key = `${m.from}|${m.productId}`;
      const before = levels.get(key)!;
      if (before < m.quantity) short = true;
      levels.set(key, before - m.quantity);
    }
    if (m.to) levels.set(`${m.to}|${m.productId}`, levels.get(`${m.to}|${m.productId}`)! + m.quantity);
    // A receipt at the moving average leaves the average as it is; an issue carries it out unchanged.
    if (!m.from) valuation.quantity += m.quantity;
    else if (!m.to) valuation.quantity -= m.quantity;
    rows.push({
      id: newId('smv'),
      document_type: document.type,
      document_id: document.id,
      line_number: m.line,
      product_id: m.productId,
      from_location_id: m.from,
      to_location_id: m.to,
      quantity: m.quantity,
      unit_cost: valuation.averageCost,
    });
  }
  if (short) throw new RawRefusal('insufficient_stock');

  const written = await client.query<{ id: string; created_at: Date }>(
    `INSERT INTO stock_movements (organization_id, id, document_type, document_id, line_number, product_id, from_location_id, to_location_id, quantity, unit_cost)
     SELECT $1, x.id, x.document_type, x.document_id, x.line_number, x.product_id, x.from_location_id, x.to_location_id, x.quantity, x.unit_cost
       FROM jsonb_to_recordset($2::jsonb) AS x(id text, document_type text, document_id text, line_number int, product_id text,
         from_location_id text, to_location_id text, quantity int, unit_cost numeric)
     RETURNING id, created_at`,
    [organizationId, JSON.stringify(rows)],
  );
  const createdAt = new Map(written.rows.map((row) => [row.id, row.created_at]));
  await client.query(
    `UPDATE stock_levels AS l SET quantity = x.quantity, updated_at = now()
      FROM jsonb_to_recordset($2::jsonb) AS x(location_id text, product_id text, quantity int)
     WHERE l.organization_id = $1 AND l.location_id = x.location_id AND l.product_id = x.product_id`,
    [
      organizationId,
      JSON.stringify(
        [...levels].map(([key, quantity]) => ({
          location_id: key.split('|')[0],
          product_id: key.split('|')[1],
          quantity,
        })),
      ),
    ],
  );
  await client.query(
    `UPDATE stock_valuations AS v SET quantity = x.quantity, average_cost = x.average_cost, updated_at = now()
      FROM jsonb_to_recordset($2::jsonb) AS x(product_id text, quantity int, average_cost numeric)
     WHERE v.organization_id = $1 AND v.product_id = x.product_id`,
    [
      organizationId,
      JSON.stringify(
        [...valuations].map(([productId, v]) => ({
          product_id: productId,
          quantity: v.quantity,
          average_cost: v.averageCost,
        })),
      ),
    ],
  );
  return rows.map((row) => ({ ...row, created_at: createdAt.get(row.id)! }));
}

/** The columns of GET /stock-movements (repository.ts movementColumns): the movement and its product's is_empty. */
const MOVEMENT_COLUMNS = `t.id, t.document_type, t.document_id, t.line_number, t.product_id, t.from_location_id, t.to_location_id, t.quantity,
  t.unit_cost, p.is_empty, t.created_at, t.updated_at`;
const MOVEMENTS_FROM =
  'stock_movements t JOIN products p ON p.organization_id = t.organization_id AND p.id = t.product_id';

export interface RawMovementRow extends Omit<RawMovement, 'created_at'> {
  is_empty: boolean;
  created_at: Date;
  updated_at: Date;
}

/**
 * One page of the movements feed as the service reads it (platform/lists/page.ts readPage with updatedSince): keyset
 * on (updated_at, id), `limit + 1` rows to know whether there is more; `after` is the last row of the previous page.
 */
export async function rawMovementsPage(
  db: pg.Pool | Client,
  organizationId: string,
  since: string,
  after: { t: string; id: string } | null,
  limit: number,
): Promise<{ rows: RawMovementRow[]; hasMore: boolean }> {
  const { rows } = after
    ? await db.query<RawMovementRow>(
        `SELECT ${MOVEMENT_COLUMNS} FROM ${MOVEMENTS_FROM} WHERE t.organization_id = $1 AND (t.updated_at, t.id) > ($2::timestamptz, $3)
        ORDER BY t.updated_at, t.id LIMIT $4`,
        [organizationId, after.t, after.id, limit + 1],
      )
    : await db.query<RawMovementRow>(
        `SELECT ${MOVEMENT_COLUMNS} FROM ${MOVEMENTS_FROM} WHERE t.organization_id = $1 AND t.updated_at >= $2::timestamptz
        ORDER BY t.updated_at, t.id LIMIT $3`,
        [organizationId, since, limit + 1],
      );
  return { rows: rows.slice(0, limit), hasMore: rows.length > limit };
}

/** The JSON of a movement as the service answers it (representation.ts toStockMovement, for a key without payments:read). */
export function movementJson(row: RawMovementRow) {
  return {
    id: row.id,
    documentType: row.document_type,
    documentId: row.document_id,
    lineNumber: row.line_number,
    productId: row.product_id,
    fromLocationId: row.from_location_id,
    toLocationId: row.to_location_id,
    quantity: row.quantity,
    unit: row.is_empty ? 'piece' : 'bottle',
    createdAt: row.created_at.toISOString(),
    updatedAt: row.updated_at.toISOString(),
  };
}

/** The document as POST answers it: read back as the service reads it back (routes.ts represent: the document, then its movements). */
export async function rawReadDocument(client: Client, organizationId: string, id: string) {
  const {
    rows: [document],
  } = await client.query<{
    id: string;
    number: string;
    type: string;
    reason_code: string | null;
    note: string | null;
    trip_id: string | null;
    created_at: Date;
    updated_at: Date;
  }>(
    'SELECT id, number, type, reason_code, note, trip_id, created_at, updated_at FROM stock_documents WHERE organization_id = $1 AND id = $2',
    [organizationId, id],
  );
  const { rows } = await client.query<RawMovementRow>(
    `SELECT ${MOVEMENT_COLUMNS} FROM ${MOVEMENTS_FROM}
    WHERE t.organization_id = $1 AND t.document_type = 'stock_document' AND t.document_id = $2 ORDER BY t.line_number, t.id`,
    [organizationId, id],
  );
  return {
    id: document!.id,
    number: document!.number,
    type: document!.type,
    reasonCode: document!.reason_code,
    note: document!.note,
    tripId: document!.trip_id,
    movements: rows.map(movementJson),
    createdAt: document!.created_at.toISOString(),
    updatedAt: document!.updated_at.toISOString(),
  };
}
