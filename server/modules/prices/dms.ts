// Prices per price group from the DMS, mapped onto this module's setPrices (declared in its manifest's dmsHandlers,
// written with the DMS's kit).
import { setPrices } from './service.js';
import type { BodyOf } from '../dms/canonical.js';
import { productsByCode } from '../dms/handlers/lookup.js';
import type { DocumentHandler } from '../dms/handlers/types.js';

export const price: DocumentHandler = {
  async apply(tx, context, document) {
    const body = document.document.body as BodyOf<'DmsPriceDocument'>;
    await productsByCode(
      tx,
      context.actor.organization.id,
      body.prices.map((p) => p.productCode),
    );
    const currency = context.actor.organization.baseCurrency;
    const saved = await setPrices(
      tx,
      context.actor,
      body.prices.map((p) => ({
        productCode: p.productCode,
        priceGroup: body.priceGroup,
        unit: p.unit,
        unitPrice: { amount: p.amount, currency },
        validFrom: body.validFrom ?? document.date,
      })),
    );
    return { table: 'prices', id: saved[0]!.id, provides: [`price_group:${body.priceGroup}`] };
  },
};
