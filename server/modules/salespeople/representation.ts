// The exact JSON of a salesperson (spec: components/schemas/Salesperson). The phone only with customers:pii.
import type { components } from '../../../generated/api-types.js';
import { fieldsOf, recordMetadata } from '../../platform/resources/master-data.js';
import { SALESPERSON_FIELDS, type SalespersonRow } from './repository.js';

export type Salesperson = components['schemas']['Salesperson'];

export function toSalesperson(
  row: SalespersonRow,
  externalCodes: Record<string, string>,
  includePii: boolean,
): Salesperson {
  const { phone, ...fields } = fieldsOf(row, SALESPERSON_FIELDS);
  return { id: row.id, ...fields, ...(includePii ? { phone } : {}), ...recordMetadata(row, externalCodes) };
}
