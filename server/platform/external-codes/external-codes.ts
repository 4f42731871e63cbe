// External codes: a record's codes in the caller's code systems (`dms` or a registered partner system), one
// mechanism for every resource. A code is trimmed, case-sensitive, at most 64 characters, and unique per
// organisation, resource and code system.
import type pg from 'pg';
import type { Tx } from '../database/transaction.js';
import { ApiError } from '../errors/api-error.js';

export const BUILT_IN_CODE_SYSTEMS = ['dms'];
export const MAX_CODE_LENGTH = 64;
type Queryable = pg.Pool | Tx;

/** Trims a code and checks its length; `field` names it in the problem (`/path/code`, `/externalCodes/dms`). */
export function normaliseCode(code: string, field: string): string {
  const trimmed = code.trim();
  if (trimmed.length === 0 || trimmed.length > MAX_CODE_LENGTH) {
    throw new ApiError('invalid_field', `An external code is 1 to ${MAX_CODE_LENGTH} characters after trimming; this one has ${trimmed.length}.`, [
      { field, code: 'invalid_field', message: `must be 1 to ${MAX_CODE_LENGTH} characters after trimming` },
    ]);
  }
  return trimmed;
}

export async function isCodeSystem(db: Queryable, organizationId: string, system: string): Promise<boolean> {
  if (BUILT_IN_CODE_SYSTEMS.includes(system)) return true;
  const { rowCount } = await db.query('SELECT 1 FROM code_systems WHERE organization_id = $1 AND name = $2', [organizationId, system]);
  return rowCount === 1;
}

export async function findRecordIdByCode(db: Queryable, organizationId: string, resource: string, system: string, code: string): Promise<string | null> {
  const { rows } = await db.query<{ record_id: string }>(
    'SELECT record_id FROM external_codes WHERE organization_id = $1 AND resource = $2 AND code_system = $3 AND code = $4',
    [organizationId, resource, system, code],
  );
  return rows[0]?.record_id ?? null;
}

/**
 * Sets the record's code in each system given and returns them as stored (trimmed); a code held by another
 * record is 422 business_rule naming the field.
 */
export async function assignCodes(tx: Tx, organizationId: string, resource: string, recordId: string, codes: Record<string, string>): Promise<Record<string, string>> {
  const assigned: Record<string, string> = {};
  for (const [system, rawCode] of Object.entries(codes)) {
    const field = `/externalCodes/${system}`;
    const code = normaliseCode(rawCode, field);
    if (!(await isCodeSystem(tx, organizationId, system))) {
      throw new ApiError('business_rule', `The code system ${system} is not registered for this organisation (dms always is).`, [{ field, code: 'unknown_code_system', message: `code system ${system} is not registered` }]);
    }
    // Name the record that holds the code, so the caller knows which one to change (checked before the insert:
    // after a unique violation the transaction could not read it). A concurrent insert still ends in 23505 below.
    const holder = await findRecordIdByCode(tx, organizationId, resource, system, code);
    if (holder !== null && holder !== recordId) throw duplicateCode(resource, system, code, field, holder);
    const { rows } = await tx.query<{ record_id: string }>(
      `INSERT INTO external_codes (organization_id, resource, code_system, code, record_id) VALUES ($1, $2, $3, $4, $5)
       ON CONFLICT (organization_id, resource, record_id, code_system) DO UPDATE SET code = EXCLUDED.code
       RETURNING record_id`,
      [organizationId, resource, system, code, recordId],
    ).catch((error: { code?: string; constraint?: string }) => {
      if (error.code === '23505') throw duplicateCode(resource, system, code, field, null);
      throw error;
    });
    if (rows[0]?.record_id !== recordId) throw new Error('external code assignment returned another record');
    assigned[system] = code;
  }
  return assigned;
}

function duplicateCode(resource: string, system: string, code: string, field: string, holder: string | null): ApiError {
  const who = holder ? `${resource} ${holder}` : `another ${resource}`;
  return new ApiError('business_rule', `The ${system} code ${code} already belongs to ${who}. Remove it there first (PATCH with "externalCodes": { "${system}": null }) or use another code.`,
    [{ field, code: 'duplicate_code', message: `${code} is already used by ${who}` }]);
}

/**
 * Applies a PATCH's `externalCodes`: each system given with a code is set (added or changed), each given with null
 * is removed. Returns whether anything changed.
 */
export async function changeCodes(tx: Tx, organizationId: string, resource: string, recordId: string, changes: Record<string, string | null>): Promise<boolean> {
  const current = (await codesOf(tx, organizationId, resource, [recordId])).get(recordId)!;
  const toSet: Record<string, string> = {};
  const toRemove: string[] = [];
  for (const [system, code] of Object.entries(changes)) {
    if (code === null) { if (system in current) toRemove.push(system); continue; }
    if (current[system] !== code.trim()) toSet[system] = code;
  }
  if (toRemove.length > 0) {
    await tx.query('DELETE FROM external_codes WHERE organization_id = $1 AND resource = $2 AND record_id = $3 AND code_system = ANY($4)', [organizationId, resource, recordId, toRemove]);
  }
  await assignCodes(tx, organizationId, resource, recordId, toSet);
  return toRemove.length > 0 || Object.keys(toSet).length > 0;
}

/** The codes of each record, as the `externalCodes` map of its representation. */
export async function codesOf(db: Queryable, organizationId: string, resource: string, recordIds: string[]): Promise<Map<string, Record<string, string>>> {
  const codes = new Map<string, Record<string, string>>(recordIds.map((id) => [id, {}]));
  if (recordIds.length === 0) return codes;
  const { rows } = await db.query<{ record_id: string; code_system: string; code: string }>(
    'SELECT record_id, code_system, code FROM external_codes WHERE organization_id = $1 AND resource = $2 AND record_id = ANY($3)',
    [organizationId, resource, recordIds],
  );
  for (const row of rows) codes.get(row.record_id)![row.code_system] = row.code;
  return codes;
}
