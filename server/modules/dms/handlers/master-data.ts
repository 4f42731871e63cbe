// Master data from the DMS: the kit the master data modules' mappings share (their dms.ts: customers, products,
// prices, routes with their salesmen, locations; each goes through its module's own create and change, with the same
// rules and events as the REST upserts, and a new version of the same key updates the record), and the DMS's own
// reason codes.
import type { Tx } from '../../../platform/database/transaction.js';
import type { BodyOf } from '../canonical.js';
import { waitKeys } from '../reasons.js';
import type { DocumentHandler } from './types.js';

/** A master-data record's status: anything but `inactive` is active. */
export const activeOf = (status: string) => status !== 'inactive';

/** The id of the record in `table` whose code column holds `code`, or null. */
export async function idByCode(
  tx: Tx,
  organizationId: string,
  table: 'customers' | 'products' | 'salespeople' | 'routes',
  column: 'outlet_code' | 'product_code' | 'salesman_code' | 'route_code',
  code: string,
): Promise<string | null> {
  // The table and its code column are fixed by the signature; the column is compared with the code as a parameter.
  const row = await tx
    .selectFrom(table as 'customers')
    .select('id')
    .where('organization_id', '=', organizationId)
    .where(column as 'outlet_code', '=', code)
    .executeTakeFirst();
  return row?.id ?? null;
}

export const reasonCode: DocumentHandler = {
  async apply(tx, context, document) {
    const org = context.actor.organization.id;
    const body = document.document.body as BodyOf<'DmsReasonCodeDocument'>;
    await tx
      .insertInto('dms_reason_codes')
      .values({ organization_id: org, code: document.number, kind: body.kind, description: body.description })
      .onConflict((conflict) =>
        conflict.columns(['organization_id', 'code']).doUpdateSet((eb) => ({
          kind: eb.ref('excluded.kind'),
          description: eb.ref('excluded.description'),
          updated_at: eb.fn<Date>('now'),
        })),
      )
      .execute();
    return { table: 'dms_reason_codes', id: document.number, provides: [waitKeys.reason(document.number)] };
  },
};
