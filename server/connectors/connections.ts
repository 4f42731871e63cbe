// An organisation's connections to the external systems (connector_connections) and the connector each one gives: the
// real QuickBooks Online or EFRIS client, pointed at the system's base URL, or at the simulators this service runs
// when the base URL is `simulator` (the sandbox and the tests). The clients are the same code either way.
import type { Db, Tx } from '../platform/database/transaction.js';
import { DestinationUnresolved, resolveDestination, type DestinationPolicy } from '../platform/webhooks/destination.js';
import { open, seal } from '../platform/webhooks/secret-box.js';
import { guardedFetch } from './guarded-fetch.js';
import { createQuickBooksClient } from './accounting/quickbooks-client.js';
import { createEfrisClient } from './fiscal/efris-client.js';
import type { AccountingConnector, FiscalConnector } from './types.js';
import type { ConnectorSettings } from '../platform/modules/manifest.js';

// Declared by the platform's module context, which hands it to every module; the connectors read it.
export type { ConnectorSettings };

export type ExternalSystem = 'accounting' | 'fiscal';
export const EXTERNAL_SYSTEMS: readonly ExternalSystem[] = ['accounting', 'fiscal'];
/** The base URL that names the simulators this service runs. */
export const SIMULATOR_BASE_URL = 'simulator';

export interface Connection {
  organizationId: string;
  system: ExternalSystem;
  provider: 'quickbooks' | 'efris';
  enabled: boolean;
  baseUrl: string;
  /** QuickBooks realm id or EFRIS TIN. */
  account: string;
  deviceNo: string | null;
  credentialsCiphertext: string | null;
  updatedAt: Date;
}

/** The rules a configured base URL is held to (the webhook destination rules). */
export const connectorPolicy = (allowLoopback: boolean): DestinationPolicy => ({ allowLoopback, purpose: 'connector' });

/**
 * Refuses a base URL that calls could not go to (the operator CLI, when it is set): `simulator` only where the
 * simulators run (the sandbox), any other URL only as the webhook destination rules allow, its name resolved now (it
 * is resolved and checked again at every call, which is what holds). Throws a message for the operator.
 */
export async function checkBaseUrl(
  baseUrl: string,
  options: { simulators: boolean; allowLoopback: boolean },
): Promise<void> {
  if (baseUrl === SIMULATOR_BASE_URL) {
    if (!options.simulators)
      throw new Error(
        `--base-url ${SIMULATOR_BASE_URL} names the simulators, which run only in the sandbox (SIMULATORS=true); give the system's https URL.`,
      );
    return;
  }
  try {
    await resolveDestination(baseUrl, connectorPolicy(options.allowLoopback));
  } catch (error) {
    // A name that does not resolve from here (an offline machine, split DNS) leads nowhere yet; every call checks
    // where it leads then.
    if (error instanceof DestinationUnresolved) return;
    throw new Error(
      `--base-url ${baseUrl} is refused: ${(error as Error).message}.${options.allowLoopback ? '' : ' (A loopback URL over http is allowed only with WEBHOOK_ALLOW_LOOPBACK=true, for tests and local trials.)'}`,
    );
  }
}

export async function readConnections(db: Db | Tx, organizationId: string): Promise<Connection[]> {
  const rows = await db
    .selectFrom('connector_connections')
    .selectAll()
    .where('organization_id', '=', organizationId)
    .orderBy('system')
    .execute();
  return rows.map((row) => ({
    organizationId: row.organization_id,
    system: row.system as ExternalSystem,
    provider: row.provider as Connection['provider'],
    enabled: row.enabled,
    baseUrl: row.base_url,
    account: row.account,
    deviceNo: row.device_no,
    credentialsCiphertext: row.credentials_ciphertext,
    updatedAt: row.updated_at,
  }));
}

export async function readConnection(
  db: Db | Tx,
  organizationId: string,
  system: ExternalSystem,
): Promise<Connection | null> {
  return (await readConnections(db, organizationId)).find((connection) => connection.system === system) ?? null;
}

export interface ConnectionChange {
  enabled?: boolean;
  baseUrl?: string;
  account?: string;
  deviceNo?: string | null;
  /** QuickBooks' access token in plain text; sealed before it is stored. */
  credentials?: string | null;
}

/** Creates or changes a connection (the operator CLI); a new one needs its base URL and account. */
export async function setConnection(
  tx: Tx,
  organizationId: string,
  system: ExternalSystem,
  change: ConnectionChange,
  secretKey: Buffer | null,
): Promise<Connection> {
  const existing = await readConnection(tx, organizationId, system);
  const baseUrl = change.baseUrl ?? existing?.baseUrl;
  const account = change.account ?? existing?.account;
  if (!baseUrl || !account) throw new Error(`A new ${system} connection needs --base-url and --account.`);
  if (baseUrl !== SIMULATOR_BASE_URL && !/^https?:\/\/[^\s]+$/.test(baseUrl))
    throw new Error(`--base-url must be an http(s) URL or "${SIMULATOR_BASE_URL}".`);
  const credentialsCiphertext =
    change.credentials === undefined
      ? (existing?.credentialsCiphertext ?? null)
      : change.credentials === null
        ? null
        : seal(change.credentials, secretKey ?? missingKey());
  const values = {
    provider: system === 'accounting' ? 'quickbooks' : 'efris',
    enabled: change.enabled ?? existing?.enabled ?? true,
    base_url: baseUrl,
    account,
    device_no:
      system === 'fiscal' ? (change.deviceNo === undefined ? (existing?.deviceNo ?? null) : change.deviceNo) : null,
    credentials_ciphertext: credentialsCiphertext,
  };
  await tx
    .insertInto('connector_connections')
    .values({ organization_id: organizationId, system, ...values })
    .onConflict((conflict) =>
      conflict
        .columns(['organization_id', 'system'])
        .doUpdateSet((eb) => ({ ...values, updated_at: eb.fn<Date>('now') })),
    )
    .execute();
  return (await readConnection(tx, organizationId, system))!;
}

function missingKey(): never {
  throw new Error('setConnection: credentials need the key they are sealed with');
}

/**
 * The system's base URL and the fetch its calls go through; the simulators serve QuickBooks under /quickbooks and EFRIS
 * under /efris of theirs. Every call is checked against the destination rules and follows no redirect
 * (guarded-fetch.ts); the simulators' own loopback address passes, as this process runs them.
 */
function endpointOf(connection: Connection, settings: ConnectorSettings): { baseUrl: string; fetch: typeof fetch } {
  if (connection.baseUrl !== SIMULATOR_BASE_URL)
    return { baseUrl: connection.baseUrl, fetch: guardedFetch(connectorPolicy(settings.allowLoopback ?? false)) };
  if (!settings.simulatorUrl)
    throw new Error(
      'This connection points at the simulators, which this process does not run (they run in the sandbox environment).',
    );
  return { baseUrl: `${settings.simulatorUrl}/${connection.provider}`, fetch: guardedFetch(connectorPolicy(true)) };
}

export function accountingConnectorOf(connection: Connection, settings: ConnectorSettings): AccountingConnector {
  const accessToken =
    connection.credentialsCiphertext === null ? 'sandbox' : open(connection.credentialsCiphertext, settings.secretKey);
  return createQuickBooksClient({
    ...endpointOf(connection, settings),
    realmId: connection.account,
    accessToken,
    timeoutMs: settings.timeoutMs,
  });
}

export function fiscalConnectorOf(connection: Connection, settings: ConnectorSettings): FiscalConnector {
  return createEfrisClient({
    ...endpointOf(connection, settings),
    tin: connection.account,
    deviceNo: connection.deviceNo ?? '',
    timeoutMs: settings.timeoutMs,
  });
}
