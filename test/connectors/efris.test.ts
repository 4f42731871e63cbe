// The fiscal connector (the real EFRIS client) against the EFRIS simulator over real HTTP, one rule per test: what
// URA's system does with an invoice and a credit note application, and how the client classifies its answers.
import test from 'ava';
import { createEfrisClient } from '../../server/connectors/fiscal/efris-client.js';
import { injectFailure } from '../../server/connectors/simulators/failures.js';
import { efrisDocumentCount, EFRIS_QR_BASE } from '../../server/connectors/simulators/efris/router.js';
import type { FiscalConnector, FiscalCreditNote, FiscalInvoice, FiscalReceipt } from '../../server/connectors/types.js';
import { useSimulators } from '../support/simulators.js';

const sim = useSimulators(test, 'efris');

let tins = 1000200300;
const taxpayer = (timeoutMs?: number) => {
  const tin = String(tins++);
  return { tin, client: createEfrisClient({ baseUrl: `${sim().url}/efris`, tin, deviceNo: 'TCS01', timeoutMs }) };
};
/** Two lines: 2 cases of soda at 30 090 with tax (51 000 + 9 180), 3 of water at 11 800 (30 000 + 5 400). */
const invoice = (referenceNo: string, over: Partial<FiscalInvoice> = {}): FiscalInvoice => ({
  referenceNo,
  issuedAt: new Date().toISOString(),
  currency: 'UGX',
  buyer: { name: 'Mama Shop', tin: null },
  lines: [
    {
      itemCode: '300001',
      itemName: 'Soda 300ml',
      quantity: '2',
      unitPrice: '25500',
      total: '60180',
      tax: '9180',
      taxRate: '0.18',
    },
    {
      itemCode: '300002',
      itemName: 'Water 500ml',
      quantity: '3',
      unitPrice: '10000',
      total: '35400',
      tax: '5400',
      taxRate: '0.18',
    },
  ],
  netAmount: '81000',
  taxAmount: '14580',
  grossAmount: '95580',
  payments: [{ mode: 'cash', amount: '95580' }],
  ...over,
});
const fiscalised = async (client: FiscalConnector, referenceNo: string): Promise<FiscalReceipt> => {
  const result = await client.submitInvoice(invoice(referenceNo));
  if (!result.ok) throw new Error(JSON.stringify(result.failure));
  return result.value;
};
const creditNote = (
  referenceNo: string,
  original: FiscalReceipt,
  over: Partial<FiscalCreditNote> = {},
): FiscalCreditNote => ({
  referenceNo,
  original: { fiscalId: original.fiscalId, fdn: original.fdn },
  reasonCode: '101',
  reason: 'Returned damaged',
  currency: 'UGX',
  lines: [
    {
      itemCode: '300001',
      itemName: 'Soda 300ml',
      quantity: '1',
      unitPrice: '25500',
      total: '30090',
      tax: '4590',
      taxRate: '0.18',
    },
  ],
  netAmount: '25500',
  taxAmount: '4590',
  grossAmount: '30090',
  ...over,
});
const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

test("an invoice is fiscalised: an FDN, a 20-digit verification code, the QR URL naming the FDN and EFRIS's own id", async (t) => {
  const { tin, client } = taxpayer();
  const receipt = await fiscalised(client, 'INV-000001');
  t.regex(receipt.fdn, /^[0-9]{12}$/);
  t.regex(receipt.verificationCode, /^[0-9]{20}$/);
  t.is(receipt.qrCode, `${EFRIS_QR_BASE}${receipt.fdn}`);
  t.regex(receipt.fiscalId, /^[0-9]{19}$/);
  t.is(await efrisDocumentCount(sim().db, tin, 'INV-000001'), 1);
});

test('the same reference again is refused by EFRIS (2253): the client answers the receipt already given, and EFRIS holds one document', async (t) => {
  const { tin, client } = taxpayer();
  const first = await fiscalised(client, 'INV-000002');
  const again = await fiscalised(client, 'INV-000002');
  t.deepEqual({ ...again, fiscalisedAt: '' }, { ...first, fiscalisedAt: '' });
  t.is(await efrisDocumentCount(sim().db, tin, 'INV-000002'), 1);
});

test("figures that do not add up are refused with URA's codes; a payment mode EFRIS cannot record is refused", async (t) => {
  const { client } = taxpayer();
  t.like(await client.submitInvoice(invoice('INV-000003', { taxAmount: '14000' })), {
    ok: false,
    failure: { kind: 'rejected', code: '1344' },
  });
  t.like(await client.submitInvoice(invoice('INV-000004', { payments: [{ mode: 'cash', amount: '90000' }] })), {
    ok: false,
    failure: { kind: 'rejected', code: '2270' },
  });
  t.like(
    await client.submitInvoice(invoice('INV-000005', { payments: [{ mode: 'voucher' as never, amount: '95580' }] })),
    { ok: false, failure: { kind: 'rejected', code: '2263' } },
  );
});

test("a credit note is applied for (102), approved when asked about a second later with its own FDN, and the original's remainder shrinks: a second one beyond it is refused (1434)", async (t) => {
  const { client } = taxpayer();
  const original = await fiscalised(client, 'INV-000006');
  const applied = await client.submitCreditNote(creditNote('CN-000001', original));
  t.like(applied, { ok: true, value: { status: 'submitted' } });
  await sleep(1_100);
  const approved = await client.queryCreditNote('CN-000001');
  t.like(approved, { ok: true, value: { status: 'approved' } });
  if (approved.ok && approved.value.status === 'approved') {
    t.regex(approved.value.receipt.fdn, /^[0-9]{12}$/);
    t.not(approved.value.receipt.fdn, original.fdn);
  }
  const beyond = await client.submitCreditNote(
    creditNote('CN-000002', original, {
      lines: [
        {
          itemCode: '300001',
          itemName: 'Soda 300ml',
          quantity: '2',
          unitPrice: '25500',
          total: '60180',
          tax: '9180',
          taxRate: '0.18',
        },
      ],
      netAmount: '51000',
      taxAmount: '9180',
      grossAmount: '60180',
    }),
  );
  t.like(beyond, { ok: false, failure: { kind: 'rejected', code: '1434' } });
});

test('a credit note whose product is not on exactly one line of the original, or at another unit price, is refused (1480)', async (t) => {
  const { client } = taxpayer();
  const original = await fiscalised(client, 'INV-000007');
  const other = await client.submitCreditNote(
    creditNote('CN-000003', original, {
      lines: [
        {
          itemCode: '999999',
          itemName: 'Juice',
          quantity: '1',
          unitPrice: '10000',
          total: '11800',
          tax: '1800',
          taxRate: '0.18',
        },
      ],
      netAmount: '10000',
      taxAmount: '1800',
      grossAmount: '11800',
    }),
  );
  t.like(other, { ok: false, failure: { kind: 'rejected', code: '1480' } });
  if (!other.ok) t.regex(other.failure.message, /on 0 lines/);
  const price = await client.submitCreditNote(
    creditNote('CN-000004', original, {
      lines: [
        {
          itemCode: '300001',
          itemName: 'Soda 300ml',
          quantity: '1',
          unitPrice: '20000',
          total: '23600',
          tax: '3600',
          taxRate: '0.18',
        },
      ],
      netAmount: '20000',
      taxAmount: '3600',
      grossAmount: '23600',
    }),
  );
  t.like(price, { ok: false, failure: { kind: 'rejected', code: '1480' } });
  const wrongOriginal = await client.submitCreditNote(
    creditNote('CN-000005', { ...original, fiscalId: '1234567890123456789' }),
  );
  t.like(wrongOriginal, { ok: false, failure: { kind: 'rejected', code: '1403' } });
});

test('a pending application is cancelled (104); an approved one cannot be', async (t) => {
  const { client } = taxpayer();
  const original = await fiscalised(client, 'INV-000008');
  const pending = await client.submitCreditNote(creditNote('CN-000006', original));
  if (!pending.ok) return t.fail(JSON.stringify(pending));
  t.true((await client.cancelCreditNote(pending.value.applicationId)).ok);
  t.like(await client.queryCreditNote('CN-000006'), { ok: true, value: { status: 'cancelled' } });
  const second = await client.submitCreditNote(creditNote('CN-000007', original));
  if (!second.ok) return t.fail(JSON.stringify(second));
  await sleep(1_100);
  t.like(await client.queryCreditNote('CN-000007'), { ok: true, value: { status: 'approved' } });
  t.like(await client.cancelCreditNote(second.value.applicationId), {
    ok: false,
    failure: { kind: 'rejected', code: '1480' },
  });
});

test('an outage and an unknown error (99) are temporary, a timeout too; a rejection (2122) is not', async (t) => {
  // A timeout of 1 s against a simulator held 3 s: long enough that a busy machine's ordinary answers come in time.
  const { tin, client } = taxpayer(1_000);
  await injectFailure(sim().db, 'fiscal', tin, 'outage', 1);
  await injectFailure(sim().db, 'fiscal', tin, 'unknown_error', 1);
  await injectFailure(sim().db, 'fiscal', tin, 'rejected', 1);
  await injectFailure(sim().db, 'fiscal', tin, 'slow', 1, 3_000);
  t.like(await client.submitInvoice(invoice('INV-000009')), { ok: false, failure: { kind: 'temporary' } });
  t.like(await client.submitInvoice(invoice('INV-000009')), { ok: false, failure: { kind: 'temporary' } });
  t.like(await client.submitInvoice(invoice('INV-000009')), { ok: false, failure: { kind: 'rejected', code: '2122' } });
  t.like(await client.submitInvoice(invoice('INV-000009')), { ok: false, failure: { kind: 'temporary' } });
  await sleep(3_000);
  t.true((await client.submitInvoice(invoice('INV-000009'))).ok);
  t.is(await efrisDocumentCount(sim().db, tin, 'INV-000009'), 1);
});

test("trigger values in the buyer's name: [sim:rejected] is 2122; [sim:outage] fails the first upload of a reference only", async (t) => {
  const { tin, client } = taxpayer();
  t.like(await client.submitInvoice(invoice('INV-000010', { buyer: { name: 'Shop [sim:rejected]', tin: null } })), {
    ok: false,
    failure: { kind: 'rejected', code: '2122' },
  });
  t.like(await client.submitInvoice(invoice('INV-000011', { buyer: { name: 'Shop [sim:outage]', tin: null } })), {
    ok: false,
    failure: { kind: 'temporary' },
  });
  t.like(await client.submitInvoice(invoice('INV-000011', { buyer: { name: 'Shop [sim:outage]', tin: null } })), {
    ok: true,
  });
  t.is(await efrisDocumentCount(sim().db, tin, 'INV-000011'), 1);
});

test('readReceipt: the fiscalised document under an FDN as EFRIS holds it (T108), its verification code and id; null for an FDN it does not hold', async (t) => {
  const { client } = taxpayer();
  const receipt = await fiscalised(client, 'INV-000301');
  const read = await client.readReceipt(receipt.fdn);
  t.true(read.ok);
  if (read.ok)
    t.like(read.value, {
      fdn: receipt.fdn,
      verificationCode: receipt.verificationCode,
      fiscalId: receipt.fiscalId,
      qrCode: receipt.qrCode,
    });
  t.deepEqual(await client.readReceipt('999999999999'), { ok: true, value: null });
});
