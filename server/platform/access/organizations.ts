// Operator actions on organisations (the CLI and the sandbox bootstrap use them).
import type { Selectable } from 'kysely';
import type { Organization } from '../../../generated/kysely/types.js';
import type { ActingOrganization } from './actor.js';
import type { Db } from '../database/transaction.js';
import { ApiError } from '../errors/api-error.js';
import { newId } from '../ids.js';
import { accessChanged } from './key-cache.js';
import { businessTodayIn, DEFAULT_TIME_ZONE, isIanaTimeZone } from '../clock.js';

export interface OrganizationRecord {
  id: string;
  name: string;
  apiAccessEnabled: boolean;
  baseCurrency: string;
  deliveryModuleEnabled: boolean;
  fieldSalesModuleEnabled: boolean;
  /** IANA zone of the distributor's clock: business dates and DMS cut-offs are its local time. */
  timeZone: string;
}

export const MODULES = ['delivery', 'field-sales'] as const;
export type Module = (typeof MODULES)[number];

export async function createOrganization(
  db: Db,
  input: { name: string; baseCurrency?: string; apiAccessEnabled?: boolean; modules?: Module[] },
): Promise<OrganizationRecord> {
  const currency = (input.baseCurrency ?? 'UGX').toUpperCase();
  if (!/^[A-Z]{3}$/.test(currency))
    throw new Error(`--currency must be a three-letter ISO 4217 code, not ${input.baseCurrency}`);
  if (input.name.trim() === '') throw new Error('--name must not be empty');
  const row = await db
    .insertInto('organizations')
    .values((eb) => ({
      id: newId('org'),
      name: input.name.trim(),
      base_currency: currency,
      api_access_enabled: input.apiAccessEnabled ?? true,
      delivery_module_enabled: input.modules?.includes('delivery') ?? false,
      field_sales_module_enabled: input.modules?.includes('field-sales') ?? false,
      updated_at: eb.fn('now'),
    }))
    .returningAll()
    .executeTakeFirstOrThrow();
  return toRecord(row);
}

export async function updateOrganization(
  db: Db,
  id: string,
  change: { apiAccessEnabled?: boolean; modules?: Module[]; timeZone?: string },
): Promise<OrganizationRecord> {
  if (change.timeZone !== undefined && !isIanaTimeZone(change.timeZone))
    throw new Error(
      `--time-zone must be an IANA time zone such as Africa/Kampala or Europe/London, not ${change.timeZone}`,
    );
  const row = await db
    .updateTable('organizations')
    .set((eb) => ({
      ...(change.apiAccessEnabled === undefined ? {} : { api_access_enabled: change.apiAccessEnabled }),
      ...(change.modules === undefined
        ? {}
        : {
            delivery_module_enabled: change.modules.includes('delivery'),
            field_sales_module_enabled: change.modules.includes('field-sales'),
          }),
      ...(change.timeZone === undefined ? {} : { time_zone: change.timeZone }),
      updated_at: eb.fn('now'),
    }))
    .where('id', '=', id)
    .returningAll()
    .executeTakeFirst();
  if (!row) throw new ApiError('not_found', `No organisation ${id}.`);
  accessChanged(id); // this process's cached keys at once; the others by the trigger's notification
  return toRecord(row);
}

/** The organisation, or an error naming the id when there is none. */
export async function getOrganization(db: Db, id: string): Promise<OrganizationRecord> {
  const row = await db.selectFrom('organizations').selectAll().where('id', '=', id).executeTakeFirst();
  if (!row) throw new Error(`no organisation ${id} (org list shows them)`);
  return toRecord(row);
}

export async function listOrganizations(db: Db): Promise<OrganizationRecord[]> {
  const rows = await db.selectFrom('organizations').selectAll().orderBy('created_at').orderBy('id').execute();
  return rows.map(toRecord);
}

/** Registers a code system; doing it again changes nothing. True when this call registered it. */
export async function registerCodeSystem(db: Db, organizationId: string, name: string): Promise<boolean> {
  if (!/^[a-z][a-z0-9_-]{0,31}$/.test(name))
    throw new Error('a code system name is 1 to 32 lowercase letters, digits, _ or -, starting with a letter');
  if (name === 'dms') throw new Error('dms is built in');
  const inserted = await db
    .insertInto('code_systems')
    .values({ organization_id: organizationId, name })
    .onConflict((conflict) => conflict.doNothing())
    .returning('name')
    .executeTakeFirst();
  return inserted !== undefined;
}

/** The organisation's code systems, the built-in dms first, then the registered ones by name. */
export async function listCodeSystems(db: Db, organizationId: string): Promise<string[]> {
  const rows = await db
    .selectFrom('code_systems')
    .select('name')
    .where('organization_id', '=', organizationId)
    .orderBy('name')
    .execute();
  return ['dms', ...rows.map((row) => row.name)];
}

function toRecord(row: Selectable<Organization>): OrganizationRecord {
  return {
    id: row.id,
    name: row.name,
    apiAccessEnabled: row.api_access_enabled,
    baseCurrency: row.base_currency,
    deliveryModuleEnabled: row.delivery_module_enabled,
    fieldSalesModuleEnabled: row.field_sales_module_enabled,
    timeZone: row.time_zone,
  };
}

/** The organisation's time zone (its default when the row has none to read, as for an unknown id). */
export async function timeZoneOf(db: Db, organizationId: string): Promise<string> {
  const row = await db
    .selectFrom('organizations')
    .select('time_zone')
    .where('id', '=', organizationId)
    .executeTakeFirst();
  return row?.time_zone ?? DEFAULT_TIME_ZONE;
}

/** Today in the organisation's zone by the business clock: the default date of its documents and activities. */
export async function organizationToday(db: Db, organizationId: string): Promise<string> {
  return businessTodayIn(await timeZoneOf(db, organizationId));
}

/** The organisation as an actor acts for it. */
export function actingOrganization(record: OrganizationRecord): ActingOrganization {
  return {
    id: record.id,
    name: record.name,
    baseCurrency: record.baseCurrency,
    deliveryModuleEnabled: record.deliveryModuleEnabled,
    fieldSalesModuleEnabled: record.fieldSalesModuleEnabled,
  };
}
