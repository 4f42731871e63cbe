// The rules of salespeople: the phone is personal (customers:pii to read and to write), the salesman code is
// unique (repository.ts), a route reference must be a route of the organisation, and every change writes its
// event in the same transaction.
import type { components } from '../../../generated/api-types.js';
import type { Actor } from '../../domain/actor.js';
import { PII_SCOPE } from '../../platform/access/scopes.js';
import type { Tx } from '../../platform/database/transaction.js';
import { ApiError } from '../../platform/errors/api-error.js';
import { resourceService } from '../../platform/resources/service.js';
import { columnsOf } from '../routes/master-data.js';
import { ROUTES, requireReference } from '../../platform/resources/references.js';
import type { ColumnsOf } from '../../platform/resources/table.js';
import { toSalesperson, type Salesperson } from './representation.js';
import { SALESPERSON_FIELDS, salespersonTable } from './repository.js';

type SalespersonUpsert = components['schemas']['SalespersonUpsert'];

type SalespersonColumns = ColumnsOf<'salespeople'>;

export const salespeople = resourceService({
  table: salespersonTable,
  idPrefix: 'slp',
  events: { created: 'salesperson.created', updated: 'salesperson.updated' },
  defaults: { phone: null, user_id: null, route_id: null, active: true },
  requiredOnCreate: ['salesmanCode', 'name'],
  toColumns,
  represent: (row, codes, actor) => toSalesperson(row, codes, actor.scopes.has(PII_SCOPE)),
});

async function toColumns(tx: Tx, actor: Actor, fields: SalespersonUpsert): Promise<Partial<SalespersonColumns>> {
  if (fields.phone !== undefined && !actor.scopes.has(PII_SCOPE)) {
    throw new ApiError('insufficient_scope', `Setting phone needs the scope ${PII_SCOPE}, which the key does not have.`,
      [{ field: '/phone', code: 'insufficient_scope', message: `needs ${PII_SCOPE}` }]);
  }
  await requireReference(tx, actor.organization.id, ROUTES, fields.routeId, '/routeId');
  return columnsOf<SalespersonColumns, typeof SALESPERSON_FIELDS>(fields, SALESPERSON_FIELDS);
}
