// The rules of salespeople: the phone is personal (customers:pii to read and to write), the salesman code is
// unique (repository.ts), a route reference must be a route of the organisation and a member one of its members, and every change writes its
// event in the same transaction.
import type { components } from '../../../generated/api-types.js';
import type { Actor } from '../../platform/access/actor.js';
import { PII_SCOPE } from '../../platform/access/scopes.js';
import { personalFieldsOf } from '../../platform/personal-fields.js';
import { apiDocument } from '../../platform/spec.js';
import type { Tx } from '../../platform/database/transaction.js';
import { ApiError } from '../../platform/errors/api-error.js';
import { resourceService } from '../../platform/resources/service.js';
import { columnsOf } from '../../platform/resources/master-data.js';
import { MEMBERS, ROUTES, requireReference } from '../../platform/resources/references.js';
import type { ColumnsOf } from '../../platform/resources/table.js';
import { toSalesperson } from './representation.js';
import { SALESPERSON_FIELDS, salespersonTable } from './repository.js';

type SalespersonUpsert = components['schemas']['SalespersonUpsert'];

type SalespersonColumns = ColumnsOf<'salespeople'>;

export const salespeople = resourceService({
  table: salespersonTable,
  idPrefix: 'slp',
  events: { created: 'salesperson.created', updated: 'salesperson.updated' },
  defaults: { phone: null, user_id: null, member_id: null, route_id: null, active: true },
  requiredOnCreate: ['salesmanCode', 'name'],
  toColumns,
  represent: (row, codes, actor) => toSalesperson(row, codes, actor.scopes.has(PII_SCOPE)),
});

/** The writable fields the spec marks `x-personal` (the phone). */
const PERSONAL_FIELDS = [...personalFieldsOf(apiDocument).topLevel('SalespersonUpsert')];

async function toColumns(tx: Tx, actor: Actor, fields: SalespersonUpsert): Promise<Partial<SalespersonColumns>> {
  const personal = PERSONAL_FIELDS.filter((field) => field in fields);
  if (personal.length > 0 && !actor.scopes.has(PII_SCOPE)) {
    throw new ApiError(
      'insufficient_scope',
      `Setting ${personal.join(', ')} needs the scope ${PII_SCOPE}, which the key does not have.`,
      personal.map((field) => ({ field: `/${field}`, code: 'insufficient_scope', message: `needs ${PII_SCOPE}` })),
    );
  }
  await requireReference(tx, actor.organization.id, ROUTES, fields.routeId, '/routeId');
  await requireReference(tx, actor.organization.id, MEMBERS, fields.memberId, '/memberId');
  return columnsOf<SalespersonColumns, typeof SALESPERSON_FIELDS>(fields, SALESPERSON_FIELDS);
}
