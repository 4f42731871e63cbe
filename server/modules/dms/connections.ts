// An organisation's DMS connections: the system name the paths use (`canonical` today), the one distributor code it
// serves, synchronous or not, the return path of its flags, its fiscalise switch and the cut-off of its business day.
// Managed by the operator CLI (`admin dms connection add|update|show`); a callback return path is a webhook endpoint
// subscribed to dms.document.flagged, so flag callbacks are signed and retried like every webhook.
import type { Selectable } from 'kysely';
import type { DmsConnection as DmsConnectionTable } from '../../../generated/kysely/types.js';
import type { DmsConnectionActor } from '../../platform/access/actor.js';
import { scopeCatalogue } from '../../platform/access/scopes.js';
import type { ActingOrganization } from '../../platform/access/actor.js';
import type { Db, Tx } from '../../platform/database/transaction.js';
import { ApiError } from '../../platform/errors/api-error.js';
import { newId } from '../../platform/ids.js';

export const DMS_SYSTEMS = ['canonical'] as const;
export const RETURN_PATHS = ['response', 'callback', 'flag_file'] as const;
export type ReturnPath = (typeof RETURN_PATHS)[number];
/** Documents per call: at most 500, at most 50 when the connection posts before it answers. */
export const MAX_BATCH = 500;
export const MAX_SYNCHRONOUS_BATCH = 50;

export type DmsConnectionRow = Selectable<DmsConnectionTable>;

export interface DmsConnectionSettings {
  distributorCode?: string;
  synchronous?: boolean;
  returnPath?: ReturnPath;
  webhookEndpointId?: string | null;
  fiscalise?: boolean;
  cutOffTime?: string;
}

/** The connection the path's {system} names for the organisation; 404 not_found when it has none. */
export async function requireConnection(
  db: Db | Tx,
  organizationId: string,
  system: string,
): Promise<DmsConnectionRow> {
  const row = await findConnection(db, organizationId, system);
  if (!row)
    throw new ApiError(
      'not_found',
      `This organisation has no DMS connection named ${system}. An operator adds one with \`admin dms connection add\`.`,
    );
  return row;
}

export async function findConnection(
  db: Db | Tx,
  organizationId: string,
  system: string,
): Promise<DmsConnectionRow | null> {
  return (
    (await db
      .selectFrom('dms_connections')
      .selectAll()
      .where('organization_id', '=', organizationId)
      .where('system', '=', system)
      .executeTakeFirst()) ?? null
  );
}

export async function findConnectionById(
  db: Db | Tx,
  organizationId: string,
  id: string,
): Promise<DmsConnectionRow | null> {
  return (
    (await db
      .selectFrom('dms_connections')
      .selectAll()
      .where('organization_id', '=', organizationId)
      .where('id', '=', id)
      .executeTakeFirst()) ?? null
  );
}

const CALLBACK_NEEDS_URL = 'The callback return path needs the URL the flags are sent to: give --callback-url.';
const CUT_OFF = /^([01][0-9]|2[0-3]):[0-5][0-9]$/;

function checkSettings(settings: DmsConnectionSettings): void {
  if (settings.distributorCode !== undefined && !/^[A-Za-z0-9_-]{1,32}$/.test(settings.distributorCode))
    throw new Error('--distributor-code is 1 to 32 letters, digits, _ or -.');
  if (settings.cutOffTime !== undefined && !CUT_OFF.test(settings.cutOffTime))
    throw new Error('--cut-off is a time HH:MM (24 hours), for example 20:00.');
}

/** Adds the organisation's connection for `system`; one per system. */
export async function addConnection(
  tx: Tx,
  organizationId: string,
  system: string,
  settings: DmsConnectionSettings & { distributorCode: string },
): Promise<DmsConnectionRow> {
  if (!(DMS_SYSTEMS as readonly string[]).includes(system))
    throw new Error(`The DMS systems are ${DMS_SYSTEMS.join(', ')}; a partner format is not mapped yet.`);
  checkSettings(settings);
  if (await findConnection(tx, organizationId, system))
    throw new Error(
      `The organisation already has a ${system} connection; change it with \`admin dms connection update\`.`,
    );
  if (settings.returnPath === 'callback' && !settings.webhookEndpointId) throw new Error(CALLBACK_NEEDS_URL);
  return tx
    .insertInto('dms_connections')
    .values({
      organization_id: organizationId,
      id: newId('dmc'),
      system,
      distributor_code: settings.distributorCode,
      synchronous: settings.synchronous ?? false,
      return_path: settings.returnPath ?? 'response',
      webhook_endpoint_id: settings.webhookEndpointId ?? null,
      fiscalise: settings.fiscalise ?? true,
      cut_off_time: settings.cutOffTime ?? '20:00',
    })
    .returningAll()
    .executeTakeFirstOrThrow();
}

export async function updateConnection(
  tx: Tx,
  organizationId: string,
  system: string,
  settings: DmsConnectionSettings,
): Promise<DmsConnectionRow> {
  checkSettings(settings);
  const existing = await findConnection(tx, organizationId, system);
  if (!existing)
    throw new Error(`The organisation has no ${system} connection; add one with \`admin dms connection add\`.`);
  const returnPath = settings.returnPath ?? existing.return_path;
  if (returnPath === 'callback' && !(settings.webhookEndpointId ?? existing.webhook_endpoint_id))
    throw new Error(CALLBACK_NEEDS_URL);
  return tx
    .updateTable('dms_connections')
    .set((eb) => ({
      ...(settings.distributorCode !== undefined ? { distributor_code: settings.distributorCode } : {}),
      ...(settings.synchronous !== undefined ? { synchronous: settings.synchronous } : {}),
      ...(settings.returnPath !== undefined ? { return_path: settings.returnPath } : {}),
      ...(settings.webhookEndpointId !== undefined ? { webhook_endpoint_id: settings.webhookEndpointId } : {}),
      ...(settings.fiscalise !== undefined ? { fiscalise: settings.fiscalise } : {}),
      ...(settings.cutOffTime !== undefined ? { cut_off_time: settings.cutOffTime } : {}),
      updated_at: eb.fn<Date>('now'),
    }))
    .where('organization_id', '=', organizationId)
    .where('id', '=', existing.id)
    .returningAll()
    .executeTakeFirstOrThrow();
}

/** The connection acting on the organisation's records (it may do what an operator may: it is the distributor's own system). */
export function connectionActor(organization: ActingOrganization, connectionId: string): DmsConnectionActor {
  return { kind: 'dms_connection', organization, scopes: new Set(Object.keys(scopeCatalogue())), connectionId };
}

/** A connection as the CLI prints it. */
export function shownConnection(row: DmsConnectionRow) {
  return {
    id: row.id,
    system: row.system,
    distributorCode: row.distributor_code,
    synchronous: row.synchronous,
    returnPath: row.return_path,
    webhookEndpointId: row.webhook_endpoint_id,
    fiscalise: row.fiscalise,
    cutOffTime: row.cut_off_time,
    createdAt: row.created_at.toISOString(),
    updatedAt: row.updated_at.toISOString(),
  };
}
