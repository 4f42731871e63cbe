// What a module declares about itself. server/composition/modules.ts lists the modules; everything a module adds to
// the service (its routes, the events it writes, how a webhook reads the record an event names, its document types,
// the documents it posts to the external systems and what it does when a posting settles, the DMS documents it maps,
// its background jobs) comes from its manifest, so adding a module is one line there and nothing else changes.
//
// The platform declares what every module may add (routes, webhook objects, jobs). What modules offer one another
// through the composed registry is declared by the layer that owns its contract, as an interface a manifest adds to
// this one: posting subjects and listeners (PostingDeclarations, server/connectors/subjects.ts), document types with
// their lifecycles (DocumentDeclarations, server/domain/documents/registry.ts), the DMS documents a module maps
// (DmsDeclarations, server/modules/dms/handlers/types.ts). So the platform imports nothing above it.
import type { Router } from 'express';
import type { Logger } from 'pino';
import type { ServiceConfig } from '../config.js';
import type { Db } from '../database/transaction.js';
import type { JobDefinition } from '../jobs/jobs.js';
import type { WebhookObjectSource } from '../webhooks/objects.js';

/**
 * What a process needs to reach the external systems (server/connectors/connections.ts turns a connection into a
 * client with it): the key the credentials are sealed with, and where its simulators listen.
 */
export interface ConnectorSettings {
  secretKey: Buffer;
  /** The simulators' base URL in this process (null: not running here). */
  simulatorUrl: string | null;
  /** Per-call timeout of the clients. */
  timeoutMs?: number;
  /**
   * WEBHOOK_ALLOW_LOOPBACK (tests and local trials): a connection's base URL may be a loopback address over plain
   * http. The simulators this process runs are always reachable; private and other inside addresses never are.
   */
  allowLoopback?: boolean;
}

/** What a module is given when the service composes it. */
export interface ModuleContext {
  db: Db;
  logger: Logger;
  config: ServiceConfig;
  /** How this process reaches the external systems (the sealing key of their credentials, its simulators' URL). */
  connectors: ConnectorSettings;
  /** This process's row in service_processes (jobs that claim work name it). */
  processId: string;
  /**
   * Where clients reach the API (PUBLIC_BASE_URL, or this process's own listen address when it is not set), without
   * /api/v1: the origin of every URL the service gives out. Known once the HTTP server listens (PORT=0 picks the port).
   */
  publicBaseUrl(): string;
}

export interface ModuleManifest {
  /** The module's name (its folder under server/modules). */
  name: string;
  /** Its HTTP operations (a router mounted under the API base path). */
  routes?(context: ModuleContext): Router;
  /** The event types it writes, each readable as a webhook object (event type -> the record's reader). */
  webhookObjects?: Readonly<Record<string, WebhookObjectSource>>;
  /** Its background jobs (run by the worker role; sent by any). */
  jobs?(context: ModuleContext): JobDefinition<never>[];
}
