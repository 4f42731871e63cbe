// The rules of salespeople: the phone is personal (customers:pii to read and to write), the salesman code is
// unique (repository.ts), a route reference must be a route of the organisation, and every change writes its
// event in the same transaction.
import type { components } from '../../../generated/api-types.js';
import type { CallerContext } from '../../platform/access/context.js';
import { PII_SCOPE } from '../../platform/access/scopes.js';
import type { Tx } from '../../platform/database/transaction.js';
import { ApiError } from '../../platform/errors/api-error.js';
import { resourceService } from '../../platform/resources/service.js';
import { columnsOf } from '../routes/master-data.js';
import { ROUTES, referencedRow } from '../../platform/resources/references.js';
import { toSalesperson, type Salesperson } from './representation.js';
import { SALESPERSON_FIELDS, salespersonTable, type SalespersonColumns, type SalespersonRow } from './repository.js';

type SalespersonUpsert = components['schemas']['SalespersonUpsert'];

export const salespeople = resourceService<SalespersonRow, SalespersonColumns, SalespersonUpsert, Salesperson>({
  table: salespersonTable,
  idPrefix: 'slp',
  events: { created: 'salesperson.created', updated: 'salesperson.updated' },
  defaults: { phone: null, user_id: null, route_id: null, active: true },
  requiredOnCreate: ['salesmanCode', 'name'],
  toColumns,
  represent: (row, codes, caller) => toSalesperson(row, codes, caller.scopes.has(PII_SCOPE)),
});

async function toColumns(tx: Tx, caller: CallerContext, fields: SalespersonUpsert): Promise<Partial<SalespersonColumns>> {
  if (fields.phone !== undefined && !caller.scopes.has(PII_SCOPE)) {
    throw new ApiError('insufficient_scope', `Setting phone needs the scope ${PII_SCOPE}, which the key does not have.`,
      [{ field: '/phone', code: 'insufficient_scope', message: `needs ${PII_SCOPE}` }]);
  }
  await referencedRow(tx, caller.organizationId, ROUTES, fields.routeId, '/routeId');
  return columnsOf<SalespersonColumns, typeof SALESPERSON_FIELDS>(fields, SALESPERSON_FIELDS);
}
