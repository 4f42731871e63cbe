// A start that explains itself (issue 19, part 8): a port in use, a DATABASE_URL that does not answer and a data
// directory the embedded PostgreSQL cannot use each end `npm start` (server/main.ts as its own process) with one
// line on stderr saying what is wrong and what to do, nothing on stdout, and exit code 1. Before, each ended in a
// pino fatal log with a stack trace on stdout.
import test from 'ava';
import pg from 'pg';
import { spawn } from 'node:child_process';
import { chmodSync, chownSync, mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { createServer, type Server } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { freePort } from '../../scripts/lib/free-port.js';
import { serverUrl } from '../support/database.js';
import { entryArguments } from '../support/entry.js';

interface Run {
  code: number | null;
  stdout: string;
  stderr: string;
}

// Serial, with a generous kill timer: seven Node processes at once on a loaded two-core machine took over a minute.
const NOBODY = 65534;
const isRoot = process.getuid?.() === 0;
const scratch = mkdtempSync(join(tmpdir(), 'erp-start-problems-'));
chmodSync(scratch, 0o755);
test.after.always(() => rmSync(scratch, { recursive: true, force: true }));

function start(env: Record<string, string>): Promise<Run> {
  return new Promise((resolve, reject) => {
    const child = spawn(process.execPath, entryArguments('server/main.ts'), {
      // npm start's compiled bundle under npm test
      env: { ...process.env, DATABASE_URL: '', LOG_LEVEL: 'warn', SANDBOX_BOOTSTRAP: 'false', ...env },
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    let stdout = '';
    let stderr = '';
    child.stdout.on('data', (c: Buffer) => {
      stdout += c;
    });
    child.stderr.on('data', (c: Buffer) => {
      stderr += c;
    });
    const timer = setTimeout(() => child.kill('SIGKILL'), 100_000); // a start that did not fail would listen forever
    child.on('error', reject);
    child.on('close', (code) => {
      clearTimeout(timer);
      resolve({ code, stdout, stderr });
    });
  });
}

/** Exit 1, nothing on stdout, exactly one line on stderr that matches every pattern, and no stack frame. */
function assertOneLine(t: import('ava').ExecutionContext, run: Run, ...patterns: RegExp[]): void {
  t.is(run.code, 1, run.stdout + run.stderr);
  t.is(run.stdout, '');
  t.regex(run.stderr, /^[^\n]+\n$/, 'one line');
  t.notRegex(run.stderr, /\bat .+:\d+:\d+/, 'no stack trace');
  for (const pattern of patterns) t.regex(run.stderr, pattern);
}

function listen(port: number, host = '127.0.0.1'): Promise<Server> {
  return new Promise((resolve) => {
    const server = createServer().listen(port, host, () => resolve(server));
  });
}

test.serial(
  'a port in use: says which port is taken and to stop that program or set PORT (before the database is touched)',
  async (t) => {
    const port = await freePort();
    const taken = await listen(port);
    try {
      const run = await start({
        PORT: String(port),
        DATABASE_URL: `postgresql://nobody@127.0.0.1:${await freePort()}/erp`,
      });
      assertOneLine(
        t,
        run,
        new RegExp(`^Port ${port} on 127\\.0\\.0\\.1 is already in use`),
        /set PORT to a free port \(PORT=0 picks one\)/,
      );
    } finally {
      taken.close();
    }
  },
);

test.serial(
  'a DATABASE_URL where nothing listens: names the address, hides the password, says to start that server or correct DATABASE_URL',
  async (t) => {
    const dead = await freePort();
    const run = await start({ PORT: '0', DATABASE_URL: `postgresql://erp:s3cret@127.0.0.1:${dead}/erp` });
    assertOneLine(
      t,
      run,
      new RegExp(
        `^Cannot connect to DATABASE_URL \\(postgresql://erp:\\*\\*\\*@127\\.0\\.0\\.1:${dead}/erp\\): nothing accepts connections at 127\\.0\\.0\\.1:${dead}\\.`,
      ),
      /Start that PostgreSQL server or correct DATABASE_URL, or unset it to use the embedded PostgreSQL under DATA_DIR\.$/m,
    );
    t.false(run.stderr.includes('s3cret'));
  },
);

test.serial('a DATABASE_URL naming a database that does not exist, or with a wrong password: says which', async (t) => {
  const missing = await start({ PORT: '0', DATABASE_URL: serverUrl('erp_no_such_database') });
  assertOneLine(
    t,
    missing,
    /^Cannot connect to DATABASE_URL \(.*\): the database "erp_no_such_database" does not exist \(create it: createdb erp_no_such_database\)\./,
  );
  // A role of its own: the test cluster lets its superuser in without a password (server/platform/database/
  // embedded-postgres.ts, ephemeral), every other role gives one.
  const role = `erp_password_check_${process.pid}`;
  const admin = new pg.Client({ connectionString: serverUrl('postgres') });
  await admin.connect();
  try {
    await admin.query(`CREATE ROLE ${role} LOGIN PASSWORD 'the-password'`);
    const wrong = Object.assign(new URL(serverUrl('postgres')), { username: role, password: 'not-the-password' });
    const refused = await start({ PORT: '0', DATABASE_URL: wrong.toString() });
    assertOneLine(t, refused, /^Cannot connect to DATABASE_URL \(.*:\*\*\*@.*\): the password of \w+ was refused\./);
    t.false(refused.stderr.includes('not-the-password'));
  } finally {
    await admin.query(`DROP ROLE IF EXISTS ${role}`);
    await admin.end();
  }
});

test.serial(
  'a DATABASE_DIRECT_URL where nothing listens (beside a DATABASE_URL that answers): names it and its address, hides the password',
  async (t) => {
    const dead = await freePort();
    const run = await start({
      PORT: '0',
      DATABASE_URL: serverUrl('postgres'),
      DATABASE_DIRECT_URL: `postgresql://erp:s3cret@127.0.0.1:${dead}/erp`,
    });
    assertOneLine(
      t,
      run,
      new RegExp(
        `^Cannot connect to DATABASE_DIRECT_URL \\(postgresql://erp:\\*\\*\\*@127\\.0\\.0\\.1:${dead}/erp\\): nothing accepts connections at 127\\.0\\.0\\.1:${dead}\\. Start that PostgreSQL server or correct DATABASE_DIRECT_URL\\.$`,
        'm',
      ),
    );
    t.false(run.stderr.includes('s3cret'));
  },
);

test.serial('a DATA_DIR below a file: names the file and says to move it or choose another DATA_DIR', async (t) => {
  const file = join(scratch, 'a-file');
  writeFileSync(file, 'not a directory');
  const run = await start({
    PORT: '0',
    DATA_DIR: join(file, 'data'),
    EMBEDDED_POSTGRES_PORT: String(await freePort()),
  });
  assertOneLine(
    t,
    run,
    new RegExp(
      `^DATA_DIR=${file}/data cannot be used: ${file} is a file, not a directory\\. Move that file away, or set DATA_DIR to a directory of your own`,
    ),
  );
});

(isRoot ? test.serial : test.skip)(
  'a DATA_DIR inside a directory of another user that the postgres user cannot enter (as root): names the directory, its owner and mode, and what to do',
  async (t) => {
    const closed = join(scratch, 'closed');
    mkdirSync(closed, { mode: 0o700 });
    chownSync(closed, NOBODY, NOBODY);
    const run = await start({
      PORT: '0',
      DATA_DIR: join(closed, 'data'),
      EMBEDDED_POSTGRES_PORT: String(await freePort()),
    });
    assertOneLine(
      t,
      run,
      new RegExp(
        `^DATA_DIR=${closed}/data cannot be used: the embedded PostgreSQL runs as the user postgres \\(the service runs as root\\), which cannot enter ${closed} \\(owner nobody \\(uid ${NOBODY}\\), mode 700\\)\\.`,
      ),
      new RegExp(`Let it through \\(chmod o\\+x ${closed}\\), or set DATA_DIR to a directory of your own`),
    );
  },
);

(isRoot ? test.serial : test.skip)(
  'a DATA_DIR whose database belongs to another user: names the owner, the user PostgreSQL runs as, and the chown that fixes it',
  async (t) => {
    const dataDir = join(scratch, 'foreign');
    mkdirSync(join(dataDir, 'postgres'), { recursive: true, mode: 0o700 });
    writeFileSync(join(dataDir, 'postgres', 'PG_VERSION'), '18\n');
    chownSync(join(dataDir, 'postgres'), NOBODY, NOBODY);
    const run = await start({ PORT: '0', DATA_DIR: dataDir, EMBEDDED_POSTGRES_PORT: String(await freePort()) });
    assertOneLine(
      t,
      run,
      new RegExp(
        `^DATA_DIR=${dataDir} cannot be used: its database ${dataDir}/postgres belongs to nobody \\(uid ${NOBODY}\\), but the embedded PostgreSQL runs as postgres \\(the service runs as root\\)\\.`,
      ),
      new RegExp(`give the directory over \\(chown -R postgres:postgres ${dataDir}/postgres\\)`),
    );
  },
);

test.serial(
  'an EMBEDDED_POSTGRES_PORT taken by another program: says so and to set EMBEDDED_POSTGRES_PORT',
  async (t) => {
    const pgPort = await freePort();
    const taken = await listen(pgPort);
    try {
      const run = await start({ PORT: '0', DATA_DIR: join(scratch, 'fresh'), EMBEDDED_POSTGRES_PORT: String(pgPort) });
      assertOneLine(
        t,
        run,
        new RegExp(
          `^EMBEDDED_POSTGRES_PORT=${pgPort} is already in use by another program .*: stop it, or set EMBEDDED_POSTGRES_PORT to a free port\\.$`,
          'm',
        ),
      );
    } finally {
      taken.close();
    }
  },
);
