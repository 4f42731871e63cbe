// The behaviour every resource shares: create, change, read by id and by external code, upsert by code (create
// the first time, update afterwards, one record even under concurrent first PUTs), and list pages. A resource
// supplies only its own fields and rules (toColumns, defaults, representation) and its events.
import type pg from 'pg';
import type { CallerContext } from '../access/context.js';
import type { Tx } from '../database/transaction.js';
import { ApiError } from '../errors/api-error.js';
import { recordEvent, type EventType } from '../events/outbox.js';
import { assignCodes, changeCodes, codesOf, findRecordIdByCode, isCodeSystem, normaliseCode } from '../external-codes/external-codes.js';
import { newId } from '../ids.js';
import type { Filter, ListRequest, Page } from '../lists/page.js';
import { findRow, insertRow, listRows, updateRow, type BaseRow, type TableDefinition } from './table.js';

export interface ResourceDefinition<Row extends BaseRow, Columns, Fields, Body> {
  table: TableDefinition<Columns>;
  /** Prefix of the ids (`cus`). */
  idPrefix: string;
  events: { created: EventType; updated: EventType };
  /** Column values of a new record for the fields a create leaves out. */
  defaults: Partial<Columns>;
  /** Fields a create (including an upsert that creates) must have. */
  requiredOnCreate: readonly (keyof Fields & string)[];
  /** The columns the given fields write, after the resource's own checks (scopes, money, references). */
  toColumns(tx: Tx, caller: CallerContext, fields: Fields): Promise<Partial<Columns>> | Partial<Columns>;
  represent(row: Row, externalCodes: Record<string, string>, caller: CallerContext): Body;
}

export interface ResourceService<Fields, Body> {
  create(tx: Tx, caller: CallerContext, fields: Fields, externalCodes?: Record<string, string>): Promise<Body>;
  /** `externalCodes`: a system's code set (added or changed) or, with null, removed; other systems' codes are kept. */
  change(tx: Tx, caller: CallerContext, id: string, fields: Fields, externalCodes?: Record<string, string | null>): Promise<Body>;
  upsertByCode(tx: Tx, caller: CallerContext, system: string, code: string, fields: Fields): Promise<{ created: boolean; body: Body }>;
  get(db: pg.Pool, caller: CallerContext, id: string): Promise<Body>;
  getByCode(db: pg.Pool, caller: CallerContext, system: string, code: string): Promise<Body>;
  list(db: pg.Pool, caller: CallerContext, request: ListRequest, filters: Record<string, Filter | undefined>): Promise<Page<Body>>;
}

export function resourceService<Row extends BaseRow, Columns, Fields extends object, Body>(definition: ResourceDefinition<Row, Columns, Fields, Body>): ResourceService<Fields, Body> {
  const { table } = definition;
  const notFound = (id: string) => new ApiError('not_found', `No ${table.resource} ${id} in this organisation.`);

  async function represent(db: pg.Pool | Tx, caller: CallerContext, row: Row): Promise<Body> {
    const codes = await codesOf(db, caller.organizationId, table.resource, [row.id]);
    return definition.represent(row, codes.get(row.id)!, caller);
  }

  async function resolveCode(db: pg.Pool | Tx, caller: CallerContext, system: string, rawCode: string): Promise<string> {
    if (!(await isCodeSystem(db, caller.organizationId, system))) {
      throw new ApiError('not_found', `There is no code system ${system} for this organisation; dms always exists, partner systems are registered by an administrator.`);
    }
    return normaliseCode(rawCode, '/path/code');
  }

  async function create(tx: Tx, caller: CallerContext, fields: Fields, externalCodes: Record<string, string> = {}): Promise<Body> {
    const columns = { ...definition.defaults, ...(await definition.toColumns(tx, caller, fields)) } as Columns;
    const row = await insertRow<Row, Columns>(tx, table, caller.organizationId, newId(definition.idPrefix), columns);
    const codes = await assignCodes(tx, caller.organizationId, table.resource, row.id, externalCodes);
    await recordEvent(tx, caller.organizationId, definition.events.created, table.resource, row.id);
    return definition.represent(row, codes, caller); // a new record has exactly the codes just assigned
  }

  async function applyChanges(tx: Tx, caller: CallerContext, existing: Row, fields: Fields, externalCodes: Record<string, string | null> = {}): Promise<Body> {
    const columns = await definition.toColumns(tx, caller, fields);
    const codesChanged = await changeCodes(tx, caller.organizationId, table.resource, existing.id, externalCodes);
    if (Object.keys(columns).length === 0 && !codesChanged) return represent(tx, caller, existing); // nothing written: no event
    // A change of codes alone still moves updatedAt (the feed shows it) and writes the event (webhooks show it).
    const row = await updateRow<Row, Columns>(tx, table, caller.organizationId, existing.id, columns);
    await recordEvent(tx, caller.organizationId, definition.events.updated, table.resource, row.id);
    return represent(tx, caller, row);
  }

  return {
    create,

    async change(tx, caller, id, fields, externalCodes) {
      const existing = await findRow<Row>(tx, table, caller.organizationId, id, true);
      if (!existing) throw notFound(id);
      return applyChanges(tx, caller, existing, fields, externalCodes);
    },

    async upsertByCode(tx, caller, system, rawCode, fields) {
      const code = await resolveCode(tx, caller, system, rawCode);
      // Two concurrent first PUTs of one code must make one record: serialise them on the code.
      await tx.query('SELECT pg_advisory_xact_lock(hashtextextended($1, 0))', [`${caller.organizationId}:${table.resource}:${system}:${code}`]);
      const existingId = await findRecordIdByCode(tx, caller.organizationId, table.resource, system, code);
      if (existingId) {
        const existing = await findRow<Row>(tx, table, caller.organizationId, existingId, true);
        return { created: false, body: await applyChanges(tx, caller, existing!, fields) };
      }
      const missing = definition.requiredOnCreate.filter((field) => (fields as Record<string, unknown>)[field] === undefined);
      if (missing.length > 0) {
        throw new ApiError('required_field', `No ${table.resource} has the ${system} code ${code} yet, so this PUT creates one and needs ${missing.join(', ')}.`,
          missing.map((field) => ({ field: `/${field}`, code: 'required_field', message: `required when the PUT creates the ${table.resource}` })));
      }
      return { created: true, body: await create(tx, caller, fields, { [system]: code }) };
    },

    async get(db, caller, id) {
      const row = await findRow<Row>(db, table, caller.organizationId, id);
      if (!row) throw notFound(id);
      return represent(db, caller, row);
    },

    async getByCode(db, caller, system, rawCode) {
      const code = await resolveCode(db, caller, system, rawCode);
      const id = await findRecordIdByCode(db, caller.organizationId, table.resource, system, code);
      const row = id ? await findRow<Row>(db, table, caller.organizationId, id) : null;
      if (!row) throw new ApiError('not_found', `No ${table.resource} has the ${system} code ${code}.`);
      return represent(db, caller, row);
    },

    async list(db, caller, request, filters) {
      const page = await listRows<Row>(db, table, caller.organizationId, request, filters);
      return { ...page, rows: page.rows.map((row) => definition.represent(row, row.external_codes, caller)) };
    },
  };
}
