// The rules of field activity. Recording (visits, outlet activities, competitor observations with an optional
// photo) is done by posting functions `(tx, actor, command)` that the operator CLI and the sandbox call (the ERP
// field app is not part of this service; the DMS will call them later): every record it names must be the
// organisation's (422 naming the field), an activity or observation on a visit is at the visit's outlet, and a
// photo is a PNG or JPEG of at most 2 MB (photos.ts). Reading is the three lists; a filter id that is not the
// organisation's is 404.
import type { Actor } from '../../domain/actor.js';
import { PII_SCOPE } from '../../platform/access/scopes.js';
import { dateProblem, timestampProblem, toUtc } from '../../platform/dates.js';
import type { Db, Tx } from '../../platform/database/transaction.js';
import { ApiError } from '../../platform/errors/api-error.js';
import { assignCodes } from '../../platform/external-codes/external-codes.js';
import { newId } from '../../platform/ids.js';
import { readPage, type ListRequest, type Page } from '../../platform/lists/page.js';
import { referenceProblem, requireReference, SALESPEOPLE } from '../../platform/resources/references.js';
import { acceptPhoto } from './photos.js';
import {
  activityQuery, equalsOn, OBSERVATION_RESOURCE, observationHasCode, observationQuery, requireFilterRecord, visitQuery,
} from './repository.js';
import { toCompetitorObservation, toOutletActivity, toVisit, type CompetitorObservation, type OutletActivity, type Visit } from './representation.js';

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

const invalid = (field: string, message: string) => new ApiError('invalid_field', `${field.slice(1)} ${message}.`, [{ field, code: 'invalid_field', message }]);

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
  const problem = Number.isNaN(Date.parse(value)) || !/^\d{4}-\d{2}-\d{2}T/.test(value) ? 'is not a date-time' : timestampProblem(value);
  if (problem) throw invalid(field, problem);
  return toUtc(value);
}

function date(value: string, field: string): string {
  const problem = !/^\d{4}-\d{2}-\d{2}$/.test(value) || Number.isNaN(Date.parse(value)) ? 'is not a date (YYYY-MM-DD)' : dateProblem(value);
  if (problem) throw invalid(field, problem);
  return value;
}

async function requireCustomer(tx: Tx, organizationId: string, id: string, field = '/customerId'): Promise<void> {
  const row = await tx.selectFrom('customers').select('id').where('organization_id', '=', organizationId).where('id', '=', id).forShare().executeTakeFirst();
  if (!row) throw new ApiError('customer_not_found', `There is no customer ${id} in this organisation.`, [{ field, code: 'customer_not_found', message: `no customer ${id} in this organisation` }]);
}

async function requireTrip(tx: Tx, organizationId: string, id: string | null | undefined): Promise<void> {
  if (id === null || id === undefined) return;
  const row = await tx.selectFrom('trips').select('id').where('organization_id', '=', organizationId).where('id', '=', id).forShare().executeTakeFirst();
  if (!row) throw referenceProblem('/tripId', `There is no trip ${id} in this organisation.`);
}

/** The visit, which must be the organisation's and at `customerId`'s outlet. */
async function requireVisitAt(tx: Tx, organizationId: string, visitId: string, customerId: string): Promise<{ visitDate: string }> {
  const row = await tx.selectFrom('visits as t').where('t.organization_id', '=', organizationId).where('t.id', '=', visitId)
    .select((eb) => ['t.customer_id', eb.fn<string>('to_char', ['t.visit_date', eb.val('YYYY-MM-DD')]).as('visit_date')]).forShare().executeTakeFirst();
  if (!row) throw referenceProblem('/visitId', `There is no visit ${visitId} in this organisation.`);
  if (row.customer_id !== customerId) throw referenceProblem('/visitId', `Visit ${visitId} was at customer ${row.customer_id}, not at ${customerId}.`);
  return { visitDate: row.visit_date };
}

export async function recordVisit(tx: Tx, actor: Actor, command: RecordVisit): Promise<Visit> {
  const organizationId = actor.organization.id;
  oneOf(command.outcome, VISIT_OUTCOMES, '/outcome');
  const checkInAt = timestamp(command.checkInAt, '/checkInAt');
  const checkOutAt = command.checkOutAt === null || command.checkOutAt === undefined ? null : timestamp(command.checkOutAt, '/checkOutAt');
  if (checkOutAt !== null && checkOutAt < checkInAt) throw referenceProblem('/checkOutAt', 'A visit cannot end before it began: checkOutAt is before checkInAt.');
  const visitDate = command.visitDate === undefined ? checkInAt.slice(0, 10) : date(command.visitDate, '/visitDate');
  const noSaleReason = text(command.noSaleReason, MAX_TEXT.noSaleReason, '/noSaleReason');
  if (noSaleReason !== null && command.outcome === 'sale') throw referenceProblem('/noSaleReason', 'A visit that ended in a sale has no noSaleReason.');
  await requireCustomer(tx, organizationId, command.customerId);
  await requireReference(tx, organizationId, SALESPEOPLE, command.salespersonId, '/salespersonId');
  await requireTrip(tx, organizationId, command.tripId);
  const id = newId('vis');
  await tx.insertInto('visits').values({
    organization_id: organizationId, id, customer_id: command.customerId, salesperson_id: command.salespersonId, trip_id: command.tripId ?? null,
    visit_date: visitDate, check_in_at: checkInAt, check_out_at: checkOutAt, outcome: command.outcome, no_sale_reason: noSaleReason,
  }).execute();
  return toVisit(await visitQuery(tx, organizationId).where('t.id', '=', id).executeTakeFirstOrThrow());
}

export async function recordActivity(tx: Tx, actor: Actor, command: RecordActivity): Promise<OutletActivity> {
  const organizationId = actor.organization.id;
  oneOf(command.kind, ACTIVITY_KINDS, '/kind');
  const description = text(command.description, MAX_TEXT.description, '/description');
  let performedOn = command.performedOn === undefined ? undefined : date(command.performedOn, '/performedOn');
  await requireCustomer(tx, organizationId, command.customerId);
  await requireReference(tx, organizationId, SALESPEOPLE, command.salespersonId, '/salespersonId');
  if (command.visitId !== null && command.visitId !== undefined) {
    const visit = await requireVisitAt(tx, organizationId, command.visitId, command.customerId);
    performedOn ??= visit.visitDate;
  }
  const id = newId('act');
  await tx.insertInto('outlet_activities').values({
    organization_id: organizationId, id, customer_id: command.customerId, visit_id: command.visitId ?? null, salesperson_id: command.salespersonId,
    kind: command.kind, description, performed_on: performedOn ?? new Date().toISOString().slice(0, 10),
  }).execute();
  return toOutletActivity(await activityQuery(tx, organizationId).where('t.id', '=', id).executeTakeFirstOrThrow());
}

export interface RecordedObservation {
  /** As the API shows it to a reader without customers:pii (no photoUrl). */
  observation: CompetitorObservation;
  photoId: string | null;
}

export async function recordObservation(tx: Tx, actor: Actor, command: RecordObservation): Promise<RecordedObservation> {
  const organizationId = actor.organization.id;
  const siteKind = command.siteKind ?? 'retailer';
  oneOf(siteKind, SITE_KINDS, '/siteKind');
  const brand = text(command.brand, MAX_TEXT.brand, '/brand');
  if (brand === null) throw invalid('/brand', `must be 1 to ${MAX_TEXT.brand} characters`);
  if (!Number.isInteger(command.quantity) || command.quantity < 0 || command.quantity > MAX_QUANTITY) throw invalid('/quantity', `must be a whole number from 0 to ${MAX_QUANTITY}`);
  if (typeof command.isOwnBrand !== 'boolean') throw invalid('/isOwnBrand', 'must be true or false');
  let observedAt = command.observedAt === undefined ? undefined : date(command.observedAt, '/observedAt');
  const photo = command.photo === undefined ? null : acceptPhoto(command.photo);
  await requireCustomer(tx, organizationId, command.customerId);
  await requireReference(tx, organizationId, SALESPEOPLE, command.observedBy, '/observedBy');
  const visit = await requireVisitAt(tx, organizationId, command.visitId, command.customerId);
  observedAt ??= visit.visitDate;

  const photoId = photo === null ? null : newId('pho');
  if (photo !== null) {
    await tx.insertInto('photos').values({ organization_id: organizationId, id: photoId!, content_type: photo.contentType, bytes: photo.bytes, sha256: photo.sha256 }).execute();
  }
  const id = newId('obs');
  await tx.insertInto('competitor_observations').values({
    organization_id: organizationId, id, site_kind: siteKind, customer_id: command.customerId, brand, is_own_brand: command.isOwnBrand,
    quantity: command.quantity, observed_at: observedAt, observed_by: command.observedBy, visit_id: command.visitId, photo_id: photoId,
  }).execute();
  if (command.externalCodes && Object.keys(command.externalCodes).length > 0) await assignCodes(tx, organizationId, OBSERVATION_RESOURCE, id, command.externalCodes);
  return { observation: toCompetitorObservation(await observationQuery(tx, organizationId).where('t.id', '=', id).executeTakeFirstOrThrow()), photoId };
}

type Query = Record<string, string | undefined>;

export async function listVisits(db: Db, actor: Actor, request: ListRequest, query: Query): Promise<Page<Visit>> {
  const organizationId = actor.organization.id;
  await requireFilterRecord(db, organizationId, 'customers', query.customerId, 'customerId');
  await requireFilterRecord(db, organizationId, 'salespeople', query.salespersonId, 'salespersonId');
  await requireFilterRecord(db, organizationId, 'trips', query.tripId, 'tripId');
  const page = await readPage('visits', visitQuery(db, organizationId), organizationId, request, {
    customerId: equalsOn('visits', 'customer_id', query.customerId),
    salespersonId: equalsOn('visits', 'salesperson_id', query.salespersonId),
    tripId: equalsOn('visits', 'trip_id', query.tripId),
  });
  return { ...page, rows: page.rows.map(toVisit) };
}

export async function listOutletActivities(db: Db, actor: Actor, request: ListRequest, query: Query): Promise<Page<OutletActivity>> {
  const organizationId = actor.organization.id;
  await requireFilterRecord(db, organizationId, 'customers', query.customerId, 'customerId');
  await requireFilterRecord(db, organizationId, 'visits', query.visitId, 'visitId');
  const page = await readPage('outlet-activities', activityQuery(db, organizationId), organizationId, request, {
    customerId: equalsOn('outlet_activities', 'customer_id', query.customerId),
    visitId: equalsOn('outlet_activities', 'visit_id', query.visitId),
    kind: equalsOn('outlet_activities', 'kind', query.kind),
  });
  return { ...page, rows: page.rows.map(toOutletActivity) };
}

/**
 * Newest observation date first (ties by id, newest first); the change feed by (updatedAt, id) as every list.
 * `photoUrlOf` signs a photo's URL; it is used only when the actor has customers:pii.
 */
export async function listCompetitorObservations(db: Db, actor: Actor, request: ListRequest, query: Query, photoUrlOf: (organizationId: string, photoId: string) => string): Promise<Page<CompetitorObservation>> {
  const organizationId = actor.organization.id;
  await requireFilterRecord(db, organizationId, 'customers', query.customerId, 'customerId');
  const page = await readPage('competitor-observations', observationQuery(db, organizationId), organizationId, request, {
    customerId: equalsOn('competitor_observations', 'customer_id', query.customerId),
    externalCode: observationHasCode(query.externalCode),
  }, undefined, { column: 't.observed_at', valueOf: (row) => row.observed_on });
  const urls = actor.scopes.has(PII_SCOPE) ? (photoId: string) => photoUrlOf(organizationId, photoId) : undefined;
  return { ...page, rows: page.rows.map((row) => toCompetitorObservation(row, urls)) };
}
