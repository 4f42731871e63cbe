// Document numbers: gap-free per organisation and document type, taken in the document's transaction.
import test from 'ava';
import { nextDocumentNumber } from '../../server/domain/documents/numbers.js';
import { domainWorld, type DomainWorld } from '../support/domain.js';

let world: DomainWorld;
test.before(async () => { world = await domainWorld('document_numbers'); });
test.after.always(async () => { await world?.close(); });

const take = (organizationId: string, type = 'invoice', prefix = 'INV') => world.post((tx) => nextDocumentNumber(tx, organizationId, type, prefix));

test('numbers start at 1 and follow each other, per document type and per organisation', async (t) => {
  const { organization: a } = await world.organization();
  const { organization: b } = await world.organization();
  t.is(await take(a.id), 'INV-000001');
  t.is(await take(a.id), 'INV-000002');
  t.is(await take(a.id, 'credit_note', 'CN'), 'CN-000001');
  t.is(await take(b.id), 'INV-000001');
  t.is(await take(a.id), 'INV-000003');
});

test('a rolled-back document gives its number back: no gap', async (t) => {
  const { organization } = await world.organization();
  t.is(await take(organization.id), 'INV-000001');
  await t.throwsAsync(world.post(async (tx) => {
    t.is(await nextDocumentNumber(tx, organization.id, 'invoice', 'INV'), 'INV-000002');
    throw new Error('the document was refused after taking its number');
  }));
  t.is(await take(organization.id), 'INV-000002');
});

test('concurrent documents get distinct consecutive numbers', async (t) => {
  const { organization } = await world.organization();
  const numbers = await Promise.all(Array.from({ length: 12 }, () => take(organization.id)));
  t.deepEqual([...numbers].sort(), Array.from({ length: 12 }, (_, i) => `INV-${String(i + 1).padStart(6, '0')}`));
});
