// Entry point: `node --import tsx server/main.ts [--role all|api|worker]` (npm start / npm run api / npm run worker).
import { parseArgs } from 'node:util';
import { ConfigError, loadConfig, type Role } from './platform/config.js';
import { createLogger } from './platform/logger.js';
import { startService } from './service.js';

const { values } = parseArgs({ options: { role: { type: 'string', default: 'all' } } });
const role = values.role as Role;
if (!['all', 'api', 'worker'].includes(role)) {
  console.error(`--role must be all, api or worker (got ${JSON.stringify(values.role)})`);
  process.exit(2);
}

let config;
try {
  config = loadConfig();
} catch (error) {
  if (error instanceof ConfigError) {
    console.error(error.message);
    process.exit(2);
  }
  throw error;
}

const logger = createLogger(config.logLevel);
const service = await startService(config, logger, { role }).catch((error: unknown) => {
  logger.fatal({ err: error }, 'failed to start');
  process.exit(1);
});
logger.info({ role, environment: config.environment, url: service.url }, 'service started');
if (service.sandboxKey) {
  console.log(`\nSandbox ready: a demo distributor with synthetic outlets. Its full-scope sandbox key, shown once (also in ${config.dataDir}/sandbox-key.txt):\n\n  ${service.sandboxKey}\n`);
}
if (service.url) console.log(`API listening on ${service.url}/api/v1 (try: curl ${service.url}/api/v1/health)`);

let signalled = false;
for (const signal of ['SIGTERM', 'SIGINT'] as const) {
  process.on(signal, () => {
    if (signalled) return; // a second signal while draining changes nothing; the timeout bounds the drain
    signalled = true;
    logger.info({ signal }, 'stopping: finishing in-flight requests and jobs');
    service.stop().then(
      () => { logger.info('stopped'); process.exit(0); },
      (error: unknown) => { logger.error({ err: error }, 'stop failed'); process.exit(1); },
    );
  });
}
