// An organisation's connections to the external systems (connector_connections) and the connector each one gives: the
// real QuickBooks Online or EFRIS client, pointed at the system's base URL, or at the simulators this service runs
// when the base URL is `simulator` (the sandbox and the tests). The clients are the same code either way.
import type { Db, Tx } from '../platform/database/transaction.js';
import { open, seal } from '../platform/webhooks/secret-box.js';
import { createQuickBooksClient } from './accounting/quickbooks-client.js';
import { createEfrisClient } from './fiscal/efris-client.js';
import type { AccountingConnector, FiscalConnector } from './types.js';

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

/** What a process needs to turn a connection into a client: the key the credentials are sealed with, and where its simulators listen. */
export interface ConnectorSettings {
  secretKey: Buffer;
  /** The simulators' base URL in this process (null: not running here). */
  simulatorUrl: string | null;
  /** Per-call timeout of the clients. */
  timeoutMs?: number;
}

export async function readConnections(db: Db | Tx, organizationId: string): Promise<Connection[]> {
  const rows = await db.selectFrom('connector_connections').selectAll()
    .where('organization_id', '=', organizationId).orderBy('system').execute();
  return rows.map((row) => ({
    organizationId: row.organization_id, system: row.system as ExternalSystem, provider: row.provider as Connection['provider'],
    enabled: row.enabled, baseUrl: row.base_url, account: row.account, deviceNo: row.device_no,
    credentialsCiphertext: row.credentials_ciphertext, updatedAt: row.updated_at,
  }));
}

export async function readConnection(db: Db | Tx, organizationId: string, system: ExternalSystem): Promise<Connection | null> {
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
export async function setConnection(tx: Tx, organizationId: string, system: ExternalSystem, change: ConnectionChange, secretKey: Buffer | null): Promise<Connection> {
  const existing = await readConnection(tx, organizationId, system);
  const baseUrl = change.baseUrl ?? existing?.baseUrl;
  const account = change.account ?? existing?.account;
  if (!baseUrl || !account) throw new Error(`A new ${system} connection needs --base-url and --account.`);
  if (baseUrl !== SIMULATOR_BASE_URL && !/^https?:\/\/[^\s]+$/.test(baseUrl)) throw new Error(`--base-url must be an http(s) URL or "${SIMULATOR_BASE_URL}".`);
  const credentialsCiphertext = change.credentials === undefined ? existing?.credentialsCiphertext ?? null
    : change.credentials === null ? null : seal(change.credentials, secretKey ?? missingKey());
  const values = {
    provider: system === 'accounting' ? 'quickbooks' : 'efris',
    enabled: change.enabled ?? existing?.enabled ?? true,
    base_url: baseUrl,
    account,
    device_no: system === 'fiscal' ? (change.deviceNo === undefined ? existing?.deviceNo ?? null : change.deviceNo) : null,
    credentials_ciphertext: credentialsCiphertext,
  };
  await tx.insertInto('connector_connections')
    .values({ organization_id: organizationId, system, ...values })
    .onConflict((conflict) => conflict.columns(['organization_id', 'system']).doUpdateSet((eb) => ({ ...values, updated_at: eb.fn<Date>('now') })))
    .execute();
  return (await readConnection(tx, organizationId, system))!;
}

function missingKey(): never {
  throw new Error('setConnection: credentials need the key they are sealed with');
}

/** The system's base URL; the simulators serve QuickBooks under /quickbooks and EFRIS under /efris of theirs. */
function baseUrlOf(connection: Connection, settings: ConnectorSettings): string {
  if (connection.baseUrl !== SIMULATOR_BASE_URL) return connection.baseUrl;
  if (!settings.simulatorUrl) throw new Error('This connection points at the simulators, which this process does not run (they run in the sandbox environment).');
  return `${settings.simulatorUrl}/${connection.provider}`;
}

export function accountingConnectorOf(connection: Connection, settings: ConnectorSettings): AccountingConnector {
  const accessToken = connection.credentialsCiphertext === null ? 'sandbox' : open(connection.credentialsCiphertext, settings.secretKey);
  return createQuickBooksClient({ baseUrl: baseUrlOf(connection, settings), realmId: connection.account, accessToken, timeoutMs: settings.timeoutMs });
}

export function fiscalConnectorOf(connection: Connection, settings: ConnectorSettings): FiscalConnector {
  return createEfrisClient({ baseUrl: baseUrlOf(connection, settings), tin: connection.account, deviceNo: connection.deviceNo ?? '', timeoutMs: settings.timeoutMs });
}
