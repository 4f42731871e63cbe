// Products from the DMS (by code), mapped onto this module's create and change (the same rules and events as the
// REST upsert; declared in its manifest's dmsHandlers, written with the DMS's kit). A new version updates it.
import type { components } from '../../../generated/api-types.js';
import { products } from './service.js';
import type { BodyOf } from '../dms/canonical.js';
import { waitKeys } from '../dms/reasons.js';
import { productsByCode } from '../dms/handlers/lookup.js';
import type { DocumentHandler } from '../dms/handlers/types.js';
import { activeOf, idByCode } from '../dms/handlers/master-data.js';

type ProductFields = components['schemas']['ProductFields'];

export const product: DocumentHandler = {
  async apply(tx, context, document) {
    const org = context.actor.organization.id;
    const body = document.document.body as BodyOf<'DmsProductDocument'>;
    const fields: ProductFields = {
      productCode: document.number,
      name: body.name,
      status: activeOf(document.status) ? 'active' : 'inactive',
      packSize: body.packSize,
      taxRate: Number(body.taxRate),
      sellingUnits: body.sellingUnits ?? ['case', 'bottle'],
      ...(body.brand !== undefined ? { brand: body.brand } : {}),
      ...(body.category !== undefined ? { category: body.category } : {}),
      ...(body.isEmpty !== undefined ? { isEmpty: body.isEmpty } : {}),
      ...(body.tracksStock !== undefined ? { tracksStock: body.tracksStock } : {}),
      ...(body.depositAmount !== undefined
        ? { depositPrice: { amount: body.depositAmount, currency: context.actor.organization.baseCurrency } }
        : {}),
      ...(body.empties !== undefined ? { empties: body.empties } : {}),
    };
    // The empties it carries must have been received (each is a product of its own).
    await productsByCode(
      tx,
      org,
      (body.empties ?? []).map((empty) => empty.productCode),
    );
    const existing = await idByCode(tx, org, 'products', 'product_code', document.number);
    const saved = existing
      ? await products.change(tx, context.actor, existing, fields)
      : await products.create(tx, context.actor, fields, { dms: document.number });
    return { table: 'products', id: (saved as { id: string }).id, provides: [waitKeys.product(document.number)] };
  },
};
