// Baseline: a bare express 5 app doing the same database work as the service with raw pg and nothing else:
// POST /customers = one insert plus the idempotency row in one transaction; GET /customers = one keyset page (or,
// with updatedSince, one page of the change feed); PUT /prices = one set-based upsert of the batch.
import { randomUUID } from 'node:crypto';
import express from 'express';
import pg from 'pg';

const pool = new pg.Pool({ connectionString: process.env.DATABASE_URL, max: 20 });
const organizationId = process.env.ORGANIZATION_ID!;
const apiKeyId = process.env.API_KEY_ID!; // a real key: idempotency rows reference api_keys
const app = express();
app.use(express.json({ limit: '1mb' }));

app.post('/api/v1/customers', async (req, res) => {
  const client = await pool.connect();
  try {
    await client.query('BEGIN');
    const { rows } = await client.query(
      `INSERT INTO customers (organization_id, id, outlet_code, name, status, channel, updated_at) VALUES ($1, $2, $3, $4, 'active', $5, now())
       RETURNING id, outlet_code, name, status, channel, created_at, updated_at`,
      [organizationId, `cus_${randomUUID()}`, req.body.outletCode, req.body.name, req.body.channel],
    );
    const body = JSON.stringify(rows[0]);
    await client.query(
      `INSERT INTO idempotency_keys (organization_id, api_key_id, key, method, path, request_hash, response_status, response_body)
       VALUES ($1, $4, $2, 'POST', '/api/v1/customers', repeat('0', 64), 201, $3)`,
      [organizationId, req.header('idempotency-key'), body, apiKeyId],
    );
    await client.query('COMMIT');
    res.status(201).type('application/json').send(body);
  } catch (error) {
    await client.query('ROLLBACK');
    res.status(500).json({ error: String(error) });
  } finally {
    client.release();
  }
});

app.get('/api/v1/customers', async (req, res) => {
  const limit = Number(req.query.limit ?? 25);
  if (req.query.updatedSince === undefined) {
    const { rows } = await pool.query('SELECT * FROM customers WHERE organization_id = $1 ORDER BY id DESC LIMIT $2', [organizationId, limit + 1]);
    res.json({ data: rows.slice(0, limit), nextCursor: null, hasMore: rows.length > limit });
    return;
  }
  // The change feed: keyset on (updated_at, id), the cursor a plain "timestamp|id".
  const [t, id] = typeof req.query.cursor === 'string' ? Buffer.from(req.query.cursor, 'base64url').toString().split('|') : [];
  const { rows } = t
    ? await pool.query('SELECT * FROM customers WHERE organization_id = $1 AND (updated_at, id) > ($2::timestamptz, $3) ORDER BY updated_at, id LIMIT $4', [organizationId, t, id, limit + 1])
    : await pool.query('SELECT * FROM customers WHERE organization_id = $1 AND updated_at >= $2::timestamptz ORDER BY updated_at, id LIMIT $3', [organizationId, req.query.updatedSince, limit + 1]);
  const page = rows.slice(0, limit);
  const last = page[page.length - 1];
  const hasMore = rows.length > limit;
  res.json({ data: page, nextCursor: hasMore ? Buffer.from(`${last.updated_at.toISOString()}|${last.id}`).toString('base64url') : null, hasMore });
});

app.put('/api/v1/prices', async (req, res) => {
  // The same database work as the service's batch upsert: one set-based statement in one transaction.
  const client = await pool.connect();
  try {
    await client.query('BEGIN');
    const { rows } = await client.query(
      `INSERT INTO prices (organization_id, id, product_id, price_group, unit, amount, currency, valid_from, updated_at)
       SELECT $1, 'prc_' || md5(p.id || x."priceGroup" || x.unit), p.id, x."priceGroup", x.unit, (x."unitPrice"->>'amount')::numeric, x."unitPrice"->>'currency', x."validFrom"::date, now()
         FROM jsonb_to_recordset($2::jsonb) AS x("productCode" text, "priceGroup" text, unit text, "unitPrice" jsonb, "validFrom" text)
         JOIN products p ON p.organization_id = $1 AND p.product_code = x."productCode"
       ON CONFLICT (organization_id, product_id, price_group, unit) DO UPDATE
         SET amount = EXCLUDED.amount, currency = EXCLUDED.currency, valid_from = EXCLUDED.valid_from, updated_at = now()
       RETURNING id, product_id, price_group, unit, amount::text, currency, valid_from, created_at, updated_at`,
      [organizationId, JSON.stringify(req.body.items)],
    );
    await client.query('COMMIT');
    res.json({ data: rows });
  } catch (error) {
    await client.query('ROLLBACK');
    res.status(500).json({ error: String(error) });
  } finally {
    client.release();
  }
});

const server = app.listen(Number(process.env.PORT), '127.0.0.1', () => console.log('ready'));
process.on('SIGTERM', () => server.close(() => void pool.end().then(() => process.exit(0))));
