// Baseline: a bare express 5 app doing the same database work as the service with raw pg and nothing else.
// Every request authenticates as any API with keys must: it parses the Bearer header, hashes the secret as the
// service does (api-key-secret.ts) and reads its key with one indexed SELECT (by prefix and secret hash, joined to
// its organisation, not revoked, not expired); an unknown key is 401. No rate limit: that is the service's own
// feature, and the aims leave room for it. Then:
//   POST /customers = one insert plus the idempotency row of the requesting key, in one transaction;
//   GET /customers  = one keyset page (or, with updatedSince, one page of the change feed);
//   PUT /prices     = one set-based upsert of the batch, in one transaction;
//   POST /stock-transfers = the service's statements (raw-stock.ts: the claim of the Idempotency-Key, the posting's
//                     12, the read-back of the document and its movements, the idempotency row), in one transaction;
//   GET /stock-movements  = one page of the movements feed (since; keyset on (updated_at, id)), as the service reads it;
//   POST /invoices  = the service's statements (raw-money.ts: the claim of the Idempotency-Key, createInvoice's 27, the
//                     read-back of the invoice and its lines, the idempotency row), in one transaction;
//   GET /invoices   = the first page, newest first, with every invoice's lines (two statements, as the service's).
// The organisation is the key's. Statements are sent unnamed (parse and bind each time), as the service sends its own.
// Environment: PORT, DATABASE_URL, ENVIRONMENT (sandbox|production, default production), BENCH_API_KEYS (the
// secrets the bench will send, comma-separated: checked once at start, so that a key this baseline cannot read
// fails the start instead of measuring 401s; each request still reads its key from the database).
import { createHash, randomUUID } from 'node:crypto';
import express, { type RequestHandler } from 'express';
import pg from 'pg';
import { hashSecret, parseSecret } from '../../../server/platform/access/api-key-secret.js';
import { movementJson, rawMovementsPage, rawReadDocument, RawRefusal, rawTransfer } from './raw-stock.js';
import { rawCreateInvoice, rawInvoicesPage, rawReadInvoice, type RawInvoiceCommand } from './raw-money.js';

interface Key {
  id: string;
  organization_id: string;
  scopes: string[];
  api_access_enabled: boolean;
  base_currency: string;
}

const pool = new pg.Pool({ connectionString: process.env.DATABASE_URL, max: 20 });
const environment = process.env.ENVIRONMENT ?? 'production';

const KEY_QUERY = `SELECT k.id, k.organization_id, k.scopes, o.api_access_enabled, o.base_currency
  FROM api_keys k JOIN organizations o ON o.id = k.organization_id
 WHERE k.prefix = $1 AND k.secret_hash = $2 AND k.environment = $3
   AND (k.revoked_at IS NULL OR k.revoked_at > now()) AND (k.expires_at IS NULL OR k.expires_at > now())`;

async function findKey(secret: string): Promise<Key | undefined> {
  const parsed = parseSecret(secret);
  if (!parsed || parsed.environment !== environment) return undefined;
  const { rows } = await pool.query<Key>(KEY_QUERY, [parsed.prefix, hashSecret(secret), parsed.environment]);
  return rows[0];
}

/** The key of the request in res.locals.key, or 401 (unknown, revoked, expired), 403 (API off, scope missing). */
function authenticate(scope: string): RequestHandler {
  return async (req, res, next) => {
    const match = /^Bearer +(\S+) *$/i.exec(req.headers.authorization ?? '');
    const key = match ? await findKey(match[1]!) : undefined;
    if (!key) {
      res.status(401).json({ error: 'unauthorized' });
      return;
    }
    if (!key.api_access_enabled || !key.scopes.includes(scope)) {
      res.status(403).json({ error: 'forbidden' });
      return;
    }
    res.locals.key = key;
    next();
  };
}

const app = express();
app.use(express.json({ limit: '1mb' }));

app.post('/api/v1/customers', authenticate('customers:write'), async (req, res) => {
  const key = res.locals.key as Key;
  const client = await pool.connect();
  try {
    await client.query('BEGIN');
    const { rows } = await client.query(
      `INSERT INTO customers (organization_id, id, outlet_code, name, status, channel, updated_at) VALUES ($1, $2, $3, $4, 'active', $5, now())
       RETURNING id, outlet_code, name, status, channel, created_at, updated_at`,
      [key.organization_id, `cus_${randomUUID()}`, req.body.outletCode, req.body.name, req.body.channel],
    );
    const body = JSON.stringify(rows[0]);
    await client.query(
      `INSERT INTO idempotency_keys (organization_id, api_key_id, key, method, path, request_hash, response_status, response_body)
       VALUES ($1, $2, $3, 'POST', '/api/v1/customers', repeat('0', 64), 201, $4)`,
      [key.organization_id, key.id, req.header('idempotency-key'), body],
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

app.get('/api/v1/customers', authenticate('customers:read'), async (req, res) => {
  const { organization_id: organizationId } = res.locals.key as Key;
  const limit = Number(req.query.limit ?? 25);
  if (req.query.updatedSince === undefined) {
    const { rows } = await pool.query('SELECT * FROM customers WHERE organization_id = $1 ORDER BY id DESC LIMIT $2', [
      organizationId,
      limit + 1,
    ]);
    res.json({ data: rows.slice(0, limit), nextCursor: null, hasMore: rows.length > limit });
    return;
  }
  // The change feed: keyset on (updated_at, id), the cursor a plain "timestamp|id".
  const [t, id] =
    typeof req.query.cursor === 'string' ? Buffer.from(req.query.cursor, 'base64url').toString().split('|') : [];
  const { rows } = t
    ? await pool.query(
        'SELECT * FROM customers WHERE organization_id = $1 AND (updated_at, id) > ($2::timestamptz, $3) ORDER BY updated_at, id LIMIT $4',
        [organizationId, t, id, limit + 1],
      )
    : await pool.query(
        'SELECT * FROM customers WHERE organization_id = $1 AND updated_at >= $2::timestamptz ORDER BY updated_at, id LIMIT $3',
        [organizationId, req.query.updatedSince, limit + 1],
      );
  const page = rows.slice(0, limit);
  const last = page[page.length - 1];
  const hasMore = rows.length > limit;
  res.json({
    data: page,
    nextCursor: hasMore ? Buffer.from(`${last.updated_at.toISOString()}|${last.id}`).toString('base64url') : null,
    hasMore,
  });
});

app.put('/api/v1/prices', authenticate('prices:write'), async (req, res) => {
  const { organization_id: organizationId } = res.locals.key as Key;
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

app.post('/api/v1/stock-transfers', authenticate('stock:write'), async (req, res) => {
  const key = res.locals.key as Key;
  const client = await pool.connect();
  try {
    await client.query('BEGIN');
    const {
      rows: [claim],
    } = await client.query<{ locked: boolean; method: string | null }>(
      'SELECT * FROM claim_idempotency_key($1, $2, $3, 24)',
      [key.organization_id, key.id, req.header('idempotency-key')],
    );
    if (!claim!.locked || claim!.method !== null) throw new Error('the bench sends a fresh Idempotency-Key each time');
    const posted = await rawTransfer(client, key.organization_id, req.body);
    const body = JSON.stringify(await rawReadDocument(client, key.organization_id, posted.id));
    await client.query(
      `INSERT INTO idempotency_keys (organization_id, api_key_id, key, method, path, request_hash, response_status, response_body)
       VALUES ($1, $2, $3, 'POST', '/api/v1/stock-transfers', $4, 201, $5)`,
      [
        key.organization_id,
        key.id,
        req.header('idempotency-key'),
        createHash('sha256').update(JSON.stringify(req.body)).digest('hex'),
        body,
      ],
    );
    await client.query('COMMIT');
    res.status(201).type('application/json').send(body);
  } catch (error) {
    await client.query('ROLLBACK');
    res.status(error instanceof RawRefusal ? 422 : 500).json({ error: String(error) });
  } finally {
    client.release();
  }
});

app.get('/api/v1/stock-movements', authenticate('stock:read'), async (req, res) => {
  const { organization_id: organizationId } = res.locals.key as Key;
  const limit = Number(req.query.limit ?? 25);
  // The cursor a plain "timestamp|id" of the last row, as on GET /customers.
  const [t, id] =
    typeof req.query.cursor === 'string' ? Buffer.from(req.query.cursor, 'base64url').toString().split('|') : [];
  const { rows, hasMore } = await rawMovementsPage(
    pool,
    organizationId,
    String(req.query.since),
    t && id ? { t, id } : null,
    limit,
  );
  const last = rows[rows.length - 1];
  res.json({
    data: rows.map(movementJson),
    nextCursor:
      hasMore && last ? Buffer.from(`${last.updated_at.toISOString()}|${last.id}`).toString('base64url') : null,
    hasMore,
  });
});

app.post('/api/v1/invoices', authenticate('invoices:write'), async (req, res) => {
  const key = res.locals.key as Key;
  const body = req.body as Omit<RawInvoiceCommand, 'currency' | 'lines'> & {
    lines: {
      productId: string;
      unit: 'case' | 'bottle' | 'piece';
      quantity: number;
      unitPrice: { amount: string; currency: string };
      discount?: { amount: string; currency: string };
    }[];
  };
  const client = await pool.connect();
  try {
    await client.query('BEGIN');
    const {
      rows: [claim],
    } = await client.query<{ locked: boolean; method: string | null }>(
      'SELECT * FROM claim_idempotency_key($1, $2, $3, 24)',
      [key.organization_id, key.id, req.header('idempotency-key')],
    );
    if (!claim!.locked || claim!.method !== null) throw new Error('the bench sends a fresh Idempotency-Key each time');
    // Money in the organisation's base currency, as the service's route accepts it (acceptAmount).
    const amount = (money: { amount: string; currency: string }) => {
      if (money.currency !== key.base_currency) throw new RawRefusal('business_rule');
      return money.amount;
    };
    const posted = await rawCreateInvoice(client, key.organization_id, {
      customerId: body.customerId,
      locationId: body.locationId,
      issueDate: body.issueDate,
      currency: key.base_currency,
      lines: body.lines.map((line) => ({
        productId: line.productId,
        unit: line.unit,
        quantity: line.quantity,
        unitPrice: amount(line.unitPrice),
        ...(line.discount === undefined ? {} : { discount: amount(line.discount) }),
      })),
    });
    const text = JSON.stringify(await rawReadInvoice(client, key.organization_id, posted.id));
    await client.query(
      `INSERT INTO idempotency_keys (organization_id, api_key_id, key, method, path, request_hash, response_status, response_body)
       VALUES ($1, $2, $3, 'POST', '/api/v1/invoices', $4, 201, $5)`,
      [
        key.organization_id,
        key.id,
        req.header('idempotency-key'),
        createHash('sha256').update(JSON.stringify(req.body)).digest('hex'),
        text,
      ],
    );
    await client.query('COMMIT');
    res.status(201).type('application/json').send(text);
  } catch (error) {
    await client.query('ROLLBACK');
    res.status(error instanceof RawRefusal ? 422 : 500).json({ error: String(error) });
  } finally {
    client.release();
  }
});

app.get('/api/v1/invoices', authenticate('invoices:read'), async (req, res) => {
  const { organization_id: organizationId } = res.locals.key as Key;
  // The first page only (the bench reads no other); the cursor a plain id of the last row.
  const { data, hasMore, last } = await rawInvoicesPage(pool, organizationId, Number(req.query.limit ?? 25));
  res.json({ data, nextCursor: hasMore && last ? Buffer.from(last).toString('base64url') : null, hasMore });
});

// Every key the bench will send must be readable here, or the start fails (a 401 is not a figure).
const secrets = (process.env.BENCH_API_KEYS ?? '').split(',').filter((secret) => secret !== '');
const unreadable = (
  await Promise.all(secrets.map(async (secret) => ((await findKey(secret)) ? null : secret.slice(0, 14))))
).filter((prefix) => prefix !== null);
if (unreadable.length > 0) {
  console.error(`raw pg baseline: no usable ${environment} key for ${unreadable.join(', ')}`);
  process.exit(1);
}
const server = app.listen(Number(process.env.PORT), '127.0.0.1', () => console.log('ready'));
process.on('SIGTERM', () => server.close(() => void pool.end().then(() => process.exit(0))));
