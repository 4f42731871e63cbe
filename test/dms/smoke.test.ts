import test from 'ava';
import { domainWorld, type DomainWorld } from '../support/domain.js';
import { dmsShop, masterData, saleInvoice, stockDay } from '../support/dms.js';

let world: DomainWorld;
test.before(async () => {
  world = await domainWorld('dms-smoke');
});
test.after.always(async () => {
  await world?.close();
});

test('a day: master data, stock, an invoice', async (t) => {
  const shop = await dmsShop(world);
  const flags = await shop.push(
    masterData.soda,
    masterData.prices,
    masterData.customer('UG0000001'),
    masterData.salesman(),
    ...stockDay(10),
    saleInvoice('CSR01000001', 'UG0000001', 2),
  );
  t.log(JSON.stringify(flags, null, 1));
  t.deepEqual(
    flags.map((f) => f.state),
    ['posted', 'posted', 'posted', 'posted', 'posted', 'posted', 'posted'],
  );
});
