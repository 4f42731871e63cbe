// Baseline: a bare express 5 app doing the same database work as the service with raw pg and nothing else:
// POST /customers = one insert plus the idempotency row in one transaction; GET /customers = one keyset page.
import { randomUUID } from 'node:crypto';
import express from 'express';
import pg from 'pg';

const pool = new pg.Pool({ connectionString: process.env.DATABASE_URL, max: 20 });
const organizationId = process.env.ORGANIZATION_ID!;
const app = express();
app.use(express.json());

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
       VALUES ($1, 'raw', $2, 'POST', '/api/v1/customers', repeat('0', 64), 201, $3)`,
      [organizationId, req.header('idempotency-key'), body],
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
  const { rows } = await pool.query(
    'SELECT * FROM customers WHERE organization_id = $1 ORDER BY id DESC LIMIT $2',
    [organizationId, limit + 1],
  );
  res.json({ data: rows.slice(0, limit), nextCursor: null, hasMore: rows.length > limit });
});

const server = app.listen(Number(process.env.PORT), '127.0.0.1', () => console.log('ready'));
process.on('SIGTERM', () => server.close(() => void pool.end().then(() => process.exit(0))));
