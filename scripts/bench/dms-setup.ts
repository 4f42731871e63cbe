// What the DMS benches (dms.ts, fairness.ts) share: a distributor set up as the README tells an operator to set one
// up (locations, the van's salesman SM01 linked to a member, accounts and the supplier's vendor: R03 otherwise, per
// decisions 0033/0034; a canonical connection; a key without limits), its master data and stock pushed and posted,
// and the waits on its documents.
import { operatorActor, type Actor } from '../../server/platform/access/actor.js';
import { inTransaction, type Db, type Tx } from '../../server/platform/database/transaction.js';
import { actingOrganization, createOrganization } from '../../server/platform/access/organizations.js';
import { createApiKey } from '../../server/platform/access/api-keys.js';
import { locations } from '../../server/modules/locations/service.js';
import { addConnection } from '../../server/modules/dms/connections.js';
import { addMemberIn } from '../../server/platform/access/members.js';
import { setAccountsIn } from '../../server/platform/access/accounts.js';
import { salespeople } from '../../server/modules/salespeople/service.js';

export async function configureDmsOrganization(tx: Tx, organizationId: string, operator: Actor): Promise<void> {
  const member = await addMemberIn(tx, organizationId, {
    name: 'Okello James',
    email: 'okello.james@example.com',
    role: 'none',
  });
  await salespeople.create(tx, operator, { salesmanCode: 'SM01', name: 'Okello James', memberId: member.id });
  await setAccountsIn(tx, organizationId, {
    cashAccount: 'Cash on hand',
    salesAccount: 'Sales of beverages',
    promotionsExpenseAccount: 'Trade promotions',
    vendors: { SUP01: 'Nile Breweries Ltd' },
  });
}

export interface DmsShop {
  organizationId: string;
  key: string;
}

const UNLIMITED = { perMinute: 100_000_000, burst: 10_000_000 };

/** A canonical DMS document of SM01's day 2026-11-25 for distributor DIST001. */
export const dmsDocument = (
  documentType: string,
  documentNumber: string,
  body: Record<string, unknown>,
  extra: Record<string, unknown> = {},
) => ({
  documentType,
  distributorCode: 'DIST001',
  documentNumber,
  documentDate: '2026-11-25',
  salesmanCode: 'SM01',
  body,
  ...extra,
});

/**
 * A distributor ready for a van's sales: set up, then its product, salesman, 20 customers of route R01, `cases * 2`
 * cases received at M01 and `cases` on the van, pushed through `push` and posted.
 */
export async function prepareDmsShop(
  db: Db,
  options: {
    name: string;
    synchronous: boolean;
    cases: number;
    push: (shop: DmsShop, body: unknown) => Promise<unknown>;
  },
): Promise<DmsShop> {
  const record = await createOrganization(db, {
    name: options.name,
    baseCurrency: 'UGX',
    modules: ['delivery', 'field-sales'],
  });
  const operator = operatorActor(actingOrganization(record), 'bench');
  await inTransaction(db, async (tx) => {
    for (const code of ['M01', 'D01', 'V_R01-G', 'V_R01-B']) await locations.create(tx, operator, { code, name: code });
    await configureDmsOrganization(tx, record.id, operator);
    await addConnection(tx, record.id, 'canonical', { distributorCode: 'DIST001', synchronous: options.synchronous });
  });
  const key = (
    await createApiKey(db, {
      organizationId: record.id,
      name: options.name,
      environment: 'production',
      scopes: ['dms:ingest', 'dms:flags:read'],
      rateLimits: { read: UNLIMITED, write: UNLIMITED, ingest: UNLIMITED },
    })
  ).secret;
  const shop = { organizationId: record.id, key };
  const D = dmsDocument;
  const setup = [
    D(
      'product',
      '100201',
      { name: 'Soda 300 ml, crate of 24', packSize: 24, taxRate: '18', sellingUnits: ['case', 'bottle'] },
      { status: 'active' },
    ),
    D(
      'salesman',
      'R01',
      { salesmanCode: 'SM01', salesmanName: 'Okello James', routeName: 'Kisenyi' },
      { status: 'active' },
    ),
    ...Array.from({ length: 20 }, (_, i) =>
      D(
        'customer',
        `UG${String(i + 1).padStart(7, '0')}`,
        { name: `Shop ${i + 1}`, routeCode: 'R01' },
        { status: 'active' },
      ),
    ),
    D('company_invoice', '9550800000001', {
      supplierCode: 'SUP01',
      locationCode: 'M01',
      currency: 'UGX',
      lines: [
        {
          productCode: '100201',
          unit: 'case',
          invoicedQuantity: options.cases * 2,
          receivedQuantity: options.cases * 2,
          unitCost: '18000',
        },
      ],
    }),
    D('van_replenishment', 'VR000001', {
      routeCode: 'R01',
      fromLocationCode: 'M01',
      lines: [{ productCode: '100201', unit: 'case', quantity: options.cases }],
    }),
  ];
  for (let i = 0; i < setup.length; i += 50) await options.push(shop, { documents: setup.slice(i, i + 50) });
  await until(async () => (await pendingDocuments(db, record.id)) === 0, 120_000, 'the set-up posted');
  return shop;
}

/** How many of the organisation's DMS documents are still received (not yet posted or rejected). */
export const pendingDocuments = async (db: Db, organizationId: string) =>
  Number(
    (
      await db
        .selectFrom('dms_documents')
        .select((eb) => eb.fn.countAll<string>().as('n'))
        .where('organization_id', '=', organizationId)
        .where('state', '=', 'received')
        .executeTakeFirstOrThrow()
    ).n,
  );

/** Throws, naming the first document of the organisation that did not post and why. */
export async function requireAllPosted(db: Db, organizationId: string): Promise<void> {
  const other = await db
    .selectFrom('dms_documents')
    .select(['document_number', 'state', 'reason_text', 'note'])
    .where('organization_id', '=', organizationId)
    .where('state', '<>', 'posted')
    .executeTakeFirst();
  if (other) throw new Error(`a bench document did not post: ${JSON.stringify(other)}`);
}

/** Polls `check` every `everyMs` until it holds; throws naming `what` after `timeoutMs`. */
export async function until(
  check: () => Promise<boolean>,
  timeoutMs: number,
  what: string,
  everyMs = 20,
): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (!(await check())) {
    if (Date.now() > deadline) throw new Error(`${what}: not within ${timeoutMs} ms`);
    await new Promise((resolve) => setTimeout(resolve, everyMs));
  }
}
