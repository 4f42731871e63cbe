// One trip for an organisation whose other records come from the description's examples (the contract command and
// the fuzz pass send them): the API only reads trips, so the examples' trip ids can stand for a trip only when one
// is there already. It is opened through the trips module; its van, warehouse, route and salesperson use codes no
// example names (FZ…), so the examples' own writes never meet them. The organisation needs the delivery module.
import type pg from 'pg';
import { operatorActor } from '../../server/platform/access/actor.js';
import { locations } from '../../server/modules/locations/service.js';
import { routes } from '../../server/modules/routes/service.js';
import { salespeople } from '../../server/modules/salespeople/service.js';
import { openTrip } from '../../server/modules/trips/documents.js';
import { actingOrganization, getOrganization } from '../../server/platform/access/organizations.js';
import { kyselyOver } from '../../server/platform/database/database.js';
import { inTransaction } from '../../server/platform/database/transaction.js';

export async function openOneTrip(pool: pg.Pool, organizationId: string): Promise<string> {
  const db = kyselyOver(pool);
  const actor = operatorActor(actingOrganization(await getOrganization(db, organizationId)), 'test trip');
  return inTransaction(db, async (tx) => {
    const route = await routes.create(tx, actor, { routeCode: 'FZ1', name: 'Test route' });
    const salesperson = await salespeople.create(tx, actor, {
      salesmanCode: 'FZSM1',
      name: 'Test salesman',
      routeId: route.id,
    });
    const van = await locations.create(tx, actor, { code: 'V_FZ1-G', name: 'Test van', routeId: route.id });
    const warehouse = await locations.create(tx, actor, { code: 'MFZ1', name: 'Test warehouse' });
    const trip = await openTrip(tx, actor, {
      vanLocationId: van.id,
      warehouseLocationId: warehouse.id,
      businessDate: '2026-11-23',
      routeId: route.id,
      salespersonId: salesperson.id,
    });
    return trip.id;
  });
}
