// The console's tests: a distributor with DMS documents in every state the console shows (posted master data, a
// customer with a phone and tax ID, an invoice rejected R01, one waiting for a customer not received, one rejected
// R03 for a salesman linked to no member), a notification, its owner made by the CLI (`admin console owner`) and a clerk
// (role none) with a password; and a small browser-less client that keeps the session cookie.
import pino from 'pino';
import { createOrganization } from '../../server/platform/access/organizations.js';
import { addMember } from '../../server/platform/access/members.js';
import { actingOrganization, getOrganization } from '../../server/platform/access/organizations.js';
import { operatorActor } from '../../server/platform/access/actor.js';
import { inTransaction, type Db } from '../../server/platform/database/transaction.js';
import { addConnection } from '../../server/modules/dms/connections.js';
import { ingestBatch } from '../../server/modules/dms/ingest.js';
import { processDocuments } from '../../server/modules/dms/process.js';
import { reconcileDay } from '../../server/modules/dms/reconciliation.js';
import { salespeople } from '../../server/modules/salespeople/service.js';
import { notify } from '../../server/platform/webhooks/notifications.js';
import { sql } from 'kysely';
import {
  accountingConnectorOf,
  fiscalConnectorOf,
  readConnection,
  setConnection,
  SIMULATOR_BASE_URL,
  type ConnectorSettings,
} from '../../server/connectors/connections.js';
import type {
  AccountingConnector,
  AccountingInvoice,
  AccountingRef,
  FiscalInvoice,
  FiscalReceipt,
} from '../../server/connectors/types.js';
import { runCliJson } from '../support/cli.js';
import { DAY, dmsSetUp, doc, DISTRIBUTOR, masterData, saleInvoice } from '../support/dms.js';

export interface Distributor {
  organizationId: string;
  owner: { memberId: string; email: string; password: string };
  clerk: { memberId: string; email: string; password: string };
  /** A member who manages settings (no console password). */
  accountantId: string;
  documents: { customer: string; rejectedR01: string; waiting: string; rejectedR03: string };
}

export async function seedDistributor(db: Db, databaseUrl: string): Promise<Distributor> {
  const organization = await createOrganization(db, {
    name: 'Kampala Beverages Ltd',
    modules: ['delivery', 'field-sales'],
  });
  const org = organization.id;
  const operator = operatorActor(actingOrganization(await getOrganization(db, org)), 'console test');
  const connection = await inTransaction(db, async (tx) => {
    await dmsSetUp(tx, operator);
    // A second salesman, linked to no member: his van documents are rejected R03 until he is.
    await salespeople.create(tx, operator, { salesmanCode: 'SM02', name: 'Mukasa John' });
    return addConnection(tx, org, 'canonical', { distributorCode: DISTRIBUTOR, synchronous: false });
  });
  const documents = [
    masterData.soda,
    masterData.prices,
    masterData.salesman(),
    doc(
      'customer',
      'UG0000001',
      {
        name: 'Kisenyi Corner <Shop>',
        channel: 'retail',
        routeCode: 'R01',
        phone: '+256700123456',
        taxId: '1000123456',
      },
      { status: 'active' },
    ),
    saleInvoice('CSR01000001', undefined, 1),
    saleInvoice('CSR01000002', 'UG0000099', 1),
    { ...saleInvoice('CSR01000003', 'UG0000001', 1), salesmanCode: 'SM02' },
  ];
  const stored = await inTransaction(db, (tx) => ingestBatch(tx, connection, documents));
  const ids = stored.flags.map((flag) => flag.id);
  const runner = {
    db,
    settings: { secretKey: Buffer.alloc(32, 7), simulatorUrl: null },
    logger: pino({ level: 'silent' }),
  };
  for (let round = 0; round < 10; round += 1) {
    const due = await db
      .selectFrom('dms_documents')
      .select('id')
      .where('organization_id', '=', org)
      .where('state', '=', 'received')
      .where('next_attempt_at', '<=', sql<Date>`now()`)
      .orderBy('received_at')
      .orderBy('position')
      .execute();
    if (due.length === 0) break;
    await processDocuments(
      runner,
      org,
      due.map((row) => row.id),
    );
  }
  const owner = await runCliJson<{ memberId: string; email: string; password: string }>(
    ['console', 'owner', '--org', org, '--email', 'Grace@Example.com', '--name', 'Grace Namuli'],
    { DATABASE_URL: databaseUrl },
  );
  // A second member who receives the notifications, to show that one member's reading is not another's.
  const accountant = await addMember(db, org, {
    name: 'Sarah Achieng',
    email: 'sarah@example.com',
    role: 'manage-settings',
  });
  await notify(db, org, 'dms.reconciliation', "Salesman SM01's day 2026-11-25 reconciled with 2 differences.");
  // SM01's day reconciled (no route settlement, documents not posted): what the daily job does after the cut-off.
  await reconcileDay(db, connection, 'SM01', DAY);
  await notify(
    db,
    org,
    'webhook.disabled',
    'Webhook endpoint https://erp.example.com/hooks was turned off after 5 days of failures.',
  );
  const clerkMember = await addMember(db, org, { name: 'Peter Ssali', email: 'peter@example.com', role: 'none' });
  const clerk = await runCliJson<{ memberId: string; email: string; password: string }>(
    ['console', 'password', clerkMember.id, '--org', org],
    { DATABASE_URL: databaseUrl },
  );
  return {
    organizationId: org,
    owner: { memberId: owner.memberId, email: owner.email, password: owner.password },
    clerk: { memberId: clerk.memberId, email: clerk.email, password: clerk.password },
    accountantId: accountant.id,
    documents: { customer: ids[3]!, rejectedR01: ids[4]!, waiting: ids[5]!, rejectedR03: ids[6]! },
  };
}

/**
 * Invoice CS-000101 posted to QuickBooks and fiscalised by EFRIS (the simulators the service runs, through the real
 * connectors), with the service's records of those postings as the posting jobs write them (xpo_console101a and
 * xpo_console101f), one not yet sent (xpo_console102a) and one whose QuickBooks document does not exist (xpo_console103a).
 */
export async function postedThere(
  db: Db,
  settings: ConnectorSettings,
  org: string,
): Promise<{ ref: AccountingRef; receipt: FiscalReceipt; quickBooks: AccountingConnector }> {
  await inTransaction(db, async (tx) => {
    await setConnection(tx, org, 'accounting', { baseUrl: SIMULATOR_BASE_URL, account: '4620816365' }, null);
    await setConnection(
      tx,
      org,
      'fiscal',
      { baseUrl: SIMULATOR_BASE_URL, account: '1000123456', deviceNo: 'TCS01' },
      null,
    );
  });
  const quickBooks = accountingConnectorOf((await readConnection(db, org, 'accounting'))!, settings);
  const efris = fiscalConnectorOf((await readConnection(db, org, 'fiscal'))!, settings);
  const invoice: AccountingInvoice = {
    docNumber: 'CS-000101',
    txnDate: '2026-11-24',
    currency: 'UGX',
    customer: { id: 'cus_1', name: 'Mama Shop' },
    lines: [
      {
        itemId: 'prd_1',
        description: 'Soda 300ml',
        quantity: '2',
        unitPrice: '25500',
        amount: '50000',
        taxAmount: '9000',
      },
    ],
    taxTotal: '9000',
    total: '59000',
  };
  const ref = await quickBooks.postInvoice(`req-console-101-${org}`, invoice);
  if (!ref.ok) throw new Error(JSON.stringify(ref.failure));
  const fiscalInvoice: FiscalInvoice = {
    referenceNo: 'CS-000101',
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
    ],
    netAmount: '51000',
    taxAmount: '9180',
    grossAmount: '60180',
    payments: [{ mode: 'cash', amount: '60180' }],
  };
  const receipt = await efris.submitInvoice(fiscalInvoice);
  if (!receipt.ok) throw new Error(JSON.stringify(receipt.failure));
  const posting = (
    id: string,
    system: string,
    status: string,
    externalType: string | null,
    externalRef: string | null,
  ) => ({
    organization_id: org,
    id,
    document_type: 'invoice',
    document_id: 'inv_console101',
    document_number: 'CS-000101',
    system,
    operation: 'post',
    status,
    request_id: `req_${id}`,
    attempts: 1,
    external_type: externalType,
    external_ref: externalRef,
    next_attempt_at: new Date(Date.now() + 3_600_000), // not due: the dispatcher leaves them alone
  });
  await db
    .insertInto('external_postings')
    .values([
      posting('xpo_console101a', 'accounting', 'posted', 'Invoice', ref.value.id),
      posting('xpo_console101f', 'fiscal', 'posted', null, receipt.value.fdn),
      {
        ...posting('xpo_console102a', 'accounting', 'pending', null, null),
        document_id: 'inv_console102',
        document_number: 'CS-000102',
      },
      {
        ...posting('xpo_console103a', 'accounting', 'posted', 'Invoice', '99999999'),
        document_id: 'inv_console103',
        document_number: 'CS-000103',
      },
    ])
    .execute();
  return { ref: ref.value, receipt: receipt.value, quickBooks };
}

export interface ConsoleResponse {
  status: number;
  headers: Headers;
  text: string;
  location: string | null;
}

/** A browser-less client of the console: keeps its cookies, follows no redirect, reads CSRF tokens from forms. */
export class ConsoleClient {
  readonly cookies = new Map<string, string>();
  constructor(readonly baseUrl: string) {}

  async request(
    method: 'GET' | 'POST',
    path: string,
    form?: Record<string, string | string[]>,
  ): Promise<ConsoleResponse> {
    const headers: Record<string, string> = {};
    if (this.cookies.size > 0) headers.cookie = [...this.cookies].map(([name, value]) => `${name}=${value}`).join('; ');
    let body: string | undefined;
    if (form) {
      const params = new URLSearchParams();
      for (const [name, value] of Object.entries(form))
        for (const v of Array.isArray(value) ? value : [value]) params.append(name, v);
      body = params.toString();
      headers['content-type'] = 'application/x-www-form-urlencoded';
    }
    const response = await fetch(this.baseUrl + path, { method, headers, body, redirect: 'manual' });
    for (const line of response.headers.getSetCookie()) {
      const [pair] = line.split(';');
      const at = pair!.indexOf('=');
      const name = pair!.slice(0, at);
      const value = pair!.slice(at + 1);
      if (value === '' || /Max-Age=0/.test(line)) this.cookies.delete(name);
      else this.cookies.set(name, value);
    }
    return {
      status: response.status,
      headers: response.headers,
      text: await response.text(),
      location: response.headers.get('location'),
    };
  }

  get(path: string) {
    return this.request('GET', path);
  }

  /** The CSRF token of the first form on the page. */
  static csrf(text: string): string {
    const match = /name="_csrf" value="([^"]+)"/.exec(text);
    if (!match) throw new Error(`no CSRF token on the page:\n${text.slice(0, 500)}`);
    return match[1]!;
  }

  async signIn(email: string, password: string): Promise<ConsoleResponse> {
    const form = await this.get('/console/sign-in');
    return this.request('POST', '/console/sign-in', { _csrf: ConsoleClient.csrf(form.text), email, password });
  }

  /** A POST with the session's CSRF token, read from the page given. */
  async post(path: string, fromPage: string, form: Record<string, string | string[]> = {}): Promise<ConsoleResponse> {
    const page = await this.get(fromPage);
    return this.request('POST', path, { _csrf: ConsoleClient.csrf(page.text), ...form });
  }
}
