// The behaviour every resource shares: create, change, read by id and by external code, upsert by code (create
// the first time, update afterwards, one record even under concurrent first PUTs), and list pages. A resource
// supplies only its own fields and rules (toColumns, defaults, representation) and its events.
import type { Actor } from '../access/actor.js';
import type { Db, Tx } from '../database/transaction.js';
import { ApiError } from '../errors/api-error.js';
import type { EventType } from '../events/outbox.js';
import {
  assignCodes,
  changeCodes,
  codesOf,
  findRecordIdByCode,
  isCodeSystem,
  normaliseCode,
} from '../external-codes/external-codes.js';
import { newId } from '../ids.js';
import type { Filter, ListRequest, Page } from '../lists/page.js';
import { sql } from 'kysely';
import {
  findRow,
  insertRow,
  listRows,
  updateRow,
  type BaseRow,
  type ColumnsOf,
  type ResourceTableName,
  type TableDefinition,
} from './table.js';

export interface ResourceDefinition<TB extends ResourceTableName, Row extends BaseRow, Fields, Body> {
  table: TableDefinition<TB, Row>;
  /** Prefix of the ids (`cus`). */
  idPrefix: string;
  events: { created: EventType; updated: EventType };
  /** Column values of a new record for the fields a create leaves out. */
  defaults: Partial<ColumnsOf<TB>>;
  /** Fields a create (including an upsert that creates) must have. */
  requiredOnCreate: readonly (keyof Fields & string)[];
  /** The columns the given fields write, after the resource's own checks (scopes, money, references). */
  toColumns(tx: Tx, actor: Actor, fields: Fields): Promise<Partial<ColumnsOf<TB>>> | Partial<ColumnsOf<TB>>;
  represent(row: Row, externalCodes: Record<string, string>, actor: Actor): Body;
}

export interface ResourceService<Fields, Body> {
  create(tx: Tx, actor: Actor, fields: Fields, externalCodes?: Record<string, string>): Promise<Body>;
  /** `externalCodes`: a system's code set (added or changed) or, with null, removed; other systems' codes are kept. */
  change(
    tx: Tx,
    actor: Actor,
    id: string,
    fields: Fields,
    externalCodes?: Record<string, string | null>,
  ): Promise<Body>;
  upsertByCode(
    tx: Tx,
    actor: Actor,
    system: string,
    code: string,
    fields: Fields,
  ): Promise<{ created: boolean; body: Body }>;
  get(db: Db, actor: Actor, id: string): Promise<Body>;
  getByCode(db: Db, actor: Actor, system: string, code: string): Promise<Body>;
  list(db: Db, actor: Actor, request: ListRequest, filters: Record<string, Filter | undefined>): Promise<Page<Body>>;
}

export function resourceService<TB extends ResourceTableName, Row extends BaseRow, Fields extends object, Body>(
  definition: ResourceDefinition<TB, Row, Fields, Body>,
): ResourceService<Fields, Body> {
  const { table } = definition;
  const notFound = (id: string) => new ApiError('not_found', `No ${table.resource} ${id} in this organisation.`);

  async function represent(db: Db, actor: Actor, row: Row): Promise<Body> {
    const codes = await codesOf(db, actor.organization.id, table.resource, [row.id]);
    return definition.represent(row, codes.get(row.id)!, actor);
  }

  async function resolveCode(db: Db, actor: Actor, system: string, rawCode: string): Promise<string> {
    if (!(await isCodeSystem(db, actor.organization.id, system))) {
      throw new ApiError(
        'not_found',
        `There is no code system ${system} for this organisation; dms always exists, partner systems are registered by an administrator.`,
      );
    }
    return normaliseCode(rawCode, '/path/code');
  }

  async function create(
    tx: Tx,
    actor: Actor,
    fields: Fields,
    externalCodes: Record<string, string> = {},
  ): Promise<Body> {
    const columns = { ...definition.defaults, ...(await definition.toColumns(tx, actor, fields)) } as ColumnsOf<TB>;
    // The record and its event in one statement; its codes (if any) after it.
    const row = await insertRow(
      tx,
      table,
      actor.organization.id,
      newId(definition.idPrefix),
      columns,
      definition.events.created,
    );
    const codes = await assignCodes(tx, actor.organization.id, table.resource, row.id, externalCodes);
    return definition.represent(row, codes, actor); // a new record has exactly the codes just assigned
  }

  async function applyChanges(
    tx: Tx,
    actor: Actor,
    existing: Row,
    fields: Fields,
    externalCodes: Record<string, string | null> = {},
  ): Promise<Body> {
    const columns = await definition.toColumns(tx, actor, fields);
    const codesChanged = await changeCodes(tx, actor.organization.id, table.resource, existing.id, externalCodes);
    if (Object.keys(columns).length === 0 && !codesChanged) return represent(tx, actor, existing); // nothing written: no event
    // A change of codes alone still moves updatedAt (the feed shows it) and writes the event (webhooks show it).
    const row = await updateRow(
      tx,
      table,
      actor.organization.id,
      existing.id,
      columns as never,
      definition.events.updated,
    );
    return represent(tx, actor, row);
  }

  return {
    create,

    async change(tx, actor, id, fields, externalCodes) {
      const existing = await findRow(tx, table, actor.organization.id, id, true);
      if (!existing) throw notFound(id);
      return applyChanges(tx, actor, existing, fields, externalCodes);
    },

    async upsertByCode(tx, actor, system, rawCode, fields) {
      const code = await resolveCode(tx, actor, system, rawCode);
      // Two concurrent first PUTs of one code must make one record: serialise them on the code.
      // An advisory lock is not something Kysely's builder can say; the key is a bound parameter.
      await sql`SELECT pg_advisory_xact_lock(hashtextextended(${`${actor.organization.id}:${table.resource}:${system}:${code}`}, 0))`.execute(
        tx,
      );
      const existingId = await findRecordIdByCode(tx, actor.organization.id, table.resource, system, code);
      if (existingId) {
        const existing = await findRow(tx, table, actor.organization.id, existingId, true);
        return { created: false, body: await applyChanges(tx, actor, existing!, fields) };
      }
      const missing = definition.requiredOnCreate.filter(
        (field) => (fields as Record<string, unknown>)[field] === undefined,
      );
      if (missing.length > 0) {
        throw new ApiError(
          'required_field',
          `No ${table.resource} has the ${system} code ${code} yet, so this PUT creates one and needs ${missing.join(', ')}.`,
          missing.map((field) => ({
            field: `/${field}`,
            code: 'required_field',
            message: `required when the PUT creates the ${table.resource}`,
          })),
        );
      }
      return { created: true, body: await create(tx, actor, fields, { [system]: code }) };
    },

    async get(db, actor, id) {
      const row = await findRow(db, table, actor.organization.id, id);
      if (!row) throw notFound(id);
      return represent(db, actor, row);
    },

    async getByCode(db, actor, system, rawCode) {
      const code = await resolveCode(db, actor, system, rawCode);
      const id = await findRecordIdByCode(db, actor.organization.id, table.resource, system, code);
      const row = id ? await findRow(db, table, actor.organization.id, id) : null;
      if (!row) throw new ApiError('not_found', `No ${table.resource} has the ${system} code ${code}.`);
      return represent(db, actor, row);
    },

    async list(db, actor, request, filters) {
      const page = await listRows(db, table, actor.organization.id, request, filters);
      return { ...page, rows: page.rows.map((row) => definition.represent(row, row.external_codes, actor)) };
    },
  };
}
