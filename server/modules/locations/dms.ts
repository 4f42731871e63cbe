// Warehouses and vans from the DMS: matched to a location of the service by code, never created (declared in this
// module's manifest's dmsHandlers, written with the DMS's kit).
import { DmsRejection, waitKeys } from '../dms/reasons.js';
import type { DocumentHandler } from '../dms/handlers/types.js';
import { activeOf } from '../dms/handlers/master-data.js';

export const warehouse: DocumentHandler = {
  async apply(tx, context, document) {
    const org = context.actor.organization.id;
    const row = await tx
      .selectFrom('locations')
      .select(['id', 'active'])
      .where('organization_id', '=', org)
      .where('code', '=', document.number)
      .executeTakeFirst();
    if (!row)
      throw new DmsRejection(
        'R03',
        `The DMS location ${document.number} matches no location of the service. Set up the location with this code, then re-process.`,
      );
    if (!row.active && activeOf(document.status))
      throw new DmsRejection(
        'R03',
        `The DMS location ${document.number} is linked to an inactive location; activate it, then re-process.`,
      );
    return { table: 'locations', id: row.id, provides: [waitKeys.location(document.number)] };
  },
};
