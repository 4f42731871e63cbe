// Writes the sandbox distributor in set-based statements (one per table, rows as JSON through
// jsonb_to_recordset), inside the bootstrap's transaction: a few milliseconds for the whole distributor.
import type { Tx } from '../../platform/database/transaction.js';
import type { SandboxDistributor } from './synthetic-distributor.js';

/** The resources of external codes (as the modules name them), with the column that is the record's dms code. */
const DMS_CODES = [
  { resource: 'customer', rows: (d: SandboxDistributor) => d.outlets.map((r) => ({ id: r.id, code: r.outlet_code })) },
  { resource: 'product', rows: (d: SandboxDistributor) => d.products.map((r) => ({ id: r.id, code: r.product_code })) },
  { resource: 'location', rows: (d: SandboxDistributor) => d.locations.map((r) => ({ id: r.id, code: r.code })) },
  { resource: 'salesperson', rows: (d: SandboxDistributor) => d.salespeople.map((r) => ({ id: r.id, code: r.salesman_code })) },
  { resource: 'route', rows: (d: SandboxDistributor) => d.routes.map((r) => ({ id: r.id, code: r.route_code })) },
];

export async function writeDistributor(tx: Tx, organizationId: string, currency: string, d: SandboxDistributor): Promise<void> {
  const insert = (sql: string, rows: unknown[], ...more: unknown[]) => tx.query(sql, [organizationId, JSON.stringify(rows), ...more]);

  await insert(
    `INSERT INTO customers (organization_id, id, outlet_code, name, status, channel, price_group, route_id, credit_limit_amount, credit_limit_currency,
       payment_terms_days, address, region, phone, tax_id, gps_latitude, gps_longitude, contact)
     SELECT $1, id, outlet_code, name, status, channel, price_group, route_id, credit_limit_amount, credit_limit_currency,
       payment_terms_days, address, region, phone, tax_id, gps_latitude, gps_longitude, contact
       FROM jsonb_to_recordset($2::jsonb) AS x(id text, outlet_code text, name text, status text, channel text, price_group text, route_id text,
         credit_limit_amount numeric, credit_limit_currency text, payment_terms_days int, address jsonb, region text, phone text, tax_id text,
         gps_latitude numeric, gps_longitude numeric, contact jsonb)`,
    d.outlets,
  );
  await insert(
    `INSERT INTO products (organization_id, id, product_code, name, brand, category, status, pack_size, selling_units, tracks_stock, tax_rate,
       is_empty, deposit_amount, deposit_currency, empties)
     SELECT $1, id, product_code, name, brand, category, status, pack_size, ARRAY(SELECT jsonb_array_elements_text(selling_units)), tracks_stock, tax_rate,
       is_empty, deposit_amount, CASE WHEN deposit_amount IS NULL THEN NULL ELSE $3 END, empties
       FROM jsonb_to_recordset($2::jsonb) AS x(id text, product_code text, name text, brand text, category text, status text, pack_size int,
         selling_units jsonb, tracks_stock boolean, tax_rate numeric, is_empty boolean, deposit_amount numeric, empties jsonb)`,
    d.products,
    currency,
  );
  await insert(
    `INSERT INTO prices (organization_id, id, product_id, price_group, unit, amount, currency, valid_from)
     SELECT $1, id, product_id, price_group, unit, amount, $3, valid_from
       FROM jsonb_to_recordset($2::jsonb) AS x(id text, product_id text, price_group text, unit text, amount numeric, valid_from date)`,
    d.prices,
    currency,
  );
  await insert(
    `INSERT INTO locations (organization_id, id, code, kind, stock_condition, name, active, route_id)
     SELECT $1, id, code, kind, stock_condition, name, true, route_id
       FROM jsonb_to_recordset($2::jsonb) AS x(id text, code text, kind text, stock_condition text, name text, route_id text)`,
    d.locations,
  );
  await insert(
    `INSERT INTO salespeople (organization_id, id, salesman_code, name, phone, route_id, active)
     SELECT $1, id, salesman_code, name, phone, route_id, true
       FROM jsonb_to_recordset($2::jsonb) AS x(id text, salesman_code text, name text, phone text, route_id text)`,
    d.salespeople,
  );
  await insert(
    `INSERT INTO routes (organization_id, id, route_code, name, salesperson_id, van_location_id, active)
     SELECT $1, id, route_code, name, salesperson_id, van_location_id, true
       FROM jsonb_to_recordset($2::jsonb) AS x(id text, route_code text, name text, salesperson_id text, van_location_id text)`,
    d.routes,
  );
  await insert(
    `INSERT INTO journey_plans (organization_id, id, route_id)
     SELECT $1, id, route_id FROM jsonb_to_recordset($2::jsonb) AS x(id text, route_id text)`,
    d.journeyPlans,
  );
  await insert(
    `INSERT INTO journey_plan_visits (organization_id, journey_plan_id, customer_id, weekday, sequence, frequency, week_parity)
     SELECT $1, journey_plan_id, customer_id, weekday, sequence, frequency, week_parity
       FROM jsonb_to_recordset($2::jsonb) AS x(journey_plan_id text, customer_id text, weekday smallint, sequence int, frequency text, week_parity smallint)`,
    d.visits,
  );
  const codes = DMS_CODES.flatMap(({ resource, rows }) => rows(d).map((row) => ({ ...row, resource })));
  await insert(
    `INSERT INTO external_codes (organization_id, resource, code_system, code, record_id)
     SELECT $1, resource, 'dms', code, id FROM jsonb_to_recordset($2::jsonb) AS x(resource text, code text, id text)`,
    codes,
  );
}
