// The exact JSON of a location (spec: components/schemas/Location).
import type { components } from '../../../generated/api-types.js';
import { fieldsOf, recordMetadata } from '../../platform/resources/master-data.js';
import { meaningOfCode } from './codes.js';
import { LOCATION_FIELDS, type LocationRow } from './repository.js';

export type Location = components['schemas']['Location'];

export function toLocation(row: LocationRow, externalCodes: Record<string, string>): Location {
  return {
    id: row.id,
    ...fieldsOf(row, LOCATION_FIELDS),
    ...meaningOfCode(row.code),
    ...recordMetadata(row, externalCodes),
  };
}
