// `npm run bench -- --only idle`: an idle service stays idle (issue 40, item 2; decision 0040). On a database of its
// own, the service is started in each topology with nothing to do, and the statements it sends are counted for
// `seconds`: an API process alone (`--role api`), a worker alone (`--role worker`), and one process of every role
// (`npm start`). Counted exactly, per process: every connection of the service goes through a small TCP proxy that
// counts the frontend messages that run a statement (Query 'Q' of the simple protocol, Execute 'E' of the extended
// one; BEGIN and COMMIT are statements too). Beside it, pg_stat_database's xact_commit and tup_returned deltas of the
// database over the same window (minus the bench's own read), a cross-check that needs no proxy, but coarse: it also
// counts autovacuum's work on the freshly migrated tables, and Postgres flushes the counters of idle backends late.
// Then the delay from commit to the start of work: with the single process idle, a DMS push of one document (an
// asynchronous connection) is answered (its transaction committed), and the time until its posting wrote its flag
// (the document's updated_at, written by the job's posting transaction as it ends: an upper bound of the start of
// the work, which nothing records) is read; median and worst of `pushes`, spaced 1.5 s apart so that each finds the
// service idle again; and the time until the bench saw the flag posted.
import { createServer, type Server, type Socket, connect } from 'node:net';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import pg from 'pg';
import { pino } from 'pino';
import { loadConfig } from '../../server/platform/config.js';
import { kyselyOver } from '../../server/platform/database/database.js';
import { applyMigrations } from '../../server/platform/database/migrations.js';
import { inTransaction } from '../../server/platform/database/transaction.js';
import { startService, type RunningService } from '../../server/composition/service.js';
import type { Role } from '../../server/platform/config.js';
import { actingOrganization, createOrganization } from '../../server/platform/access/organizations.js';
import { createApiKey } from '../../server/platform/access/api-keys.js';
import { operatorActor } from '../../server/platform/access/actor.js';
import { locations } from '../../server/modules/locations/service.js';
import { addConnection } from '../../server/modules/dms/connections.js';

export interface IdleFigures {
  seconds: number;
  /** Per topology: statements a second through the proxy, and the database's transactions and rows read a second. */
  idle: {
    role: Role;
    statementsPerSecond: number;
    transactionsPerSecond: number;
    rowsReturnedPerSecond: number;
    byKind: Record<string, number>;
    /** With more than one window (FAIR_IDLE_WINDOWS): each later window's statements a second and their kinds. */
    later: { statementsPerSecond: number; byKind: Record<string, number> }[];
  }[];
  /** Commit of a one-document DMS push to its posting's flag write (an upper bound of the start of work), on the idle single process (0 when that role was not run). */
  pushes: number;
  startMedianMs: number;
  startMaxMs: number;
  /** The same push to its `posted` flag. */
  postedMedianMs: number;
}

/** A TCP proxy to Postgres that counts the statements its clients send (Query and Execute messages). */
async function countingProxy(target: {
  host: string;
  port: number;
}): Promise<{ port: number; counts: Map<string, number>; close(): Promise<void> }> {
  const counts = new Map<string, number>();
  const sockets = new Set<Socket>();
  const server: Server = createServer((client) => {
    const upstream = connect(target.port, target.host);
    sockets.add(client).add(upstream);
    let buffer = Buffer.alloc(0);
    let started = false; // the startup message (and an SSLRequest) carries no type byte
    let parsed = ''; // the text of the last statement parsed on this connection (what an Execute runs, near enough)
    client.on('data', (chunk: Buffer) => {
      upstream.write(chunk);
      buffer = Buffer.concat([buffer, chunk]);
      for (;;) {
        if (!started) {
          if (buffer.length < 8) break;
          const length = buffer.readInt32BE(0);
          if (buffer.length < length) break;
          const code = buffer.readInt32BE(4);
          buffer = buffer.subarray(length);
          if (code !== 80877103) started = true; // an SSLRequest is followed by the real startup message
          continue;
        }
        if (buffer.length < 5) break;
        const type = String.fromCharCode(buffer[0]!);
        const length = buffer.readInt32BE(1);
        if (buffer.length < 1 + length) break;
        if (type === 'P') {
          const body = buffer.subarray(5, 1 + length);
          const nameEnd = body.indexOf(0);
          parsed = body.subarray(nameEnd + 1, body.indexOf(0, nameEnd + 1)).toString('utf8');
        }
        if (type === 'Q' || type === 'E') {
          // The statement's first word names its kind; with FAIR_IDLE_TEXT=1, its first 70 characters.
          const text = type === 'Q' ? buffer.subarray(5, 1 + length).toString('utf8') : parsed;
          const words = text.trim().replace(/\s+/g, ' ');
          const kind = process.env.FAIR_IDLE_TEXT ? words.slice(0, 70) : words.split(' ')[0]!.toUpperCase();
          counts.set(kind, (counts.get(kind) ?? 0) + 1);
        }
        buffer = buffer.subarray(1 + length);
      }
    });
    upstream.on('data', (chunk) => client.write(chunk));
    const end = () => {
      client.destroy();
      upstream.destroy();
      sockets.delete(client);
      sockets.delete(upstream);
    };
    client.on('error', end).on('close', end);
    upstream.on('error', end).on('close', end);
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return {
    port: (server.address() as { port: number }).port,
    counts,
    close: () =>
      new Promise<void>((resolve) => {
        for (const socket of sockets) socket.destroy();
        server.close(() => resolve());
      }),
  };
}

const total = (counts: Map<string, number>) => [...counts.values()].reduce((a, b) => a + b, 0);

export async function benchIdle(
  urlOf: (database: string) => string,
  options: { seconds?: number; pushes?: number; windows?: number; roles?: readonly Role[] } = {},
): Promise<IdleFigures> {
  const seconds = options.seconds ?? 60; // pg-boss's slowest timers (supervision, queue cache) come each minute
  // FAIR_IDLE_WINDOWS=3: each role is measured over three windows in a row, the first (the first minute after the
  // start's own statements) and the steady state after it. FAIR_IDLE_ROLES=worker: only the roles named.
  const windows = options.windows ?? Math.max(1, Number(process.env.FAIR_IDLE_WINDOWS ?? 1) || 1);
  const roles =
    options.roles ??
    ((process.env.FAIR_IDLE_ROLES?.split(',').filter((r) => ['api', 'worker', 'all'].includes(r)) as Role[]) || []);
  const measured: readonly Role[] = roles.length > 0 ? roles : ['api', 'worker', 'all'];
  const pushes = measured.includes('all') ? (options.pushes ?? 10) : 0;
  const name = 'bench_idle';
  const admin = new pg.Pool({ connectionString: urlOf('postgres'), max: 1 });
  admin.on('error', () => {});
  await admin.query(`DROP DATABASE IF EXISTS ${name}`);
  await admin.query(`CREATE DATABASE ${name}`);
  const direct = new URL(urlOf(name));
  const pool = new pg.Pool({ connectionString: urlOf(name), max: 2 });
  pool.on('error', () => {});
  const db = kyselyOver(pool);
  const proxy = await countingProxy({ host: direct.hostname, port: Number(direct.port || 5432) });
  const proxied = new URL(direct);
  proxied.hostname = '127.0.0.1';
  proxied.port = String(proxy.port);
  const dataDir = mkdtempSync(join(tmpdir(), 'bench-idle-'));
  const config = loadConfig({
    DATABASE_URL: proxied.toString(),
    PORT: '0',
    LOG_LEVEL: 'silent',
    SANDBOX_BOOTSTRAP: 'false',
    DATA_DIR: dataDir,
    SHUTDOWN_TIMEOUT_MS: '5000',
    NODE_ENV: 'production',
    ENVIRONMENT: 'production',
    CURSOR_SECRET: 'bench-cursor-secret-0123456789',
    WEBHOOK_SECRET_KEY: 'b'.repeat(64),
    PUBLIC_BASE_URL: 'http://127.0.0.1',
  });
  const stats = async () => {
    // The bench's own read, by its direct connection (not through the proxy); it counts one transaction itself.
    const { rows } = await admin.query<{ xact: string; tup: string }>(
      'SELECT xact_commit + xact_rollback AS xact, tup_returned AS tup FROM pg_stat_database WHERE datname = $1',
      [name],
    );
    return { xact: Number(rows[0]!.xact), tup: Number(rows[0]!.tup) };
  };
  const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));
  let running: RunningService | null = null;
  const idle: IdleFigures['idle'] = [];
  try {
    await applyMigrations(pool);
    const kinds = () =>
      Object.fromEntries([...proxy.counts].map(([kind, n]) => [kind, Math.round((n / seconds) * 100) / 100]));
    for (const role of measured) {
      running = await startService(config, pino({ level: 'silent' }), { role });
      await sleep(5_000); // past the start's own statements (migrations checked, queues made, first sweep)
      proxy.counts.clear();
      const before = await stats();
      await sleep(seconds * 1_000);
      const after = await stats();
      const first = { statementsPerSecond: total(proxy.counts) / seconds, byKind: kinds() };
      const later: IdleFigures['idle'][number]['later'] = [];
      for (let window = 1; window < windows; window += 1) {
        proxy.counts.clear();
        await sleep(seconds * 1_000);
        later.push({ statementsPerSecond: total(proxy.counts) / seconds, byKind: kinds() });
      }
      idle.push({
        role,
        ...first,
        transactionsPerSecond: (after.xact - before.xact - 1) / seconds,
        rowsReturnedPerSecond: (after.tup - before.tup) / seconds,
        later,
      });
      if (role !== 'all' || pushes === 0) {
        await running.stop();
        running = null;
      }
    }

    if (pushes === 0) return { seconds, idle, pushes, startMedianMs: 0, startMaxMs: 0, postedMedianMs: 0 };
    // The delay from commit to the start of work, on the single process (idle) just measured.
    const record = await createOrganization(db, {
      name: 'Bench idle',
      baseCurrency: 'UGX',
      modules: ['delivery', 'field-sales'],
    });
    const operator = operatorActor(actingOrganization(record), 'bench');
    await inTransaction(db, async (tx) => {
      for (const code of ['M01', 'D01', 'V_R01-G', 'V_R01-B'])
        await locations.create(tx, operator, { code, name: code });
      await addConnection(tx, record.id, 'canonical', { distributorCode: 'DIST001', synchronous: false });
    });
    const unlimited = { perMinute: 100_000_000, burst: 10_000_000 };
    const key = (
      await createApiKey(db, {
        organizationId: record.id,
        name: 'bench idle',
        environment: 'production',
        scopes: ['dms:ingest'],
        rateLimits: { read: unlimited, write: unlimited, ingest: unlimited },
      })
    ).secret;
    const starts: number[] = [];
    const posted: number[] = [];
    for (let i = 0; i < pushes; i += 1) {
      await sleep(1_500);
      // A product: master data that waits for nothing, posted by the worker like any document.
      const document = {
        documentType: 'product',
        distributorCode: 'DIST001',
        documentNumber: String(100_201 + i),
        documentDate: '2026-11-25',
        salesmanCode: 'SM01',
        status: 'active',
        body: { name: `Soda ${i + 1}`, packSize: 24, taxRate: '18', sellingUnits: ['case', 'bottle'] },
      };
      const res = await fetch(`${running!.url}/api/v1/dms/canonical/documents`, {
        method: 'POST',
        headers: { authorization: `Bearer ${key}`, 'content-type': 'application/json', 'idempotency-key': `idle-${i}` },
        body: JSON.stringify({ documents: [document] }),
      });
      const answered = Date.now();
      const answer = (await res.json()) as { flags: { documentId: string; state: string }[] };
      if (res.status >= 300) throw new Error(`push: ${res.status} ${JSON.stringify(answer)}`);
      const id = answer.flags[0]!.documentId;
      for (const deadline = Date.now() + 60_000; ; ) {
        if (Date.now() > deadline) throw new Error('the pushed document was not posted within 60 s');
        const row = await db
          .selectFrom('dms_documents')
          .select(['state', 'updated_at', 'received_at'])
          .where('organization_id', '=', record.id)
          .where('id', '=', id)
          .executeTakeFirstOrThrow();
        if (row.state !== 'received') {
          if (row.state !== 'posted') throw new Error(`the pushed document was ${row.state}`);
          // updated_at is written by the posting transaction as it ends (this machine's clock, as `answered`).
          starts.push(Math.max(0, row.updated_at.getTime() - answered));
          posted.push(Date.now() - answered);
          break;
        }
        await sleep(5);
      }
    }
    const median = (values: number[]) => [...values].sort((a, b) => a - b)[Math.floor(values.length / 2)]!;
    return {
      seconds,
      idle,
      pushes,
      startMedianMs: median(starts),
      startMaxMs: Math.max(...starts),
      postedMedianMs: median(posted),
    };
  } finally {
    await running?.stop().catch(() => {});
    await proxy.close();
    await pool.end();
    await admin.query(`DROP DATABASE IF EXISTS ${name} WITH (FORCE)`).catch(() => {});
    await admin.end();
    rmSync(dataDir, { recursive: true, force: true });
  }
}

export function idleReport(f: IdleFigures): string[] {
  const label = {
    api: 'an API process alone (--role api)',
    worker: 'a worker alone (--role worker)',
    all: 'one process of every role (npm start)',
  } as const;
  return [
    `Idle service (nothing to do, ${f.seconds} s each; statements counted at the wire by a proxy, aim under 2 a second for an API process and a worker):`,
    ...f.idle.map(
      (r) =>
        `  ${label[r.role]}: ${r.statementsPerSecond.toFixed(2)} statements/s (${Object.entries(r.byKind)
          .map(([k, n]) => `${k} ${n}`)
          .join(
            ', ',
          )}); database: ${r.transactionsPerSecond.toFixed(2)} transactions/s, ${r.rowsReturnedPerSecond.toFixed(0)} rows read/s${r.later
          .map(
            (w, i) =>
              `\n    then window ${i + 2}: ${w.statementsPerSecond.toFixed(2)} statements/s (${Object.entries(w.byKind)
                .map(([k, n]) => `${k} ${n}`)
                .join(', ')})`,
          )
          .join('')}`,
    ),
    ...(f.pushes === 0
      ? []
      : [
          `  commit to work (a one-document DMS push on the idle single process; aim no worse than before): its posting's flag written ${f.startMedianMs.toFixed(0)} ms after the answer (median of ${f.pushes}; worst ${f.startMaxMs.toFixed(0)} ms), seen posted by a client polling every 5 ms after ${f.postedMedianMs.toFixed(0)} ms`,
        ]),
  ];
}
