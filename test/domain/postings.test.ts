// What a document owes the external systems, decided in its own transaction (no worker runs here, so nothing is
// sent): a posted document queues one posting per connected system and its blocks start pending; without a connection
// nothing is queued; a reversal before anything was sent cancels the postings; once a posting was sent the reversal
// waits (409); once the accounting system holds it the reversal is refused naming what to void by hand, and goes
// through, queueing its void there, once the system was asked and does not hold it; a fiscal submission already
// made is never withdrawn.
import test from 'ava';
import { ApiError } from '../../server/platform/errors/api-error.js';
import { setConnection, SIMULATOR_BASE_URL } from '../../server/connectors/connections.js';
import { customers } from '../../server/modules/customers/service.js';
import { locations } from '../../server/modules/locations/service.js';
import { products } from '../../server/modules/products/service.js';
import { postStockAdjustment } from '../../server/modules/stock/documents.js';
import { createInvoice, voidInvoice } from '../../server/modules/invoices/documents.js';
import { recordPayment, reversePayment } from '../../server/modules/payments/documents.js';
import { cancelCreditNote, issueCreditNote } from '../../server/modules/credit-notes/documents.js';
import type { OperatorActor } from '../../server/platform/access/actor.js';
import { domainWorld, type DomainWorld } from '../support/domain.js';

let world: DomainWorld;
test.before(async () => {
  world = await domainWorld('postings');
});
test.after.always(async () => {
  await world?.close();
});

interface Shop {
  organizationId: string;
  operator: OperatorActor;
  soda: string;
  warehouse: string;
  customer: string;
}

async function shop(connect: { accounting?: boolean; fiscal?: boolean }): Promise<Shop> {
  const { organization, operator } = await world.organization();
  return world.post(async (tx) => {
    const soda = await products.create(tx, operator, {
      productCode: '300001',
      name: 'Soda 300ml',
      packSize: 24,
      sellingUnits: ['case'],
      taxRate: 18,
    });
    const warehouse = await locations.create(tx, operator, { code: 'M01', name: 'Main' });
    const customer = await customers.create(tx, operator, {
      outletCode: 'UG0000001',
      name: 'Mama Shop',
      channel: 'retail',
    });
    await postStockAdjustment(tx, operator, {
      reasonCode: 'OPENING',
      lines: [{ productId: soda.id, locationId: warehouse.id, unit: 'case', quantity: 10, unitCost: '20000' }],
    });
    if (connect.accounting)
      await setConnection(
        tx,
        organization.id,
        'accounting',
        { baseUrl: SIMULATOR_BASE_URL, account: `realm-${organization.id}` },
        null,
      );
    if (connect.fiscal)
      await setConnection(
        tx,
        organization.id,
        'fiscal',
        { baseUrl: SIMULATOR_BASE_URL, account: `tin-${organization.id}` },
        null,
      );
    return { organizationId: organization.id, operator, soda: soda.id, warehouse: warehouse.id, customer: customer.id };
  });
}

const sell = (s: Shop) =>
  world.post((tx) =>
    createInvoice(tx, s.operator, {
      customerId: s.customer,
      locationId: s.warehouse,
      issueDate: '2026-11-24',
      currency: 'UGX',
      lines: [{ productId: s.soda, unit: 'case', quantity: 1, unitPrice: '25000' }],
    }),
  );
const postings = (documentId: string) =>
  world.db
    .selectFrom('external_postings')
    .selectAll()
    .where('document_id', '=', documentId)
    .orderBy('system')
    .orderBy('operation')
    .execute();
const blocksOf = (table: 'invoices' | 'payments' | 'credit_notes', id: string) =>
  world.db
    .selectFrom(table)
    .select(['posting_status', 'posting_reason'])
    .where('id', '=', id)
    .executeTakeFirstOrThrow();
const invoiceFiscal = (id: string) =>
  world.db.selectFrom('invoices').select(['fiscal_status']).where('id', '=', id).executeTakeFirstOrThrow();
/** As the posting job leaves a row: sent (last_attempt_at), then posted or still under way. */
const markSent = (id: string, status: 'pending' | 'posted', ref?: string) =>
  world.db
    .updateTable('external_postings')
    .set({
      status,
      attempts: 1,
      last_attempt_at: new Date(),
      external_type: ref ? 'Invoice' : null,
      external_ref: ref ?? null,
    })
    .where('document_id', '=', id)
    .where('system', '=', 'accounting')
    .execute();

async function refusal(t: { fail(message: string): void }, fn: () => Promise<unknown>): Promise<ApiError> {
  try {
    await fn();
  } catch (error) {
    if (error instanceof ApiError) return error;
    throw error;
  }
  t.fail('the reversal was not refused');
  throw new Error('unreachable');
}

test('an invoice posted with both connections queues one posting per system, each with its own request id, and its blocks start pending', async (t) => {
  const s = await shop({ accounting: true, fiscal: true });
  const sold = await sell(s);
  const rows = await postings(sold.id);
  t.deepEqual(
    rows.map((r) => [r.system, r.status, r.document_number, r.attempts]),
    [
      ['accounting', 'pending', sold.number, 0],
      ['fiscal', 'pending', sold.number, 0],
    ],
  );
  t.not(rows[0]!.request_id, rows[1]!.request_id);
  t.like(await blocksOf('invoices', sold.id), { posting_status: 'pending', posting_reason: null });
  t.like(await invoiceFiscal(sold.id), { fiscal_status: 'pending' });
});

test('a receipt queues only its accounting posting (receipts are not fiscal documents); a disabled connection queues nothing', async (t) => {
  const s = await shop({ accounting: true, fiscal: true });
  const sold = await sell(s);
  const paid = await world.post((tx) =>
    recordPayment(tx, s.operator, {
      customerId: s.customer,
      method: 'cash',
      amount: { amount: '29500', currency: 'UGX' },
      paymentDate: '2026-11-24',
      allocations: [{ invoiceId: sold.id, amount: { amount: '29500', currency: 'UGX' } }],
    }),
  );
  t.deepEqual(
    (await postings(paid.ids[0]!)).map((r) => r.system),
    ['accounting'],
  );
  await world.post((tx) => setConnection(tx, s.organizationId, 'accounting', { enabled: false }, null));
  const later = await sell(s);
  t.deepEqual(
    (await postings(later.id)).map((r) => r.system),
    ['fiscal'],
  );
  t.like(await blocksOf('invoices', later.id), { posting_status: 'not_applicable' });
});

test('a void before anything was sent cancels both postings: nothing reached either system', async (t) => {
  const s = await shop({ accounting: true, fiscal: true });
  const sold = await sell(s);
  await world.post((tx) => voidInvoice(tx, s.operator, sold.id, 'wrong customer'));
  t.deepEqual(
    (await postings(sold.id)).map((r) => [r.system, r.status]),
    [
      ['accounting', 'cancelled'],
      ['fiscal', 'cancelled'],
    ],
  );
  const block = await blocksOf('invoices', sold.id);
  t.is(block.posting_status, 'not_applicable');
  t.regex(block.posting_reason!, /Voided before it was posted/);
  t.like(await invoiceFiscal(sold.id), { fiscal_status: 'cancelled' });
});

test('a reversal while the accounting posting is under way waits (409 invalid_state) and changes nothing', async (t) => {
  const s = await shop({ accounting: true });
  const sold = await sell(s);
  await markSent(sold.id, 'pending');
  const error = await refusal(t, () => world.post((tx) => voidInvoice(tx, s.operator, sold.id, 'wrong customer')));
  t.is(error.code, 'invalid_state');
  t.is(error.reason, 'posting_under_way', 'the code the DMS waits on (dms/refusals.ts), not the words');
  t.regex(error.message, /under way/);
  t.like(await world.db.selectFrom('invoices').select('status').where('id', '=', sold.id).executeTakeFirstOrThrow(), {
    status: 'open',
  });
});

test("waitWhilePending (the DMS's bounced cheque): a posting not sent yet makes the reversal wait, naming the document, instead of being cancelled", async (t) => {
  const s = await shop({ accounting: true });
  const sold = await sell(s);
  const paid = await world.post((tx) =>
    recordPayment(tx, s.operator, {
      customerId: s.customer,
      method: 'cheque',
      reference: '2',
      amount: { amount: '10000', currency: 'UGX' },
      paymentDate: '2026-11-24',
      allocations: [{ invoiceId: sold.id, amount: { amount: '10000', currency: 'UGX' } }],
    }),
  );
  const error = await refusal(t, () =>
    world.post((tx) => reversePayment(tx, s.operator, paid.ids[0]!, 'bounced', { waitWhilePending: true })),
  );
  t.like(error, { code: 'invalid_state', reason: 'posting_under_way', subject: { type: 'payment', id: paid.ids[0]! } });
  t.deepEqual(
    (await postings(paid.ids[0]!)).map((r) => r.status),
    ['pending'],
    'nothing cancelled',
  );
  t.like(
    await world.db.selectFrom('payments').select('status').where('id', '=', paid.ids[0]!).executeTakeFirstOrThrow(),
    { status: 'posted' },
  );
});

test('a posted document is reversed in the service only once the accounting system was found not holding it: unasked, 409 naming what to void there by hand; asked, its void there is queued and its block stays posted until that runs', async (t) => {
  const s = await shop({ accounting: true });
  const sold = await sell(s);
  await markSent(sold.id, 'posted', '148');
  const error = await refusal(t, () => world.post((tx) => voidInvoice(tx, s.operator, sold.id, 'wrong customer')));
  t.is(error.code, 'invalid_state');
  t.is(error.reason, 'held_by_accounting');
  t.true(error.message.includes('Void Invoice 148 in the accounting system by hand first'), error.message);

  await world.db
    .updateTable('external_postings')
    .set({ reversible_at: new Date() })
    .where('document_id', '=', sold.id)
    .execute();
  const before = await blocksOf('invoices', sold.id);
  await world.post((tx) => voidInvoice(tx, s.operator, sold.id, 'wrong customer'));
  t.deepEqual(
    (await postings(sold.id)).map((r) => [r.operation, r.status, r.external_type, r.external_ref]),
    [
      ['post', 'posted', 'Invoice', '148'],
      ['reverse', 'pending', 'Invoice', '148'],
    ],
  );
  t.deepEqual(await blocksOf('invoices', sold.id), before, 'the block moves when the void there is done, not before');
});

test('a payment reversed and a credit note cancelled before their postings were sent: both postings cancelled, blocks not_applicable', async (t) => {
  const s = await shop({ accounting: true });
  const sold = await sell(s);
  const paid = await world.post((tx) =>
    recordPayment(tx, s.operator, {
      customerId: s.customer,
      method: 'cheque',
      reference: '1',
      amount: { amount: '10000', currency: 'UGX' },
      paymentDate: '2026-11-24',
      allocations: [{ invoiceId: sold.id, amount: { amount: '10000', currency: 'UGX' } }],
    }),
  );
  await world.post((tx) => reversePayment(tx, s.operator, paid.ids[0]!, 'bounced'));
  t.deepEqual(
    (await postings(paid.ids[0]!)).map((r) => r.status),
    ['cancelled'],
  );
  t.like(await blocksOf('payments', paid.ids[0]!), { posting_status: 'not_applicable' });

  const note = await world.post((tx) =>
    issueCreditNote(tx, s.operator, {
      customer: { id: s.customer },
      invoiceId: sold.id,
      reason: 'price',
      lines: [{ type: 'adjustment', description: 'Price difference', quantity: 1, unitPrice: '1000' }],
    }),
  );
  await world.post((tx) => cancelCreditNote(tx, s.operator, note.id, 'entered twice'));
  t.deepEqual(
    (await postings(note.id)).map((r) => r.status),
    ['cancelled'],
  );
  t.like(await blocksOf('credit_notes', note.id), { posting_status: 'not_applicable' });
});

test('an invoice already submitted to the fiscal system is never voided: 409 saying to correct it with a credit note', async (t) => {
  const s = await shop({ fiscal: true });
  const sold = await sell(s);
  await world.db
    .updateTable('external_postings')
    .set({ status: 'posted', attempts: 1, last_attempt_at: new Date(), external_ref: '322000150744' })
    .where('document_id', '=', sold.id)
    .where('system', '=', 'fiscal')
    .execute();
  const error = await refusal(t, () => world.post((tx) => voidInvoice(tx, s.operator, sold.id, 'wrong customer')));
  t.is(error.code, 'invalid_state');
  t.is(error.reason, 'fiscal_submitted');
  t.regex(error.message, /credit note/);
});

test('with no connection at all nothing is queued: the block says why, and the posting ids of a connected one are xpo_ ids', async (t) => {
  const bare = await shop({});
  const sold = await sell(bare);
  t.deepEqual(await postings(sold.id), []);
  t.like(await blocksOf('invoices', sold.id), {
    posting_status: 'not_applicable',
    posting_reason: 'The organisation has no accounting connection: nothing is posted to an accounting system.',
  });
  t.like(await invoiceFiscal(sold.id), { fiscal_status: null });
  const connected = await shop({ accounting: true });
  const rows = await postings((await sell(connected)).id);
  t.regex(rows[0]!.id, /^xpo_[0-9A-Z]{26}$/);
  t.is(rows[0]!.request_id, rows[0]!.id);
});

test('a credit note with a fiscal connection queues its fiscal submission too; a settlement never does', async (t) => {
  const s = await shop({ accounting: true, fiscal: true });
  const sold = await sell(s);
  const note = await world.post((tx) =>
    issueCreditNote(tx, s.operator, {
      customer: { id: s.customer },
      invoiceId: sold.id,
      reason: 'price',
      lines: [{ type: 'adjustment', description: 'Price difference', quantity: 1, unitPrice: '1000' }],
    }),
  );
  t.deepEqual(
    (await postings(note.id)).map((r) => r.system),
    ['accounting', 'fiscal'],
  );
});

test('the reasons a cancelled posting keeps name the reversal: "Voided before it was posted." and "Voided before it was submitted to the fiscal system."', async (t) => {
  const s = await shop({ accounting: true, fiscal: true });
  const sold = await sell(s);
  await world.post((tx) => voidInvoice(tx, s.operator, sold.id, 'wrong customer'));
  t.deepEqual(
    (await postings(sold.id)).map((r) => r.reason),
    ['Voided before it was posted.', 'Voided before it was submitted to the fiscal system.'],
  );
  t.is(
    (await blocksOf('invoices', sold.id)).posting_reason,
    'Voided before it was posted: nothing was sent to the accounting system.',
  );
});

test('a failed posting left nothing in either system: the void goes through and leaves the failed postings as they were', async (t) => {
  const s = await shop({ accounting: true, fiscal: true });
  const sold = await sell(s);
  await world.db
    .updateTable('external_postings')
    .set({ status: 'failed', attempts: 8, last_attempt_at: new Date(), reason: 'refused' })
    .where('document_id', '=', sold.id)
    .execute();
  await world.post((tx) => voidInvoice(tx, s.operator, sold.id, 'wrong customer'));
  t.deepEqual(
    (await postings(sold.id)).map((r) => [r.system, r.operation, r.status, r.reason]),
    [
      ['accounting', 'post', 'failed', 'refused'],
      ['fiscal', 'post', 'failed', 'refused'],
    ],
  );
  t.like(await world.db.selectFrom('invoices').select('status').where('id', '=', sold.id).executeTakeFirstOrThrow(), {
    status: 'void',
  });
});

test('a fiscal submission under way (a credit note application waiting for approval) refuses the reversal, naming the application', async (t) => {
  const s = await shop({ fiscal: true });
  const sold = await sell(s);
  await world.db
    .updateTable('external_postings')
    .set({ attempts: 0, last_attempt_at: new Date(), external_ref: '21000000000042' })
    .where('document_id', '=', sold.id)
    .where('system', '=', 'fiscal')
    .execute();
  const error = await refusal(t, () => world.post((tx) => voidInvoice(tx, s.operator, sold.id, 'wrong customer')));
  t.is(
    error.detail,
    `${sold.number} has been submitted to the fiscal system (21000000000042): it cannot be withdrawn from the service. Correct it with a credit note instead.`,
  );
});

test('the refusals name the document, the attempts and what to do: "under way (1 attempt(s): ...)" and "... the document is voided."', async (t) => {
  const s = await shop({ accounting: true });
  const sold = await sell(s);
  await world.db
    .updateTable('external_postings')
    .set({ attempts: 1, last_attempt_at: new Date(), reason: 'Attempt 1 of 8: QuickBooks answered 503' })
    .where('document_id', '=', sold.id)
    .execute();
  const waiting = await refusal(t, () => world.post((tx) => voidInvoice(tx, s.operator, sold.id, 'wrong customer')));
  t.is(
    waiting.detail,
    `The accounting posting of ${sold.number} is under way (1 attempt(s): Attempt 1 of 8: QuickBooks answered 503); the reversal waits for it. Retry when its posting.status is posted or failed.`,
  );
  await markSent(sold.id, 'posted', '148');
  const held = await refusal(t, () => world.post((tx) => voidInvoice(tx, s.operator, sold.id, 'wrong customer')));
  t.true(
    held.detail.startsWith(
      `${sold.number} is held by the accounting system as Invoice 148 (deposited, reconciled or in closed books there)`,
    ),
    held.detail,
  );
  t.true(held.detail.endsWith('the document is voided.'), held.detail);
});
