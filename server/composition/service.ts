// Composes the service from its parts: database (with migrations), jobs, HTTP, and the modules (./modules.ts). Both `npm start` (role `all`)
// and the split roles (`api`, `worker`) come through here; so do the tests.
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import type { Router } from 'express';
import type { Logger } from 'pino';
import type { Config, Role, ServiceConfig } from '../platform/config.js';
import { withInstallationSecrets } from '../platform/installation-secrets.js';
import { openDatabase, type Database } from '../platform/database/database.js';
import { applyMigrations } from '../platform/database/migrations.js';
import { listenToChannel } from '../platform/database/notifications.js';
import type { KeyFacts } from '../platform/access/authenticate.js';
import { ACCESS_CHANGED_CHANNEL, KeyCache } from '../platform/access/key-cache.js';
import { RateBudget } from '../platform/access/rate-limit.js';
import { createApp } from '../platform/http/app.js';
import { startJobs, type JobDefinition, type Jobs } from '../platform/jobs/jobs.js';
import { bootstrapSandbox } from '../modules/sandbox/bootstrap.js';
import { ApiLogWriter } from '../platform/http/api-log.js';
import { setCursorSigningKey } from '../platform/lists/cursor.js';
import { apiDocument, type ApiDocument } from '../platform/spec.js';
import { deliveryEnqueuer, type WebhookDispatcher } from '../platform/webhooks/deliver.js';
import { startProcessHeartbeat, type ProcessHeartbeat } from '../platform/jobs/processes.js';
import {
  jobDefinitions,
  startPostings,
  startWebhookDelivery,
  sweepDeadProcesses,
  startWorkerWaking,
  sweepNeeded,
  webhookJob,
  type WorkerWaking,
} from './jobs.js';
import type { ModuleContext } from '../platform/modules/manifest.js';
import type { ConnectorSettings } from '../connectors/connections.js';
import type { PostingDispatcher } from '../modules/postings/dispatch.js';
import { startSimulatorServer, type SimulatorServer } from '../connectors/simulators/server.js';
import { MODULES, webhookEventTypes } from './modules.js';
import { withConsole } from '../console/app.js';
import { setClockOffsetDays } from '../platform/clock.js';

export interface RunningService {
  /** Base URL of the HTTP API (`http://host:port`), or null for the worker role. */
  url: string | null;
  /** The sandbox key made by this start's bootstrap (first start of an empty sandbox only). */
  sandboxKey: string | null;
  apiLog: ApiLogWriter;
  database: Database;
  jobs: Jobs;
  /** This process's row in service_processes (its heartbeat). */
  processId: string;
  /** How this process reaches the external systems (its simulators' URL when it runs them). */
  connectors: ConnectorSettings;
  /** The configuration it runs with, its secrets known (the variables, or the installation's generated ones). */
  config: ServiceConfig;
  /** Graceful stop: refuse new connections, finish in-flight requests and jobs, close the pool, stop the embedded Postgres. */
  stop(): Promise<void>;
}

export interface ServiceOptions {
  role?: Role;
  /** Replaces the service's own job definitions (tests use it to observe the job lifecycle). */
  jobs?: JobDefinition<never>[];
  /** The description requests are validated against; the bundled spec unless a test extends it. */
  document?: ApiDocument;
  /** Routers mounted after the service's own (tests mount fixture operations of an extended document). */
  extraRouters?: Router[];
  /**
   * False: the jobs that run on a schedule (the daily reconciliation, each minute) are not scheduled. A test that is
   * not about them keeps them out of its way: they would rewrite its data whenever a minute turns.
   */
  scheduledJobs?: boolean;
}

export async function startService(
  loaded: Config,
  logger: Logger,
  options: ServiceOptions = {},
): Promise<RunningService> {
  const role = options.role ?? 'all';
  const config = withInstallationSecrets(loaded);
  setCursorSigningKey(config.cursorSecret);
  setClockOffsetDays(config.testClockOffsetDays);
  const database = await openDatabase(config, logger);
  const apiLog = new ApiLogWriter(database.relaxed, logger);
  let jobs: Jobs | null = null;
  let webhooks: WebhookDispatcher | null = null;
  let server: Server | null = null;
  let sandboxKey: string | null = null;
  let access: AccessMemory | null = null;
  let heartbeat: ProcessHeartbeat | null = null;
  let postings: PostingDispatcher | null = null;
  let waking: WorkerWaking | null = null;
  let simulators: SimulatorServer | null = null;
  let connectorSettings: ConnectorSettings = { secretKey: config.webhookSecretKey, simulatorUrl: null };
  // The configured public address, or this process's listen address once it listens (never a request's Host header).
  let publicBaseUrl: string | null = config.publicBaseUrl;
  const publicBaseUrlOf = () => {
    if (publicBaseUrl === null) throw new Error('the public base URL is read before the HTTP server listens');
    return publicBaseUrl;
  };
  try {
    const applied = await applyMigrations(database.pool);
    if (applied.length > 0) logger.info({ applied }, 'migrations applied');
    // The simulators of the external systems (sandbox): before anything can post to them.
    if (config.simulators) simulators = await startSimulatorServer(database.db, { port: config.simulatorsPort });
    connectorSettings = {
      secretKey: config.webhookSecretKey,
      simulatorUrl: simulators?.url ?? null,
      timeoutMs: config.connectorTimeoutMs,
      allowLoopback: config.webhookAllowLoopback,
    };
    const context: ModuleContext = {
      db: database.db,
      logger,
      config,
      processId: '',
      connectors: connectorSettings,
      publicBaseUrl: publicBaseUrlOf,
    };
    if (config.sandboxBootstrap && role !== 'worker') {
      sandboxKey = (await bootstrapSandbox(database.db, config.dataDir, logger))?.secret ?? null;
    }

    // Registered before the job workers start: the slots they take are leased by this row's heartbeat. A worker's
    // heartbeat also takes back what dead processes held (once its own job system is up).
    // On the bookkeeping pool: a beat never waits behind the requests or jobs that hold the main pool's connections
    // (a late beat would make a live worker look dead), and a beat lost in a database crash costs nothing.
    heartbeat = await startProcessHeartbeat({
      db: database.relaxed,
      logger,
      role,
      sweepWhen: role === 'api' ? undefined : sweepNeeded,
      afterBeat:
        role === 'api'
          ? undefined
          : async () => {
              if (!jobs) return;
              const taken = await sweepDeadProcesses(database.db, jobs);
              if (taken > 0)
                logger.warn({ attempts: taken }, 'took back the webhook attempts of a dead worker; they are retried');
            },
    });
    jobs = await startJobs({
      databaseUrl: database.url,
      listenUrl: database.directUrl,
      runWorkers: role !== 'api',
      definitions: [
        ...(options.jobs ?? jobDefinitions({ ...context, processId: heartbeat.id })),
        webhookJob(database.db, logger, config, heartbeat.id),
      ].filter((definition) => options.scheduledJobs !== false || !definition.cron),
      logger,
      pollingIntervalSeconds: config.workPollSeconds,
    });
    if (role !== 'api') {
      // The loops sleep until a NOTIFY says work is due (or their next work falls due, or the safety net).
      waking = startWorkerWaking(database, logger, config.workPollSeconds);
      webhooks = startWebhookDelivery(database.db, logger, jobs, waking);
      postings = startPostings(database.db, logger, jobs, waking);
    }

    if (role !== 'worker') {
      apiLog.start();
      access = startAccessMemory(database, logger);
      const app = createApp({
        logger,
        validateResponses: config.validateResponses,
        document: options.document ?? apiDocument,
        relaxed: database.relaxed,
        keys: access.keys,
        budget: access.budget,
        anonymousRateLimit: config.anonymousRateLimit,
        environment: config.environment,
        apiLog,
        trustProxy: config.trustProxy,
        routers: [
          ...MODULES.flatMap((module) => module.routes?.({ ...context, processId: heartbeat!.id }) ?? []),
          ...(options.extraRouters ?? []),
        ],
      });
      server = createServer(
        {
          // A request must arrive whole within the timeout (README, Configuration); the check runs often enough that
          // the cut comes close to it, not up to Node's default 30 s later.
          requestTimeout: config.requestTimeoutMs,
          headersTimeout: Math.min(60_000, config.requestTimeoutMs),
          connectionsCheckingInterval: Math.min(1_000, config.requestTimeoutMs / 2),
        },
        withConsole(app, {
          db: database.db,
          apiLog,
          logger,
          environment: config.environment,
          trustProxy: config.trustProxy,
          connectors: connectorSettings,
          // As `admin webhook` gets them (scripts/admin/commands/webhook.ts): the rules, the sealing key, the job sender.
          webhooks: {
            settings: {
              policy: { allowLoopback: config.webhookAllowLoopback },
              secretKey: config.webhookSecretKey,
              eventTypes: webhookEventTypes,
            },
            enqueue: deliveryEnqueuer(jobs.sendMany),
          },
        }),
      );
      server.keepAliveTimeout = 5_000;
      await new Promise<void>((resolve, reject) => {
        server!.once('error', reject);
        server!.listen(config.port, config.host, resolve);
      });
      publicBaseUrl ??= reachableUrl(urlOf(server.address() as AddressInfo));
    }
  } catch (error) {
    await waking?.close().catch(() => {});
    await webhooks?.stop().catch(() => {});
    await postings?.stop().catch(() => {});
    await simulators?.stop().catch(() => {});
    await access?.close().catch(() => {});
    await jobs?.stop(0).catch(() => {});
    await heartbeat?.stop().catch(() => {});
    await database.close().catch(() => {});
    throw error;
  }

  const address = server?.address() as AddressInfo | undefined;
  const url = address ? urlOf(address) : null;
  let stopping: Promise<void> | null = null;
  const runningJobs = jobs;
  const runningWebhooks = webhooks as WebhookDispatcher | null;
  const runningPostings = postings as PostingDispatcher | null;
  const runningWaking = waking as WorkerWaking | null;
  const runningSimulators = simulators as SimulatorServer | null;
  const runningAccess = access as AccessMemory | null;
  const runningHeartbeat = heartbeat as ProcessHeartbeat;
  return {
    url,
    sandboxKey,
    apiLog,
    database,
    jobs: runningJobs,
    processId: runningHeartbeat.id,
    connectors: connectorSettings,
    config,
    stop() {
      stopping ??= (async () => {
        const deadline = Date.now() + config.shutdownTimeoutMs;
        if (server) await closeHttpServer(server, config.shutdownTimeoutMs);
        await apiLog.stop(); // after the last request, before the pool closes: no entry is lost
        await runningAccess?.close();
        await runningWaking?.close(); // no more wake-ups
        await runningWebhooks?.stop(); // the fan-out first: it sends jobs, so it ends before the job system
        await runningPostings?.stop(); // likewise
        await runningJobs.stop(Math.max(0, deadline - Date.now())); // waits for running attempts
        await runningSimulators?.stop(); // after the jobs that call them
        await runningHeartbeat.stop(); // stopped: a live worker takes back the slots of any attempt cut off, and retries it
        await database.close();
      })();
      return stopping;
    },
  };
}

const urlOf = (address: AddressInfo) =>
  `http://${address.family === 'IPv6' ? `[${address.address}]` : address.address}:${address.port}`;

/** A listen URL as a client on this machine reaches it: a wildcard listen (0.0.0.0, ::) is reached on loopback. */
export function reachableUrl(url: string): string {
  return url.replace('//0.0.0.0:', '//127.0.0.1:').replace('//[::]:', '//[::1]:');
}

interface AccessMemory {
  keys: KeyCache<KeyFacts>;
  budget: RateBudget;
  close(): Promise<void>;
}

/**
 * The keys and rate-limit tokens an API process keeps in memory, and the LISTEN that keeps the keys true: a change
 * to a key or its organisation reaches every process within a notification's delay (see access/key-cache.ts).
 */
function startAccessMemory(database: Database, logger: Logger): AccessMemory {
  const keys = new KeyCache<KeyFacts>();
  const budget = new RateBudget(database.relaxed);
  keys.onChange((organizationId) => budget.forgetOrganization(organizationId));
  const listener = listenToChannel(
    database.directUrl,
    ACCESS_CHANGED_CHANNEL,
    {
      onNotification: (organizationId) => keys.organizationChanged(organizationId),
      onListening: () => keys.listeningStarted(),
      onLost: () => keys.listeningLost(),
    },
    logger,
  );
  return {
    keys,
    budget,
    async close() {
      await listener.close();
      keys.close();
    },
  };
}

/** Stops accepting connections, lets in-flight requests finish, closes idle keep-alive sockets; forces the rest at the timeout. */
async function closeHttpServer(server: Server, timeoutMs: number): Promise<void> {
  const closed = new Promise<void>((resolve) => server.close(() => resolve()));
  server.closeIdleConnections();
  const idleSweep = setInterval(() => server.closeIdleConnections(), 100);
  const timer = setTimeout(() => server.closeAllConnections(), timeoutMs);
  try {
    await closed;
  } finally {
    clearInterval(idleSweep);
    clearTimeout(timer);
  }
}
