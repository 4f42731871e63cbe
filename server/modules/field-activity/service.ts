// The rules of field activity. Recording (visits, outlet activities, competitor observations with an optional
// photo) is done by posting functions `(tx, actor, command)` that the operator CLI and the sandbox call (the ERP
// field app is not part of this service; the DMS will call them later): every record it names must be the
// organisation's (422 naming the field), an activity or observation on a visit is at the visit's outlet, and a
// photo is a PNG or JPEG of at most 2 MB (photos.ts). Reading is the three lists; a filter id that is not the
// organisation's is 404.
import type { Actor } from '../../platform/access/actor.js';
import { PII_SCOPE } from '../../platform/access/scopes.js';
import { dateProblem, timestampProblem, toUtc } from '../../platform/dates.js';
import type { Db, Tx } from '../../platform/database/transaction.js';
import { ApiError } from '../../platform/errors/api-error.js';
import { assignCodes } from '../../platform/external-codes/external-codes.js';
import { newId } from '../../platform/ids.js';
import { readPage, type ListRequest, type Page } from '../../platform/lists/page.js';
import { referenceProblem } from '../../platform/resources/references.js';
import { acceptPhoto } from './photos.js';
import { activityQuery, OBSERVATION_RESOURCE, observationHasCode, observationQuery, visitQuery } from './repository.js';
import { requireFilterRecords } from '../../platform/lists/filter-records.js';
import { equals } from '../../platform/resources/filters.js';
import {
  toCompetitorObservation,
  toOutletActivity,
  toVisit,
  type CompetitorObservation,
  type OutletActivity,
  type Visit,
} from './representation.js';
import { organizationToday } from '../../platform/access/organizations.js';

export const VISIT_OUTCOMES = ['sale', 'no_sale', 'closed_outlet'] as const;
export const ACTIVITY_KINDS = ['merchandising', 'cooler_check', 'promotion', 'survey', 'other'] as const;
export const SITE_KINDS = ['retailer'] as const;
const MAX_TEXT = { noSaleReason: 200, description: 500, brand: 100 } as const;
const MAX_QUANTITY = 1_000_000;

export interface RecordVisit {
  customerId: string;
  salespersonId: string;
  tripId?: string | null;
  /** The check-in's UTC day when absent. */
  visitDate?: string;
  checkInAt: string;
  checkOutAt?: string | null;
  outcome: string;
  noSaleReason?: string | null;
}

export interface RecordActivity {
  customerId: string;
  salespersonId: string;
  visitId?: string | null;
  kind: string;
  description?: string | null;
  /** The visit's day when absent (today, UTC, without a visit). */
  performedOn?: string;
}

export interface RecordObservation {
  visitId: string;
  customerId: string;
  observedBy: string;
  brand: string;
  isOwnBrand: boolean;
  quantity: number;
  /** The visit's day when absent. */
  observedAt?: string;
  siteKind?: string;
  /** The photo's bytes (PNG or JPEG, at most 2 MB). */
  photo?: Buffer;
  externalCodes?: Record<string, string>;
}

const invalid = (field: string, message: string) =>
  new ApiError('invalid_field', `${field.slice(1)} ${message}.`, [{ field, code: 'invalid_field', message }]);

function oneOf(value: string, allowed: readonly string[], field: string): void {
  if (!allowed.includes(value)) throw invalid(field, `must be one of ${allowed.join(', ')}`);
}

function text(value: string | null | undefined, max: number, field: string): string | null {
  if (value === null || value === undefined) return null;
  const trimmed = value.trim();
  if (trimmed.length === 0 || trimmed.length > max) throw invalid(field, `must be 1 to ${max} characters`);
  return trimmed;
}

function timestamp(value: string, field: string): string {
  const problem =
    Number.isNaN(Date.parse(value)) || !/^\d{4}-\d{2}-\d{2}T/.test(value)
      ? 'is not a date-time'
      : timestampProblem(value);
  if (problem) throw invalid(field, problem);
  return toUtc(value);
}

function date(value: string, field: string): string {
  const problem =
    !/^\d{4}-\d{2}-\d{2}$/.test(value) || Number.isNaN(Date.parse(value))
      ? 'is not a date (YYYY-MM-DD)'
      : dateProblem(value);
  if (problem) throw invalid(field, problem);
  return value;
}

/**
 * The problem fields of a batch: `/customerId` for one record, `/3/customerId` for the fourth of several (the
 * sandbox writes its weeks of field activity in a few set-based statements through these same functions).
 */
type Fields = (index: number, field: string) => string;
const ONE: Fields = (_index, field) => field;
const MANY: Fields = (index, field) => `/${index}${field}`;

/** The ids of `table` among `ids` that are the organisation's, locked against a concurrent change (one statement). */
async function ownIds(
  tx: Tx,
  organizationId: string,
  table: 'customers' | 'salespeople' | 'trips',
  ids: readonly (string | null | undefined)[],
): Promise<Set<string>> {
  const wanted = [...new Set(ids.filter((id): id is string => typeof id === 'string'))];
  if (wanted.length === 0) return new Set();
  const rows = await tx
    .selectFrom(table)
    .select('id')
    .where('organization_id', '=', organizationId)
    .where('id', 'in', wanted)
    .orderBy('id')
    .forShare()
    .execute();
  return new Set(rows.map((row) => row.id));
}

/** The customer of each id (every one must be the organisation's): 422 customer_not_found naming the field. */
async function requireCustomers(tx: Tx, organizationId: string, ids: readonly string[], at: Fields): Promise<void> {
  const known = await ownIds(tx, organizationId, 'customers', ids);
  const unknown = ids.map((id, index) => ({ id, index })).filter(({ id }) => !known.has(id));
  if (unknown.length > 0) {
    throw new ApiError(
      'customer_not_found',
      `There is no customer ${unknown.map(({ id }) => id).join(', ')} in this organisation.`,
      unknown.map(({ id, index }) => ({
        field: at(index, '/customerId'),
        code: 'customer_not_found',
        message: `no customer ${id} in this organisation`,
      })),
    );
  }
}

/** Each non-null id must be a record of `table` in the organisation: 422 business_rule naming the field. */
async function requireOwn(
  tx: Tx,
  organizationId: string,
  table: 'salespeople' | 'trips',
  ids: readonly (string | null | undefined)[],
  at: Fields,
  field: string,
): Promise<void> {
  const known = await ownIds(tx, organizationId, table, ids);
  const index = ids.findIndex((id) => typeof id === 'string' && !known.has(id));
  if (index >= 0)
    throw referenceProblem(
      at(index, field),
      `There is no ${table === 'trips' ? 'trip' : 'salesperson'} ${ids[index]} in this organisation.`,
    );
}

/** The visits named (each must be the organisation's and at the command's outlet), with their days. */
async function requireVisitsAt(
  tx: Tx,
  organizationId: string,
  named: readonly { visitId?: string | null; customerId: string }[],
  at: Fields,
): Promise<Map<string, string>> {
  const ids = [...new Set(named.flatMap((n) => (typeof n.visitId === 'string' ? [n.visitId] : [])))];
  const rows =
    ids.length === 0
      ? []
      : await tx
          .selectFrom('visits as t')
          .where('t.organization_id', '=', organizationId)
          .where('t.id', 'in', ids)
          .select((eb) => [
            't.id',
            't.customer_id',
            eb.fn<string>('to_char', ['t.visit_date', eb.val('YYYY-MM-DD')]).as('visit_date'),
          ])
          .orderBy('t.id')
          .forShare()
          .execute();
  const visits = new Map(rows.map((row) => [row.id, row]));
  for (const [index, { visitId, customerId }] of named.entries()) {
    if (typeof visitId !== 'string') continue;
    const visit = visits.get(visitId);
    if (!visit) throw referenceProblem(at(index, '/visitId'), `There is no visit ${visitId} in this organisation.`);
    if (visit.customer_id !== customerId)
      throw referenceProblem(
        at(index, '/visitId'),
        `Visit ${visitId} was at customer ${visit.customer_id}, not at ${customerId}.`,
      );
  }
  return new Map(rows.map((row) => [row.id, row.visit_date]));
}

export async function recordVisit(tx: Tx, actor: Actor, command: RecordVisit): Promise<Visit> {
  return (await writeVisits(tx, actor, [command], ONE))[0]!;
}

/** Several visits at once, in a few statements (the sandbox); problems name `/<index>/<field>`. */
export async function recordVisits(tx: Tx, actor: Actor, commands: readonly RecordVisit[]): Promise<Visit[]> {
  return writeVisits(tx, actor, commands, MANY);
}

async function writeVisits(tx: Tx, actor: Actor, commands: readonly RecordVisit[], at: Fields): Promise<Visit[]> {
  if (commands.length === 0) return [];
  const organizationId = actor.organization.id;
  const rows = commands.map((command, i) => {
    oneOf(command.outcome, VISIT_OUTCOMES, at(i, '/outcome'));
    const checkInAt = timestamp(command.checkInAt, at(i, '/checkInAt'));
    const checkOutAt =
      command.checkOutAt === null || command.checkOutAt === undefined
        ? null
        : timestamp(command.checkOutAt, at(i, '/checkOutAt'));
    if (checkOutAt !== null && checkOutAt < checkInAt)
      throw referenceProblem(
        at(i, '/checkOutAt'),
        'A visit cannot end before it began: checkOutAt is before checkInAt.',
      );
    const noSaleReason = text(command.noSaleReason, MAX_TEXT.noSaleReason, at(i, '/noSaleReason'));
    if (noSaleReason !== null && command.outcome === 'sale')
      throw referenceProblem(at(i, '/noSaleReason'), 'A visit that ended in a sale has no noSaleReason.');
    return {
      organization_id: organizationId,
      id: newId('vis'),
      customer_id: command.customerId,
      salesperson_id: command.salespersonId,
      trip_id: command.tripId ?? null,
      visit_date:
        command.visitDate === undefined ? checkInAt.slice(0, 10) : date(command.visitDate, at(i, '/visitDate')),
      check_in_at: checkInAt,
      check_out_at: checkOutAt,
      outcome: command.outcome,
      no_sale_reason: noSaleReason,
    };
  });
  await requireCustomers(
    tx,
    organizationId,
    commands.map((c) => c.customerId),
    at,
  );
  await requireOwn(
    tx,
    organizationId,
    'salespeople',
    commands.map((c) => c.salespersonId),
    at,
    '/salespersonId',
  );
  await requireOwn(
    tx,
    organizationId,
    'trips',
    commands.map((c) => c.tripId),
    at,
    '/tripId',
  );
  await tx.insertInto('visits').values(rows).execute();
  return inOrder(
    rows.map((r) => r.id),
    await visitQuery(tx, organizationId)
      .where(
        't.id',
        'in',
        rows.map((r) => r.id),
      )
      .execute(),
  ).map(toVisit);
}

export async function recordActivity(tx: Tx, actor: Actor, command: RecordActivity): Promise<OutletActivity> {
  return (await writeActivities(tx, actor, [command], ONE))[0]!;
}

/** Several outlet activities at once (the sandbox); problems name `/<index>/<field>`. */
export async function recordActivities(
  tx: Tx,
  actor: Actor,
  commands: readonly RecordActivity[],
): Promise<OutletActivity[]> {
  return writeActivities(tx, actor, commands, MANY);
}

async function writeActivities(
  tx: Tx,
  actor: Actor,
  commands: readonly RecordActivity[],
  at: Fields,
): Promise<OutletActivity[]> {
  if (commands.length === 0) return [];
  const organizationId = actor.organization.id;
  const checked = commands.map((command, i) => {
    oneOf(command.kind, ACTIVITY_KINDS, at(i, '/kind'));
    return {
      description: text(command.description, MAX_TEXT.description, at(i, '/description')),
      performedOn: command.performedOn === undefined ? undefined : date(command.performedOn, at(i, '/performedOn')),
    };
  });
  await requireCustomers(
    tx,
    organizationId,
    commands.map((c) => c.customerId),
    at,
  );
  await requireOwn(
    tx,
    organizationId,
    'salespeople',
    commands.map((c) => c.salespersonId),
    at,
    '/salespersonId',
  );
  const visitDays = await requireVisitsAt(tx, organizationId, commands, at);
  const today = await organizationToday(tx, organizationId);
  const rows = commands.map((command, i) => ({
    organization_id: organizationId,
    id: newId('act'),
    customer_id: command.customerId,
    visit_id: command.visitId ?? null,
    salesperson_id: command.salespersonId,
    kind: command.kind,
    description: checked[i]!.description,
    performed_on: checked[i]!.performedOn ?? (command.visitId ? visitDays.get(command.visitId)! : today),
  }));
  await tx.insertInto('outlet_activities').values(rows).execute();
  return inOrder(
    rows.map((r) => r.id),
    await activityQuery(tx, organizationId)
      .where(
        't.id',
        'in',
        rows.map((r) => r.id),
      )
      .execute(),
  ).map(toOutletActivity);
}

export interface RecordedObservation {
  /** As the API shows it to a reader without customers:pii (no photoUrl). */
  observation: CompetitorObservation;
  photoId: string | null;
}

export async function recordObservation(
  tx: Tx,
  actor: Actor,
  command: RecordObservation,
): Promise<RecordedObservation> {
  return (await writeObservations(tx, actor, [command], ONE))[0]!;
}

/** Several competitor observations at once (the sandbox); problems name `/<index>/<field>`. */
export async function recordObservations(
  tx: Tx,
  actor: Actor,
  commands: readonly RecordObservation[],
): Promise<RecordedObservation[]> {
  return writeObservations(tx, actor, commands, MANY);
}

async function writeObservations(
  tx: Tx,
  actor: Actor,
  commands: readonly RecordObservation[],
  at: Fields,
): Promise<RecordedObservation[]> {
  if (commands.length === 0) return [];
  const organizationId = actor.organization.id;
  const checked = commands.map((command, i) => {
    const siteKind = command.siteKind ?? 'retailer';
    oneOf(siteKind, SITE_KINDS, at(i, '/siteKind'));
    const brand = text(command.brand, MAX_TEXT.brand, at(i, '/brand'));
    if (brand === null) throw invalid(at(i, '/brand'), `must be 1 to ${MAX_TEXT.brand} characters`);
    if (!Number.isInteger(command.quantity) || command.quantity < 0 || command.quantity > MAX_QUANTITY)
      throw invalid(at(i, '/quantity'), `must be a whole number from 0 to ${MAX_QUANTITY}`);
    if (typeof command.isOwnBrand !== 'boolean') throw invalid(at(i, '/isOwnBrand'), 'must be true or false');
    if (typeof command.visitId !== 'string')
      throw invalid(at(i, '/visitId'), 'is required: an observation is made on a visit');
    return {
      siteKind,
      brand,
      observedAt: command.observedAt === undefined ? undefined : date(command.observedAt, at(i, '/observedAt')),
      photo: command.photo === undefined ? null : acceptPhoto(command.photo, at(i, '/photo')),
    };
  });
  await requireCustomers(
    tx,
    organizationId,
    commands.map((c) => c.customerId),
    at,
  );
  await requireOwn(
    tx,
    organizationId,
    'salespeople',
    commands.map((c) => c.observedBy),
    at,
    '/observedBy',
  );
  const visitDays = await requireVisitsAt(tx, organizationId, commands, at);

  const photoIds = checked.map(({ photo }) => (photo === null ? null : newId('pho')));
  const photos = checked.flatMap(({ photo }, i) =>
    photo === null
      ? []
      : [
          {
            organization_id: organizationId,
            id: photoIds[i]!,
            content_type: photo.contentType,
            bytes: photo.bytes,
            sha256: photo.sha256,
          },
        ],
  );
  if (photos.length > 0) await tx.insertInto('photos').values(photos).execute();
  const rows = commands.map((command, i) => ({
    organization_id: organizationId,
    id: newId('obs'),
    site_kind: checked[i]!.siteKind,
    customer_id: command.customerId,
    brand: checked[i]!.brand,
    is_own_brand: command.isOwnBrand,
    quantity: command.quantity,
    observed_at: checked[i]!.observedAt ?? visitDays.get(command.visitId)!,
    observed_by: command.observedBy,
    visit_id: command.visitId,
    photo_id: photoIds[i]!,
  }));
  await tx.insertInto('competitor_observations').values(rows).execute();
  for (const [i, command] of commands.entries()) {
    if (command.externalCodes && Object.keys(command.externalCodes).length > 0)
      await assignCodes(tx, organizationId, OBSERVATION_RESOURCE, rows[i]!.id, command.externalCodes);
  }
  const written = inOrder(
    rows.map((r) => r.id),
    await observationQuery(tx, organizationId)
      .where(
        't.id',
        'in',
        rows.map((r) => r.id),
      )
      .execute(),
  );
  return written.map((row, i) => ({ observation: toCompetitorObservation(row), photoId: photoIds[i]! }));
}

/** Rows in the order of `ids`. */
function inOrder<Row extends { id: string }>(ids: readonly string[], rows: readonly Row[]): Row[] {
  const byId = new Map(rows.map((row) => [row.id, row]));
  return ids.map((id) => byId.get(id)!);
}

type Query = Record<string, string | undefined>;

export async function listVisits(db: Db, actor: Actor, request: ListRequest, query: Query): Promise<Page<Visit>> {
  const organizationId = actor.organization.id;
  await requireFilterRecords(db, organizationId, [
    { parameter: 'customerId', table: 'customers', what: 'customer', id: query.customerId },
    { parameter: 'salespersonId', table: 'salespeople', what: 'salesperson', id: query.salespersonId },
    { parameter: 'tripId', table: 'trips', what: 'trip', id: query.tripId },
  ]);
  const page = await readPage('visits', visitQuery(db, organizationId), organizationId, request, {
    customerId: equals('visits', 'customer_id', query.customerId),
    salespersonId: equals('visits', 'salesperson_id', query.salespersonId),
    tripId: equals('visits', 'trip_id', query.tripId),
  });
  return { ...page, rows: page.rows.map(toVisit) };
}

export async function listOutletActivities(
  db: Db,
  actor: Actor,
  request: ListRequest,
  query: Query,
): Promise<Page<OutletActivity>> {
  const organizationId = actor.organization.id;
  await requireFilterRecords(db, organizationId, [
    { parameter: 'customerId', table: 'customers', what: 'customer', id: query.customerId },
    { parameter: 'visitId', table: 'visits', what: 'visit', id: query.visitId },
  ]);
  const page = await readPage('outlet-activities', activityQuery(db, organizationId), organizationId, request, {
    customerId: equals('outlet_activities', 'customer_id', query.customerId),
    visitId: equals('outlet_activities', 'visit_id', query.visitId),
    kind: equals('outlet_activities', 'kind', query.kind),
  });
  return { ...page, rows: page.rows.map(toOutletActivity) };
}

/**
 * Newest observation date first (ties by id, newest first); the change feed by (updatedAt, id) as every list.
 * `photoUrlOf` signs a photo's URL; it is used only when the actor has customers:pii.
 */
export async function listCompetitorObservations(
  db: Db,
  actor: Actor,
  request: ListRequest,
  query: Query,
  photoUrlOf: (organizationId: string, photoId: string) => string,
): Promise<Page<CompetitorObservation>> {
  const organizationId = actor.organization.id;
  await requireFilterRecords(db, organizationId, [
    { parameter: 'customerId', table: 'customers', what: 'customer', id: query.customerId },
  ]);
  const page = await readPage(
    'competitor-observations',
    observationQuery(db, organizationId),
    organizationId,
    request,
    {
      customerId: equals('competitor_observations', 'customer_id', query.customerId),
      externalCode: observationHasCode(query.externalCode),
    },
    undefined,
    { column: 't.observed_at', valueOf: (row) => row.observed_on },
  );
  const urls = actor.scopes.has(PII_SCOPE) ? (photoId: string) => photoUrlOf(organizationId, photoId) : undefined;
  return { ...page, rows: page.rows.map((row) => toCompetitorObservation(row, urls)) };
}
