// The DMS mix (dms-mix.ts) alone, on an embedded PostgreSQL of its own, without building the bench's bundle:
// `node --import tsx scripts/bench/dms-mix-alone.ts [--accounting off]`. The accounting connection is on unless
// told (the sandbox ships with it on); off is there to see the accounting posting's share of the time.
import { chmodSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { parseArgs } from 'node:util';
import { startEmbeddedPostgres } from '../../server/platform/database/embedded-postgres.js';
import { freePort } from '../lib/free-port.js';
import { benchDmsMix, dmsMixReport } from './dms-mix.js';

const { values } = parseArgs({ options: { accounting: { type: 'string', default: 'on' } } });
if (values.accounting !== 'on' && values.accounting !== 'off') {
  console.error('--accounting takes on or off');
  process.exit(2);
}
const scratch = mkdtempSync(join(tmpdir(), 'erp-bench-dmsmix-'));
// initdb runs as the postgres user where the bench runs as root (as run.ts does).
chmodSync(scratch, 0o755);
const database = await startEmbeddedPostgres({ dataDir: join(scratch, 'postgres'), port: await freePort() });
try {
  const figures = await benchDmsMix((name) => database.url(name), { accounting: values.accounting === 'on' });
  console.log(dmsMixReport(figures).join('\n'));
} finally {
  await database.stop();
  rmSync(scratch, { recursive: true, force: true });
}
