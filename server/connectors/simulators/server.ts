// The simulators' HTTP server: QuickBooks Online under /quickbooks, EFRIS under /efris, both on one port, their state
// in the `simulators` schema of the database given. The service starts it in-process in the sandbox environment
// (connections whose base URL is `simulator` reach it); `npm run simulators` runs it on its own.
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import express from 'express';
import type { Db } from '../../platform/database/transaction.js';
import { migrateSimulators } from './database.js';
import { createEfrisSimulator } from './efris/router.js';
import { createQuickBooksSimulator } from './quickbooks/router.js';

export interface SimulatorServer {
  /** `http://127.0.0.1:port` */
  url: string;
  stop(): Promise<void>;
}

export async function startSimulatorServer(
  db: Db,
  options: { host?: string; port?: number } = {},
): Promise<SimulatorServer> {
  await migrateSimulators(db);
  const app = express();
  app.disable('x-powered-by');
  app.use(express.json({ limit: '5mb' }));
  app.use('/quickbooks', createQuickBooksSimulator(db));
  app.use('/efris', createEfrisSimulator(db));
  const server: Server = createServer(app);
  server.keepAliveTimeout = 5_000;
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(options.port ?? 0, options.host ?? '127.0.0.1', resolve);
  });
  const address = server.address() as AddressInfo;
  return {
    url: `http://${address.family === 'IPv6' ? `[${address.address}]` : address.address}:${address.port}`,
    async stop() {
      const closed = new Promise<void>((resolve) => server.close(() => resolve()));
      server.closeAllConnections();
      await closed;
    },
  };
}
