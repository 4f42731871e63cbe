// Entry point: `server/main.ts [--role all|api|worker]`. npm start / npm run api / npm run worker compile it first
// (scripts/build.mjs) and run `node --enable-source-maps dist/server-main.mjs`; `node --import tsx server/main.ts`
// runs the sources (docs/decisions/0028-the-service-runs-compiled.md).
import { existsSync } from 'node:fs';
import { join } from 'node:path';
import { parseArgs } from 'node:util';
import { ConfigError, loadConfig, readEnvFile, type Role, type ServiceConfig } from './platform/config.js';
import { withInstallationSecrets } from './platform/installation-secrets.js';
import { createLogger } from './platform/logger.js';
import { checkStart, explainStartFailure, StartProblem } from './platform/start-checks.js';
import { reachableUrl, startService } from './composition/service.js';

const { values } = parseArgs({ options: { role: { type: 'string', default: 'all' } } });
const role = values.role as Role;
if (!['all', 'api', 'worker'].includes(role)) {
  console.error(`--role must be all, api or worker (got ${JSON.stringify(values.role)})`);
  process.exit(2);
}

let loaded: ReturnType<typeof loadConfig>;
try {
  readEnvFile(); // the same optional .env the operator CLI reads; the environment wins over it
  loaded = loadConfig();
} catch (error) {
  if (error instanceof ConfigError) {
    console.error(error.message);
    process.exit(2);
  }
  throw error;
}

// A problem a developer can fix (port taken, database unreachable, data directory unusable) is one line on stderr
// saying what to do, and exit 1; anything else is a bug and keeps its stack in the fatal log.
let config: ServiceConfig;
try {
  await checkStart(loaded, role);
  config = withInstallationSecrets(loaded); // after the checks: DATA_DIR is known to be usable
} catch (error) {
  if (!(error instanceof StartProblem)) throw error;
  console.error(error.message);
  process.exit(1);
}

// The first start creates the embedded cluster, the schema, pg-boss's tables and the sandbox: 10 to 30 s measured,
// of which the sandbox's data takes about 0.5 s (too short for a progress bar). On a terminal, say what the wait is,
// so that it does not look like a hang; never in logs or pipes, where the JSON log lines tell it.
if (
  process.stderr.isTTY &&
  config.databaseUrl === null &&
  !existsSync(join(config.dataDir, 'postgres', 'PG_VERSION'))
) {
  process.stderr.write(
    `First start: creating the embedded PostgreSQL in ${join(config.dataDir, 'postgres')}${config.sandboxBootstrap && role !== 'worker' ? ' and the sandbox' : ''}; this takes 10 to 30 seconds...\n`,
  );
}

const logger = createLogger(config.logLevel);
const service = await startService(config, logger, { role }).catch((error: unknown) => {
  const problem = explainStartFailure(error, config);
  if (problem) console.error(problem);
  else logger.fatal({ err: error }, 'failed to start');
  process.exit(1);
});
logger.info({ role, environment: config.environment, url: service.url }, 'service started');
const keyFile = join(config.dataDir, 'sandbox-key.txt');
if (service.sandboxKey) {
  console.log(
    `\nSandbox ready: a demo distributor with synthetic outlets. Its full-scope sandbox key, shown once (also in ${keyFile}):\n\n  ${service.sandboxKey}\n`,
  );
}
if (service.url)
  console.log(startedLines(service.url, config.sandboxBootstrap && existsSync(keyFile) ? keyFile : null).join('\n'));
else
  console.log(
    `Worker running as ${service.processId} (no HTTP port; \`npm run admin -- health\` shows the workers' heartbeats and queues)`,
  );

/**
 * Where the API is, and the two variables the README's and the SDK's examples use, so that they work whatever PORT
 * and HOST are (a developer pastes the exports instead of editing every example).
 */
function startedLines(url: string, sandboxKeyFile: string | null): string[] {
  const shell = (value: string) => (/^[\w./:@%+=,-]+$/.test(value) ? value : `'${value.replace(/'/g, `'\\''`)}'`);
  const local = reachableUrl(url); // a wildcard listen is reached on loopback
  return [
    `API listening on ${local}/api/v1 (reference: ${local}/docs)`,
    'For the examples in README.md:',
    `  export ERP_BASE_URL=${local}/api/v1`,
    ...(sandboxKeyFile ? [`  export ERP_API_KEY=$(cat ${shell(sandboxKeyFile)})`] : []),
    `  curl -s "$ERP_BASE_URL/health"`,
  ];
}

let signalled = false;
for (const signal of ['SIGTERM', 'SIGINT'] as const) {
  process.on(signal, () => {
    if (signalled) return; // a second signal while draining changes nothing; the timeout bounds the drain
    signalled = true;
    logger.info({ signal }, 'stopping: finishing in-flight requests and jobs');
    service.stop().then(
      () => {
        logger.info('stopped');
        process.exit(0);
      },
      (error: unknown) => {
        logger.error({ err: error }, 'stop failed');
        process.exit(1);
      },
    );
  });
}
