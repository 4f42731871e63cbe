// Start-up problems that a developer can fix: the HTTP port is taken, DATABASE_URL does not answer, the data
// directory cannot be used by the embedded PostgreSQL. Each is found before anything starts and becomes one line
// saying what is wrong and what to do (StartProblem); `npm start` and the operator CLI print it and exit 1. A stack
// trace from deep inside the start told a newcomer neither. What slips past the checks (a port taken a moment
// later) is translated the same way by explainStartFailure.
import { execFileSync, spawnSync } from 'node:child_process';
import { accessSync, constants, existsSync, readFileSync, statSync } from 'node:fs';
import { createServer } from 'node:net';
import { dirname, join, resolve } from 'node:path';
import { tryConnect } from './database/database.js';
import type { Config, Role } from './config.js';

export class StartProblem extends Error {
  override name = 'StartProblem';
}

/**
 * The split roles share one PostgreSQL that none of them owns, so they need DATABASE_URL: the embedded PostgreSQL
 * belongs to the process that started it and stops with it (under the others), and two processes starting it at once
 * on a fresh DATA_DIR collide. `npm start` (role all) keeps the embedded one.
 */
export const SPLIT_ROLES_NEED_DATABASE_URL = (role: Role) =>
  `--role ${role} needs DATABASE_URL: the split roles (npm run api, npm run worker) share one PostgreSQL server that none of them starts or stops; set DATABASE_URL to it, or run npm start (API and workers in one process, with the embedded PostgreSQL).`;

/**
 * The split roles may run on several machines that share no DATA_DIR, so they take the installation's secrets from the
 * environment only: secrets generated in each one's DATA_DIR would differ, and a cursor or photo URL of one API process
 * would fail on another, or a worker could not open what the CLI sealed (installation-secrets.ts).
 */
export const SPLIT_ROLES_NEED_SECRETS = (role: Role, missing: string[]) =>
  `--role ${role} needs ${missing.join(' and ')}: the split roles may run on several machines, and every process must sign cursors and seal secrets alike; set ${missing.length > 1 ? 'them' : 'it'} to the same value${missing.length > 1 ? 's' : ''} for every process (npm start, in one process, generates them in DATA_DIR/secrets.json).`;

/** Everything the start of `role` needs, checked in the order it is used; the first problem is thrown. */
export async function checkStart(config: Config, role: Role): Promise<void> {
  if (role !== 'all' && config.databaseUrl === null) throw new StartProblem(SPLIT_ROLES_NEED_DATABASE_URL(role));
  const missingSecrets = [
    config.cursorSecret === null ? 'CURSOR_SECRET' : null,
    config.webhookSecretKey === null ? 'WEBHOOK_SECRET_KEY' : null,
  ].filter((name) => name !== null);
  if (role !== 'all' && missingSecrets.length > 0)
    throw new StartProblem(SPLIT_ROLES_NEED_SECRETS(role, missingSecrets));
  if (role === 'all' || role === 'api') await checkListenPort(config.host, config.port);
  await checkDatabase(config);
}

/** The database part alone (the operator CLI needs no port). */
export async function checkDatabase(config: Config): Promise<void> {
  if (config.databaseUrl !== null) return checkDatabaseUrl(config);
  checkDataDir(config.dataDir);
  await checkEmbeddedPort(config);
}

/** Binds the port for a moment; the real listen follows within seconds. */
export async function checkListenPort(host: string, port: number): Promise<void> {
  if (port === 0) return;
  await new Promise<void>((done, fail) => {
    const server = createServer();
    server.once('error', (error) => fail(listenProblem(error, host, port)));
    server.listen({ port, host, exclusive: true }, () => server.close(() => done()));
  });
}

/** The problem a failed listen means, or the error itself when it is none of the known ones. */
export function listenProblem(error: unknown, host: string, port: number): Error {
  switch ((error as NodeJS.ErrnoException).code) {
    case 'EADDRINUSE':
      return new StartProblem(
        `Port ${port} on ${host} is already in use (another npm start, or another program): stop that program, or set PORT to a free port (PORT=0 picks one).`,
      );
    case 'EACCES':
      return new StartProblem(
        `Not allowed to listen on port ${port} on ${host} (ports below 1024 need root): set PORT to 1024 or above, for example PORT=3000.`,
      );
    case 'EADDRNOTAVAIL':
      return new StartProblem(
        `HOST=${host} is not an address of this machine: set HOST to 127.0.0.1 (this machine only) or 0.0.0.0 (every interface).`,
      );
    case 'ENOTFOUND':
    case 'EAI_AGAIN':
      return new StartProblem(
        `HOST=${host} does not resolve: set HOST to 127.0.0.1 (this machine only) or 0.0.0.0 (every interface).`,
      );
    default:
      return error instanceof Error ? error : new Error(String(error));
  }
}

const DATABASE_TIMEOUT_MS = 5_000;

async function checkDatabaseUrl(config: Config): Promise<void> {
  try {
    await tryConnect(config.databaseUrl!, DATABASE_TIMEOUT_MS);
  } catch (error) {
    // Connecting is all this does, so whatever fails here is DATABASE_URL's problem, known or not.
    throw databaseProblem(error, config, true)!;
  }
  // The direct connection beside a pooler (the LISTENs, decision 0043): unchecked, a wrong one would only show as a
  // warning while the key cache reads every key from the database and the loops wait for their safety-net poll.
  if (config.databaseDirectUrl === null) return;
  try {
    await tryConnect(config.databaseDirectUrl, DATABASE_TIMEOUT_MS);
  } catch (error) {
    throw databaseProblem(error, config, true, 'DATABASE_DIRECT_URL')!;
  }
}

/** DATABASE_URL without its password, for messages. */
export function redactedUrl(raw: string): string {
  try {
    const url = new URL(raw);
    if (url.password) url.password = '***';
    return url.toString();
  } catch {
    return 'DATABASE_URL';
  }
}

/**
 * The one-line problem a failed connection to DATABASE_URL (or DATABASE_DIRECT_URL) means, or null when the error is not a known connection
 * failure (unless `anyError`: then its own first line is the reason).
 */
export function databaseProblem(
  error: unknown,
  config: Config,
  anyError = false,
  variable: 'DATABASE_URL' | 'DATABASE_DIRECT_URL' = 'DATABASE_URL',
): StartProblem | null {
  const raw = variable === 'DATABASE_URL' ? config.databaseUrl : config.databaseDirectUrl;
  if (raw === null) return null;
  // A name with two addresses (localhost: ::1 and 127.0.0.1) fails with one error per address.
  const first = error instanceof AggregateError && error.errors.length > 0 ? error.errors[0] : error;
  const { code, message = '' } = (first ?? {}) as { code?: string; message?: string };
  const url = new URL(raw);
  const where = `${url.hostname}:${url.port || 5432}`;
  const database = decodeURIComponent(url.pathname.slice(1)) || url.username;
  const reasons: Record<string, string> = {
    ECONNREFUSED: `nothing accepts connections at ${where}`,
    ENOTFOUND: `the host ${url.hostname} does not resolve`,
    EAI_AGAIN: `the host ${url.hostname} does not resolve`,
    ETIMEDOUT: `${where} did not answer`,
    EHOSTUNREACH: `${where} cannot be reached`,
    ENETUNREACH: `${where} cannot be reached`,
    '28P01': `the password of ${url.username || 'the user'} was refused`,
    '28000': `the server refuses ${url.username || 'that user'} (no such role, or no pg_hba.conf entry for this client)`,
    '3D000': `the database "${database}" does not exist (create it: createdb ${database})`,
    '57P03': 'the server is starting up or shutting down',
  };
  let reason = code ? reasons[code] : undefined;
  if (!reason && /timeout/i.test(message)) reason = `${where} did not answer within ${DATABASE_TIMEOUT_MS / 1000} s`;
  if (!reason && /terminated unexpectedly/i.test(message))
    reason = `${where} closed the connection before PostgreSQL answered (not a PostgreSQL server, or a firewall in between)`;
  if (!reason && anyError) reason = message.split('\n')[0] || String(first);
  if (!reason) return null;
  const embedded =
    config.environment === 'production' || variable !== 'DATABASE_URL'
      ? ''
      : ', or unset it to use the embedded PostgreSQL under DATA_DIR';
  return new StartProblem(
    `Cannot connect to ${variable} (${redactedUrl(raw)}): ${reason}. Start that PostgreSQL server or correct ${variable}${embedded}.`,
  );
}

/** The account the embedded PostgreSQL runs as: ourselves, or the `postgres` user when we are root (Postgres refuses root). */
function postgresRunner(): { uid: number; gid: number; name: string } | null {
  const uid = process.getuid?.();
  if (uid === undefined) return null;
  if (uid !== 0) return { uid, gid: process.getgid!(), name: userName(uid) };
  try {
    const id = (flag: string) =>
      Number(execFileSync('id', [flag, 'postgres'], { encoding: 'utf8', stdio: ['ignore', 'pipe', 'ignore'] }).trim());
    return { uid: id('-u'), gid: id('-g'), name: 'postgres' };
  } catch {
    return null; // created at the first start, owning only what it creates then
  }
}

function userName(uid: number): string {
  try {
    return `${execFileSync('id', ['-nu', String(uid)], { encoding: 'utf8', stdio: ['ignore', 'pipe', 'ignore'] }).trim()} (uid ${uid})`;
  } catch {
    return `uid ${uid}`;
  }
}

function describe(path: string): string {
  const stat = statSync(path);
  return `owner ${userName(stat.uid)}, mode ${(stat.mode & 0o777).toString(8)}`;
}

/**
 * DATA_DIR must be a directory (or creatable) that we can write (the log and the sandbox key go there), and its
 * `postgres/` cluster must belong to the account the embedded PostgreSQL runs as, which must be able to reach it.
 */
export function checkDataDir(dataDir: string): void {
  const dir = resolve(dataDir);
  const cluster = join(dir, 'postgres');
  const label = `DATA_DIR=${dataDir}`;
  const elsewhere = 'or set DATA_DIR to a directory of your own (the default is .data in the working directory)';
  let nearest = cluster;
  while (!existsSync(nearest)) nearest = dirname(nearest);
  if (!statSync(nearest).isDirectory()) {
    throw new StartProblem(
      `${label} cannot be used: ${nearest} is a file, not a directory. Move that file away, ${elsewhere}.`,
    );
  }
  const runner = postgresRunner();
  const root = process.getuid?.() === 0;
  if (!root) {
    const writable = existsSync(dir) ? dir : nearest;
    try {
      accessSync(writable, constants.W_OK | constants.X_OK);
    } catch {
      throw new StartProblem(
        `${label} cannot be used: ${writable} is not writable by ${runner?.name ?? 'you'} (${describe(writable)}). Start as its owner, make it yours (chown -R), ${elsewhere}.`,
      );
    }
  }
  if (runner && existsSync(cluster) && statSync(cluster).uid !== runner.uid) {
    const fix = root ? `chown -R postgres:postgres ${cluster}` : `chown -R ${process.getuid!()} ${cluster}`;
    throw new StartProblem(
      `${label} cannot be used: its database ${cluster} belongs to ${userName(statSync(cluster).uid)}, but the embedded PostgreSQL runs as ${runner.name}${root ? ' (the service runs as root)' : ''}. Start as that user, give the directory over (${fix}), ${elsewhere}.`,
    );
  }
  if (root && runner) {
    // Every existing directory above the cluster must let the postgres user through; checked as that user, so
    // the answer is the one Postgres itself will get.
    const ancestors: string[] = [];
    for (let path = nearest; ; path = dirname(path)) {
      ancestors.unshift(path);
      if (path === dirname(path)) break;
    }
    const blocked = spawnSync(
      '/bin/sh',
      ['-c', 'for d do [ -x "$d" ] || { printf %s "$d"; exit 1; }; done', 'sh', ...ancestors],
      {
        uid: runner.uid,
        gid: runner.gid,
        encoding: 'utf8',
      },
    );
    if (blocked.status === 1 && blocked.stdout) {
      throw new StartProblem(
        `${label} cannot be used: the embedded PostgreSQL runs as the user postgres (the service runs as root), which cannot enter ${blocked.stdout} (${describe(blocked.stdout)}). Let it through (chmod o+x ${blocked.stdout}), ${elsewhere}.`,
      );
    }
  }
}

/** The embedded server's port must be free unless our own server for this DATA_DIR runs on it (then it is reused). */
async function checkEmbeddedPort(config: Config): Promise<void> {
  const pidFile = join(resolve(config.dataDir), 'postgres', 'postmaster.pid');
  try {
    const pid = Number(readFileSync(pidFile, 'utf8').split('\n')[0]);
    process.kill(pid, 0);
    return; // ours, running (or stopping: embedded-postgres.ts waits for it)
  } catch {
    // no server of ours on this data directory
  }
  try {
    await checkListenPort('127.0.0.1', config.embeddedPostgresPort);
  } catch (error) {
    if (!(error instanceof StartProblem)) throw error;
    throw new StartProblem(
      `EMBEDDED_POSTGRES_PORT=${config.embeddedPostgresPort} is already in use by another program (perhaps the embedded PostgreSQL of another checkout, with its own DATA_DIR): stop it, or set EMBEDDED_POSTGRES_PORT to a free port.`,
    );
  }
}

/** One line for an error thrown by the start itself, after the checks passed; null when it is not a known problem. */
export function explainStartFailure(error: unknown, config: Config): string | null {
  if (error instanceof StartProblem) return error.message;
  if ((error as NodeJS.ErrnoException).syscall === 'listen') {
    const problem = listenProblem(error, config.host, config.port);
    if (problem instanceof StartProblem) return problem.message;
  }
  return databaseProblem(error, config)?.message ?? null;
}
