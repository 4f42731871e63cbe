// The inventory summary from the DMS: it writes nothing; its differences with the service's levels are kept with the
// document (its `result`, the DMS's own table), for the operator to read.
import { Decimal } from 'decimal.js';
import type { BodyOf } from '../canonical.js';
import { locationByCode, productsByCode } from './lookup.js';
import type { DocumentHandler } from './types.js';

export const inventorySummary: DocumentHandler = {
  async apply(tx, context, document) {
    const org = context.actor.organization.id;
    const body = document.document.body as BodyOf<'DmsInventorySummaryDocument'>;
    const location = await locationByCode(tx, org, body.locationCode);
    const products = await productsByCode(
      tx,
      org,
      body.lines.map((line) => line.productCode),
    );
    const levels = await tx
      .selectFrom('stock_levels')
      .select(['product_id', 'quantity'])
      .where('organization_id', '=', org)
      .where('location_id', '=', location.id)
      .execute();
    const held = new Map(levels.map((level) => [level.product_id, Number(level.quantity)]));
    const differences = body.lines.flatMap((line) => {
      const inService = held.get(products.get(line.productCode)!.id) ?? 0;
      return inService === line.quantity
        ? []
        : [
            {
              productCode: line.productCode,
              dms: line.quantity,
              service: inService,
              difference: new Decimal(line.quantity).minus(inService).toNumber(),
            },
          ];
    });
    await tx
      .updateTable('dms_documents')
      .set({ result: JSON.stringify({ locationCode: location.code, differences }) })
      .where('organization_id', '=', org)
      .where('id', '=', document.id)
      .execute();
    return { table: 'dms_documents', id: document.id };
  },
};
