// Configuration comes from environment variables, checked once at start, and from an optional `.env` file in the
// working directory that the server and the operator CLI both read (readEnvFile), so one file sets both. Every bad
// value is reported with the variable's name and what it accepts, all of them at once, before anything starts.
import { existsSync } from 'node:fs';
import type { RateLimit } from './access/rate-limit.js';

export type Environment = 'sandbox' | 'production';
export type Role = 'all' | 'api' | 'worker';
export const LOG_LEVELS = ['fatal', 'error', 'warn', 'info', 'debug', 'trace', 'silent'] as const;
export type LogLevel = (typeof LOG_LEVELS)[number];

export interface Config {
  environment: Environment;
  host: string;
  port: number;
  /** Null: run the embedded PostgreSQL under dataDir. */
  databaseUrl: string | null;
  /**
   * A connection to the same database that keeps its session (not through a transaction-mode pooler such as
   * PgBouncer): what LISTENs. Null: databaseUrl is such a connection itself. Setting it also says that databaseUrl
   * is a pooler, so nothing of a session is sent there (see database/database.ts).
   */
  databaseDirectUrl: string | null;
  dataDir: string;
  embeddedPostgresPort: number;
  logLevel: LogLevel;
  /** Check every response against the spec (a contract failure becomes a 500 and an error log). */
  validateResponses: boolean;
  /** How long a graceful stop waits for in-flight requests and jobs. */
  shutdownTimeoutMs: number;
  /** Express `trust proxy` setting: proxies whose X-Forwarded-For names the caller; false trusts none. */
  trustProxy: string | false;
  /**
   * Where clients reach the API (scheme, host, port, without /api/v1), the origin of the URLs the service gives out
   * (photo URLs): never the request's Host header, which the caller chooses. Null: the listen address (sandbox and
   * development only; production requires it).
   */
  publicBaseUrl: string | null;
  /**
   * Signs list cursors and (through a derived key) photo URLs; every process of one deployment must share it.
   * Null: not set, so the installation's own generated one is used (installation-secrets.ts; sandbox only).
   */
  cursorSecret: string | null;
  /** Create the demo organisation, its key and synthetic data on the first start of an empty sandbox. */
  sandboxBootstrap: boolean;
  /** Tests and local trials only: let webhooks go to loopback addresses over plain HTTP. Refused in production. */
  webhookAllowLoopback: boolean;
  /** Seconds to wait before each retry of a failed webhook delivery; after the last, the delivery fails. */
  webhookRetryScheduleSeconds: number[];
  /**
   * 32 bytes (hex or base64) sealing webhook signing secrets and connector credentials at rest; the same for every
   * process. Null: not set, so the installation's own generated one is used (installation-secrets.ts; sandbox only).
   */
  webhookSecretKey: Buffer | null;
  /** Run the QuickBooks Online and EFRIS simulators in this process (connections with base URL `simulator` reach them). */
  simulators: boolean;
  /** Their port (0: any free port; each process that runs them has its own, and they share their state in Postgres). */
  simulatorsPort: number;
  /** How long a call to an accounting or fiscal system may take before it counts as a temporary failure. */
  connectorTimeoutMs: number;
  /**
   * How long a request may take to arrive whole, headers and body: a client that stops sending (an upload that
   * never finishes) is cut then, with 408, instead of holding a connection for Node's default 300 s.
   */
  requestTimeoutMs: number;
  /** Tests only: how many days the business clock runs ahead (negative: behind) of the real one (platform/clock.ts). */
  testClockOffsetDays: number;
  /** The budget per client address of the operations without a key and of failed authentications (see address-budget.ts). */
  anonymousRateLimit: RateLimit;
  /**
   * The safety net of a worker's loops and job workers, which are woken by NOTIFY when work is due: each idle one
   * looks for work at least this often anyway (a notification lost while its listener reconnected). See jobs/wake.ts.
   */
  workPollSeconds: number;
}

/**
 * The budget per client address of the requests no key pays for (server/platform/access/address-budget.ts): 300 a
 * minute with a burst of 300. A browser opening /docs makes 3 requests, a load balancer probing /health each second 60
 * a minute, a test file of the suite at most a few dozen; a client fetching /openapi.json in a loop or guessing keys
 * is held to 5 a second.
 */
export const DEFAULT_ANONYMOUS_RATE_LIMIT: RateLimit = { perMinute: 300, burst: 300 };
/** The secrets every process of an installation shares: from the environment, or generated once per installation. */
export interface InstallationSecrets {
  cursorSecret: string;
  webhookSecretKey: Buffer;
}

/** The configuration a running process works with: its secrets known (see installation-secrets.ts). */
export type ServiceConfig = Config & InstallationSecrets;

export const DEFAULT_WEBHOOK_RETRY_SCHEDULE = [60, 300, 1800, 7200, 21600, 43200, 86400];

export class ConfigError extends Error {
  constructor(readonly problems: string[]) {
    super(`Invalid configuration:\n${problems.map((p) => `  - ${p}`).join('\n')}`);
  }
}

type Env = Record<string, string | undefined>;

/**
 * Loads `.env` (KEY=value lines) from the working directory into process.env when the file exists. A variable
 * already in the environment wins over the file, even when empty, so a command line can always override it.
 * Returns the file read, or null.
 */
export function readEnvFile(path = '.env'): string | null {
  if (!existsSync(path)) return null;
  try {
    process.loadEnvFile(path);
  } catch (error) {
    throw new ConfigError([`${path} could not be read (${(error as Error).message}); it holds KEY=value lines`]);
  }
  return path;
}

export function loadConfig(env: Env = process.env): Config {
  const problems: string[] = [];
  const read = <T>(name: string, fallback: T, parse: (raw: string) => T | undefined, accepts: string): T => {
    const raw = env[name];
    if (raw === undefined || raw === '') return fallback;
    const value = parse(raw.trim());
    if (value === undefined) problems.push(`${name}=${JSON.stringify(raw)} is invalid; expected ${accepts}`);
    return value ?? fallback;
  };
  const oneOf =
    <T extends string>(values: readonly T[]) =>
    (raw: string) =>
      values.find((v) => v === raw);
  const integer = (min: number, max: number) => (raw: string) => {
    const n = Number(raw);
    return /^\d+$/.test(raw) && n >= min && n <= max ? n : undefined;
  };
  const boolean = (raw: string) => (({ true: true, false: false }) as Record<string, boolean>)[raw];
  const postgresUrl = (raw: string) => {
    try {
      return ['postgres:', 'postgresql:'].includes(new URL(raw).protocol) ? raw : undefined;
    } catch {
      return undefined;
    }
  };

  const environment = read(
    'ENVIRONMENT',
    'sandbox' as Environment,
    oneOf(['sandbox', 'production'] as const),
    'sandbox or production',
  );
  const config: Config = {
    environment,
    host: read('HOST', '127.0.0.1', (raw) => raw, 'an interface address'),
    port: read('PORT', 3000, integer(0, 65535), 'a port number from 0 to 65535'),
    databaseUrl: read('DATABASE_URL', null as string | null, postgresUrl, 'a postgres:// or postgresql:// URL'),
    databaseDirectUrl: read(
      'DATABASE_DIRECT_URL',
      null as string | null,
      postgresUrl,
      'a postgres:// or postgresql:// URL',
    ),
    dataDir: read('DATA_DIR', '.data', (raw) => raw, 'a directory'),
    embeddedPostgresPort: read(
      'EMBEDDED_POSTGRES_PORT',
      54329,
      integer(1024, 65535),
      'a port number from 1024 to 65535',
    ),
    logLevel: read('LOG_LEVEL', 'info' as LogLevel, oneOf(LOG_LEVELS), LOG_LEVELS.join(', ')),
    validateResponses: read('VALIDATE_RESPONSES', env.NODE_ENV !== 'production', boolean, 'true or false'),
    shutdownTimeoutMs: read('SHUTDOWN_TIMEOUT_MS', 30_000, integer(0, 600_000), 'milliseconds from 0 to 600000'),
    publicBaseUrl: read(
      'PUBLIC_BASE_URL',
      null as string | null,
      (raw) => {
        try {
          const url = new URL(raw);
          const plain =
            ['http:', 'https:'].includes(url.protocol) && !url.username && !url.password && !url.search && !url.hash;
          return plain ? `${url.origin}${url.pathname.replace(/\/+$/, '')}` : undefined;
        } catch {
          return undefined;
        }
      },
      'an http(s) URL without credentials, query or fragment, such as https://erp.example.com',
    ),
    trustProxy: read(
      'TRUST_PROXY',
      false as string | false,
      (raw) => raw,
      'loopback, a number of hops, or comma-separated addresses/CIDRs',
    ),
    // No default: a constant default is public, and anyone could sign cursors and photo URLs for any sandbox.
    cursorSecret: read(
      'CURSOR_SECRET',
      null as string | null,
      (raw) => (raw.length >= 16 ? raw : undefined),
      'at least 16 characters',
    ),
    sandboxBootstrap: read('SANDBOX_BOOTSTRAP', environment === 'sandbox', boolean, 'true or false'),
    webhookAllowLoopback: read('WEBHOOK_ALLOW_LOOPBACK', false, boolean, 'true or false'),
    webhookRetryScheduleSeconds: read(
      'WEBHOOK_RETRY_SCHEDULE',
      DEFAULT_WEBHOOK_RETRY_SCHEDULE,
      (raw) => {
        const seconds = raw.split(',').map((part) => Number(part.trim()));
        return seconds.length > 0 && seconds.every((n) => Number.isInteger(n) && n >= 0 && n <= 604_800)
          ? seconds
          : undefined;
      },
      'comma-separated whole seconds, each 0 to 604800',
    ),
    webhookSecretKey: read(
      'WEBHOOK_SECRET_KEY',
      null as Buffer | null,
      (raw) => {
        const key = /^[0-9a-f]{64}$/i.test(raw) ? Buffer.from(raw, 'hex') : Buffer.from(raw, 'base64');
        return key.length === 32 ? key : undefined;
      },
      '32 bytes as 64 hex digits or base64',
    ),
    simulators: read('SIMULATORS', environment === 'sandbox', boolean, 'true or false'),
    simulatorsPort: read('SIMULATORS_PORT', 0, integer(0, 65_535), 'a port from 0 to 65535 (0: any free port)'),
    connectorTimeoutMs: read('CONNECTOR_TIMEOUT_MS', 30_000, integer(100, 120_000), 'milliseconds from 100 to 120000'),
    requestTimeoutMs: read('REQUEST_TIMEOUT_MS', 60_000, integer(1_000, 600_000), 'milliseconds from 1000 to 600000'),
    testClockOffsetDays: read(
      'TEST_CLOCK_OFFSET_DAYS',
      0,
      (raw) => (/^-?\d{1,4}$/.test(raw) && Math.abs(Number(raw)) <= 3650 ? Number(raw) : undefined),
      'whole days from -3650 to 3650',
    ),
    // At least 1 a minute, so that Retry-After stays within the spec's 1 to 60 seconds (as for the keys' budgets).
    anonymousRateLimit: read(
      'ANONYMOUS_RATE_LIMIT',
      DEFAULT_ANONYMOUS_RATE_LIMIT,
      (raw) => {
        const match = /^(\d+)\s*,\s*(\d+)$/.exec(raw);
        const [perMinute, burst] = match ? [Number(match[1]), Number(match[2])] : [0, 0];
        return perMinute >= 1 && perMinute <= 1_000_000 && burst >= 1 && burst <= 1_000_000
          ? { perMinute, burst }
          : undefined;
      },
      'requests per minute and burst, comma-separated, each 1 to 1000000 (e.g. 300,300)',
    ),
    workPollSeconds: read('WORK_POLL_SECONDS', 30, integer(1, 600), 'whole seconds from 1 to 600'),
  };
  if (environment === 'production' && config.webhookAllowLoopback)
    problems.push('WEBHOOK_ALLOW_LOOPBACK cannot be true when ENVIRONMENT=production');
  if (environment === 'production' && !env.WEBHOOK_SECRET_KEY)
    problems.push('WEBHOOK_SECRET_KEY is required when ENVIRONMENT=production (32 bytes, the same for every process)');
  if (environment === 'production' && !env.CURSOR_SECRET) {
    problems.push(
      'CURSOR_SECRET is required when ENVIRONMENT=production (at least 16 characters, the same for every process)',
    );
  }
  if (environment === 'production' && config.testClockOffsetDays !== 0)
    problems.push(
      'TEST_CLOCK_OFFSET_DAYS cannot be set when ENVIRONMENT=production (it moves the business clock, for tests only)',
    );
  if (environment === 'production' && config.publicBaseUrl === null) {
    problems.push(
      'PUBLIC_BASE_URL is required when ENVIRONMENT=production (where clients reach the API, such as https://erp.example.com; photo URLs are built on it)',
    );
  }
  if (environment === 'production' && config.simulators)
    problems.push(
      'SIMULATORS cannot be true when ENVIRONMENT=production (connect the real systems with `admin connector set`)',
    );
  if (environment === 'production' && config.sandboxBootstrap)
    problems.push('SANDBOX_BOOTSTRAP cannot be true when ENVIRONMENT=production');
  if (environment === 'production' && config.databaseUrl === null) {
    problems.push(
      'DATABASE_URL is required when ENVIRONMENT=production (the embedded PostgreSQL is for development and the sandbox)',
    );
  }
  if (config.databaseDirectUrl !== null && config.databaseUrl === null) {
    problems.push(
      'DATABASE_DIRECT_URL needs DATABASE_URL (it is the direct connection beside a pooled DATABASE_URL; the embedded PostgreSQL needs neither)',
    );
  }
  if (problems.length > 0) throw new ConfigError(problems);
  return config;
}
