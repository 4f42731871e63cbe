// The embedded PostgreSQL of a previous run may still be shutting down when `npm start` runs again; the new start
// must wait for it to exit and start a server of its own, not reuse one that refuses every connection.
import test from 'ava';
import { chmodSync, mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import pg from 'pg';
import { freePort } from '../../scripts/lib/free-port.js';
import { startEmbeddedPostgres } from '../../server/platform/database/embedded-postgres.js';

const postmaster = (dataDir: string) => readFileSync(join(dataDir, 'postmaster.pid'), 'utf8').split('\n');

test('a start while the previous server is still stopping waits for it to exit, then starts its own', async (t) => {
  const scratch = mkdtempSync(join(tmpdir(), 'erp-embedded-'));
  chmodSync(scratch, 0o755);
  const dataDir = join(scratch, 'postgres');
  const port = await freePort();
  try {
    const first = await startEmbeddedPostgres({ dataDir, port, ephemeral: true });
    t.true(first.ownsServer);
    // A "smart" shutdown (SIGTERM) waits for connected clients: the server stays in `stopping` while this one holds on.
    const holder = new pg.Client({ connectionString: first.url('postgres') });
    await holder.connect();
    holder.on('error', () => {});
    const pid = Number(postmaster(dataDir)[0]);
    process.kill(pid, 'SIGTERM');
    while (postmaster(dataDir)[7]?.trim() !== 'stopping') await new Promise((r) => setTimeout(r, 20));

    const second = startEmbeddedPostgres({ dataDir, port, ephemeral: true });
    await new Promise((r) => setTimeout(r, 500));
    await holder.end(); // the previous server can now finish stopping
    const started = await second;
    t.true(started.ownsServer, 'the new start must own a fresh server, not reuse the stopping one');
    const client = new pg.Client({ connectionString: started.url('postgres') });
    await client.connect();
    t.is((await client.query('SELECT 1 AS one')).rows[0].one, 1);
    await client.end();
    t.not(Number(postmaster(dataDir)[0]), pid);
    await started.stop();
  } finally {
    rmSync(scratch, { recursive: true, force: true });
  }
});
