// Starts the real service (HTTP + jobs) on a free port against a fresh database, and gives tests a client
// whose every response is checked against the API description: a test fails on any contract violation.
import type { ExecutionContext } from 'ava';
import { Writable } from 'node:stream';
import pg from 'pg';
import { pino } from 'pino';
import type { ResponseContract } from '../../scripts/contract/response-contract.js';
import { loadConfig, type ServiceConfig } from '../../server/platform/config.js';
import { API_BASE_PATH } from '../../server/platform/spec.js';
import { startService, type RunningService, type ServiceOptions } from '../../server/composition/service.js';
import { kyselyOver } from '../../server/platform/database/database.js';
import { createTestDatabase, type TestDatabase } from './database.js';
import { assertLedgersAgree } from './domain.js';
import { TEST_SECRETS } from './secrets.js';
import { apiContract } from './api-contract.js';
import { organizationsMadeHere } from './callers.js';

export interface ApiResponse {
  status: number;
  headers: Headers;
  text: string;
  /** The parsed JSON body (undefined when the body is not JSON). */
  body: any;
}

export interface TestService {
  service: RunningService;
  database: TestDatabase;
  /** The configuration the service runs with (its secrets resolved). */
  config: ServiceConfig;
  baseUrl: string;
  /** Lines the service logged, parsed. */
  logs: Record<string, unknown>[];
  /** Sends a request to /api/v1 + path and checks the response against the description. */
  request(
    method: string,
    path: string,
    init?: { headers?: Record<string, string>; body?: string | Buffer; json?: unknown },
  ): Promise<ApiResponse>;
  stop(): Promise<void>;
}

const contract = apiContract;

export interface TestServiceOptions extends ServiceOptions {
  env?: Record<string, string>;
  /** Defaults to the contract of the bundled spec; a test that extends the document passes its own. */
  contract?: ResponseContract;
}

export async function startTestService(label: string, options: TestServiceOptions = {}): Promise<TestService> {
  const database = await createTestDatabase(label);
  // TEST_CLOCK_OFFSET_DAYS of the run (`TEST_CLOCK_OFFSET_DAYS=60 npm test`) reaches every service a test starts.
  // Production refuses the setting, so a production service of a test keeps the real clock.
  const clock =
    process.env.TEST_CLOCK_OFFSET_DAYS && options.env?.ENVIRONMENT !== 'production'
      ? { TEST_CLOCK_OFFSET_DAYS: process.env.TEST_CLOCK_OFFSET_DAYS }
      : {};
  const loaded = loadConfig({
    DATABASE_URL: database.url,
    PORT: '0',
    LOG_LEVEL: 'info',
    // As production runs: the client below judges every answer against the description, and the service checking it
    // again cost about a tenth of a service test file's CPU (decision 0055). test/http/validation.test.ts turns the
    // service's own check on and proves it.
    VALIDATE_RESPONSES: 'false',
    SHUTDOWN_TIMEOUT_MS: '10000',
    SANDBOX_BOOTSTRAP: 'false',
    ...TEST_SECRETS,
    ...clock,
    ...options.env,
  });
  const logs: Record<string, unknown>[] = [];
  const sink = new Writable({
    write(chunk: Buffer, _encoding, done) {
      for (const line of chunk.toString().split('\n')) if (line) logs.push(JSON.parse(line) as Record<string, unknown>);
      done();
    },
  });
  const logger = pino({ level: 'info' }, sink);
  const service = await startService(loaded, logger, options);
  const config = service.config;
  const baseUrl = service.url!;
  const check = options.contract ?? contract;

  return {
    service,
    database,
    config,
    baseUrl,
    logs,
    request: contractCheckedRequest(baseUrl, check),
    async stop() {
      try {
        // The ledger checker over every organisation the file made: a balance that disagrees with its ledger fails it.
        const db = kyselyOver(service.database.pool);
        await assertLedgersAgree(
          db,
          (await db.selectFrom('organizations').select('id').execute()).map((row) => row.id),
        );
      } finally {
        await service.stop();
        await database.drop();
      }
    },
  };
}

/** Sends a request to `baseUrl` + /api/v1 + path and fails on any response the description does not allow. */
function contractCheckedRequest(baseUrl: string, check: ResponseContract): TestService['request'] {
  return async (method, path, init = {}) => {
    const headers = { ...init.headers };
    let body = init.body;
    if (init.json !== undefined) {
      body = JSON.stringify(init.json);
      headers['content-type'] ??= 'application/json';
    }
    const response = await fetch(baseUrl + API_BASE_PATH + path, { method, headers, body }).catch(
      (error: Error & { cause?: { code?: string; message?: string } }) => {
        // undici says only "fetch failed"; the cause (ECONNRESET, ECONNREFUSED, a socket closed by the server) is what tells a flake from a crash.
        throw new Error(
          `${method} ${path}: ${error.message}: ${error.cause?.code ?? ''} ${error.cause?.message ?? ''}`.trim(),
          { cause: error },
        );
      },
    );
    const text = await response.text();
    const violations = check.check({
      method,
      path: path.split('?')[0]!,
      status: response.status,
      headers: response.headers,
      bodyText: text,
    });
    if (violations.length > 0)
      throw new Error(`Contract violation:\n  ${violations.join('\n  ')}\nBody: ${text.slice(0, 2000)}`);
    let parsed: unknown;
    try {
      parsed = JSON.parse(text);
    } catch {
      parsed = undefined;
    }
    return { status: response.status, headers: response.headers, text, body: parsed };
  };
}

/**
 * The run's shared service (scripts/test.ts starts it once, on its own database): for a test file that only sends
 * requests and reads the database, its organisations its own (createCaller), as tenancy keeps partners apart. The
 * file saves a database clone, a service start and the service's first compilations of each validator.
 */
export interface SharedTestService {
  baseUrl: string;
  /** The file's own pool to the shared service's database. */
  pool: pg.Pool;
  /** The installation secrets the shared service runs with (the test installation's, test/support/secrets.ts). */
  config: Pick<ServiceConfig, 'cursorSecret' | 'webhookSecretKey'>;
  request: TestService['request'];
}

/**
 * The run's one long-lived service, for a file that needs nothing of a service but its HTTP and its database: no
 * configuration of its own, no logs, no stop or restart. After the file, the ledger checker runs over every
 * organisation the file made with createCaller (others' organisations are theirs to check).
 */
export function useSharedService(test: {
  before: (fn: () => Promise<void>) => void;
  after: { always: (fn: () => Promise<void>) => void };
}): () => SharedTestService {
  let shared: SharedTestService | undefined;
  test.before(async () => {
    const baseUrl = process.env.TEST_SHARED_SERVICE_URL;
    const databaseUrl = process.env.TEST_SHARED_DATABASE_URL;
    if (!baseUrl || !databaseUrl)
      throw new Error(
        'TEST_SHARED_SERVICE_URL is not set: run the tests with `npm test`, which starts the shared service',
      );
    const secrets = {
      cursorSecret: TEST_SECRETS.CURSOR_SECRET,
      webhookSecretKey: Buffer.from(TEST_SECRETS.WEBHOOK_SECRET_KEY, 'hex'),
    };
    shared = {
      baseUrl,
      pool: new pg.Pool({ connectionString: databaseUrl, max: 5 }),
      config: secrets,
      request: contractCheckedRequest(baseUrl, contract),
    };
  });
  test.after.always(async () => {
    if (!shared) return;
    try {
      await assertLedgersAgree(kyselyOver(shared.pool), organizationsMadeHere());
    } finally {
      await shared.pool.end();
    }
  });
  return () => {
    if (!shared) throw new Error('the shared test service was not reached');
    return shared;
  };
}

/** Starts a service for the whole test file and stops it after the last test. */
export function useTestService(
  test: { before: (fn: () => Promise<void>) => void; after: { always: (fn: () => Promise<void>) => void } },
  label: string,
  options?: TestServiceOptions,
): () => TestService {
  let running: TestService | undefined;
  test.before(async () => {
    running = await startTestService(label, options);
  });
  test.after.always(async () => {
    await running?.stop();
  });
  return () => {
    if (!running) throw new Error('the test service did not start');
    return running;
  };
}

export type { ExecutionContext };
