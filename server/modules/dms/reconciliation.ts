// The daily reconciliation of a salesman's DMS day (the spec's six rules; README, "DMS daily reconciliation"):
// 1. after the connection's cut-off (HH:MM on the organisation's clock, its IANA time zone), per salesman code and business date, the day's documents are counted
//    and totalled per type as received, posted, rejected and pending, and compared with the day's daily totals and
//    route settlement;
// 2. the result is kept per salesman and day with each difference (DmsReconciliationDifference's kinds);
// 3. missing and unlisted documents are named only when a comparison document lists numbers; without a list the
//    counts and values are compared and received documents that did not post are still named;
// 4. a document that arrives or changes after its day was checked makes the day due again, and the last three
//    closed days are checked at every run;
// 5. a changed result with differences is an in-app notification to the organisation's owner and the members who
//    manage settings (each with its own read state);
// 6. a changed result (the first one included) is a dms.reconciliation.completed event.
// A result is compared by the SHA-256 of its canonical JSON: an unchanged day writes nothing but its checkedAt.
import { createHash } from 'node:crypto';
import type { ExpressionBuilder } from 'kysely';
import type { DB } from '../../../generated/kysely/types.js';
import { Decimal } from 'decimal.js';
import type { components } from '../../../generated/api-types.js';
import { canonicalJson } from '../../platform/canonical-json.js';
import { inTransaction, type Db, type Tx } from '../../platform/database/transaction.js';
import { recordEvent } from '../../platform/events/outbox.js';
import { newId } from '../../platform/ids.js';
import { notify } from '../../platform/webhooks/notifications.js';
import { MASTER_DATA_TYPES } from './canonical.js';
import type { DmsConnectionRow } from './connections.js';
import type { DayCloseResult } from './handlers/day-close.js';
import type { ReasonCode } from './reasons.js';
import { businessNow, localTimeIn } from '../../platform/clock.js';
import { timeZoneOf } from '../../platform/access/organizations.js';

export type DmsReconciliation = components['schemas']['DmsReconciliation'];
type Difference = components['schemas']['DmsReconciliationDifference'];
type TypeTotals = DmsReconciliation['totals'][number];
type Result = Pick<DmsReconciliation, 'comparedWith' | 'totals' | 'differences'>;

export const DMS_RECONCILIATION = 'dms_reconciliation';
export const DMS_RECONCILIATION_COMPLETED = 'dms.reconciliation.completed';
export const RECONCILIATION_NOTIFICATION = 'dms_reconciliation';
/** Closed days checked again at every run (rule 4). */
export const DAYS_CHECKED_AGAIN = 3;
const COMPARISON_TYPES = new Set(['route_settlement', 'daily_totals']);

interface DayDocument {
  id: string;
  document_type: string;
  document_number: string;
  state: string;
  note: string | null;
  reason_code: string | null;
  content: unknown;
  result: unknown;
}

/** A document's value for the totals: a sale's or return's total, a credit note's or collection's amount; else 0. */
export function valueOf(content: unknown): Decimal {
  const body = ((content as { body?: Record<string, unknown> } | null)?.body ?? {}) as {
    totals?: { total?: string };
    amount?: string;
  };
  const value = body.totals?.total ?? body.amount;
  return typeof value === 'string' && /^\d+(\.\d+)?$/.test(value) ? new Decimal(value) : new Decimal(0);
}

/**
 * The last business date whose cut-off has passed at `now`: the date and the cut-off are the distributor's local
 * time in `timeZone` (a 20:00 cut-off in Kampala is 17:00 UTC), so a day closes when its evening ends there.
 */
export function lastClosedDate(now: Date, cutOffTime: string, timeZone: string): string {
  const local = localTimeIn(now, timeZone);
  const [h, m] = cutOffTime.split(':').map(Number) as [number, number];
  return local.minutes >= h * 60 + m ? local.date : addDays(local.date, -1);
}

function addDays(date: string, days: number): string {
  return new Date(Date.parse(`${date}T00:00:00.000Z`) + days * 86_400_000).toISOString().slice(0, 10);
}

const label = (d: { document_type: string; document_number: string }) => `${d.document_type} ${d.document_number}`;

function notPosted(d: DayDocument): Difference {
  const why =
    d.state === 'rejected' ? `rejected ${d.reason_code}` : d.note ? `still received: ${d.note}` : 'still received';
  return {
    kind: 'not_posted',
    message: `${label(d)} arrived and did not post (${why}).`,
    documentType: d.document_type,
    documentNumber: d.document_number,
    documentId: d.id,
    state: d.state as 'received' | 'rejected',
    ...(d.state === 'rejected' && d.reason_code ? { reasonCode: d.reason_code } : {}),
    ...(d.state === 'received' && d.note ? { note: d.note } : {}),
  };
}

/** The day's result: pure, from its documents (the comparison documents among them) and the listed numbers found elsewhere. */
export function computeResult(
  documents: readonly DayDocument[],
  listedElsewhere: ReadonlyMap<string, DayDocument>,
): Result {
  const latest = (type: string) =>
    documents.filter((d) => d.document_type === type && d.state !== 'superseded').at(-1) ?? null;
  const settlement = latest('route_settlement');
  const totalsDoc = latest('daily_totals');
  const ref = (d: DayDocument | null) =>
    d
      ? { documentId: d.id, documentNumber: d.document_number, state: d.state as 'received' | 'posted' | 'rejected' }
      : null;
  // Master data (customers, products, prices ...) is no one's day.
  const day = documents.filter(
    (d) => !COMPARISON_TYPES.has(d.document_type) && !MASTER_DATA_TYPES.has(d.document_type),
  );
  const bodyOf = (d: DayDocument | null) =>
    ((d?.content as { body?: Record<string, unknown> } | undefined)?.body ?? {}) as {
      documents?: string[];
      totals?: { documentType: string; count: number; value: string }[];
    };
  const lists = [bodyOf(settlement).documents, bodyOf(totalsDoc).documents].filter((list): list is string[] =>
    Array.isArray(list),
  );
  const listed = lists.length > 0 ? new Set(lists.flat()) : null;

  const differences: Difference[] = [];
  const notPostedOf = new Map<string, DayDocument[]>();
  const unlistedOf = new Map<string, DayDocument[]>();
  const push = <T>(map: Map<string, T[]>, key: string, value: T) => {
    const list = map.get(key) ?? [];
    list.push(value);
    map.set(key, list);
  };
  let missing = 0;
  if (listed) {
    // The comparison documents are found by their numbers too (a daily totals document lists the route settlement):
    // they arrived. The route settlement's own state is judged below, once.
    const byNumber = new Map(
      documents.filter((d) => !MASTER_DATA_TYPES.has(d.document_type)).map((d) => [d.document_number, d]),
    );
    for (const number of [...listed].sort()) {
      const found = byNumber.get(number) ?? listedElsewhere.get(number);
      if (!found) {
        missing += 1;
        differences.push({
          kind: 'missing',
          message: `Document ${number} is listed by the DMS and never arrived.`,
          documentNumber: number,
        });
      } else if (found !== settlement && found.state !== 'posted') {
        // the settlement's own state is judged below
        differences.push(notPosted(found));
        push(notPostedOf, found.document_type, found);
      }
    }
    for (const d of day) {
      if (d.state === 'posted' && !listed.has(d.document_number)) {
        differences.push({
          kind: 'unlisted',
          message: `${label(d)} posted for the day and is not listed by the DMS.`,
          documentType: d.document_type,
          documentNumber: d.document_number,
          documentId: d.id,
        });
        push(unlistedOf, d.document_type, d);
      }
    }
  } else {
    for (const d of day) {
      if (d.state !== 'posted') {
        differences.push(notPosted(d));
        push(notPostedOf, d.document_type, d);
      }
    }
  }

  // Rule 1: counts and values per type and state. A comparison document counts where the daily totals count its type.
  const dmsTotals = new Map((bodyOf(totalsDoc).totals ?? []).map((t) => [t.documentType, t]));
  const counted = [
    ...day,
    ...documents.filter((d) => COMPARISON_TYPES.has(d.document_type) && dmsTotals.has(d.document_type)),
  ];
  // The route settlement not posted is named below, once; here it explains its type's count like any waiting document.
  if (settlement && settlement.state !== 'posted') push(notPostedOf, settlement.document_type, settlement);
  const types = [...new Set([...day.map((d) => d.document_type), ...dmsTotals.keys()])].sort();
  const totals: TypeTotals[] = types.map((type) => {
    const of = counted.filter((d) => d.document_type === type);
    const count = (state?: string) => of.filter((d) => state === undefined || d.state === state).length;
    const value = (state?: string) =>
      of
        .filter((d) => state === undefined || d.state === state)
        .reduce((sum, d) => sum.plus(valueOf(d.content)), new Decimal(0))
        .toFixed();
    const dms = dmsTotals.get(type);
    return {
      documentType: type,
      counts: { received: count(), posted: count('posted'), rejected: count('rejected'), pending: count('received') },
      values: { received: value(), posted: value('posted'), rejected: value('rejected'), pending: value('received') },
      dms: dms ? { count: dms.count, value: new Decimal(dms.value).toFixed() } : null,
    };
  });

  // A type's count or value the named documents do not explain. Documents that never arrived have no known type:
  // a shortfall they can cover is taken as theirs.
  for (const total of totals) {
    if (!total.dms) continue;
    const sum = (list: DayDocument[] | undefined) =>
      (list ?? []).reduce((s, d) => s.plus(valueOf(d.content)), new Decimal(0));
    const unlisted = unlistedOf.get(total.documentType);
    const waiting = notPostedOf.get(total.documentType);
    const actualCount = total.counts.posted - (unlisted?.length ?? 0) + (waiting?.length ?? 0);
    const actualValue = new Decimal(total.values.posted).minus(sum(unlisted)).plus(sum(waiting));
    const countGap = total.dms.count - actualCount;
    const valueGap = new Decimal(total.dms.value).minus(actualValue);
    const coveredByMissing = countGap > 0 && countGap <= missing;
    if (countGap !== 0 && !coveredByMissing) {
      differences.push({
        kind: 'totals',
        measure: 'count',
        documentType: total.documentType,
        expected: String(total.dms.count),
        actual: String(actualCount),
        difference: String(countGap),
        message: `${total.documentType}: the daily totals count ${total.dms.count}, the documents the service holds explain ${actualCount} (${countGap} unexplained).`,
      });
    }
    if (!valueGap.isZero() && !coveredByMissing) {
      differences.push({
        kind: 'totals',
        measure: 'value',
        documentType: total.documentType,
        expected: new Decimal(total.dms.value).toFixed(),
        actual: actualValue.toFixed(),
        difference: valueGap.toFixed(),
        message: `${total.documentType}: the daily totals value ${new Decimal(total.dms.value).toFixed()}, the documents the service holds explain ${actualValue.toFixed()} (${valueGap.toFixed()} unexplained).`,
      });
    }
  }

  // The route settlement: not there, not posted, or its cash, credit and stock against what was posted.
  if (!settlement) {
    differences.push({
      kind: 'no_route_settlement',
      message: 'The day has no route settlement: its cash and van stock are not closed.',
    });
  } else if (settlement.state !== 'posted') {
    differences.push(notPosted(settlement));
  } else {
    const closed = settlement.result as DayCloseResult | null;
    if (closed) {
      if (!new Decimal(closed.cash.difference).isZero()) {
        differences.push({
          kind: 'cash',
          expected: closed.cash.expected,
          actual: closed.cash.handedIn,
          difference: closed.cash.difference,
          message: `Cash handed in ${closed.cash.handedIn} against ${closed.cash.expected} expected from the posted documents (difference ${closed.cash.difference}, booked as the settlement's cash difference).`,
        });
      }
      if (closed.credit.stated !== null && !new Decimal(closed.credit.stated).eq(closed.credit.posted)) {
        const gap = new Decimal(closed.credit.stated).minus(closed.credit.posted).toFixed();
        differences.push({
          kind: 'credit',
          expected: closed.credit.stated,
          actual: closed.credit.posted,
          difference: gap,
          message: `The route settlement gives credit ${closed.credit.stated} still owed; the day's posted invoices still owe ${closed.credit.posted} (difference ${gap}).`,
        });
      }
      for (const line of closed.stock) {
        if (line.difference === 0) continue;
        differences.push({
          kind: 'stock',
          productCode: line.productCode,
          expected: String(line.counted),
          actual: String(line.book),
          difference: String(line.difference),
          message: `Product ${line.productCode}: the closing stock is ${line.counted}, the books held ${line.book} (difference ${line.difference}, posted as the trip's count adjustment).`,
        });
      }
    }
  }
  return { comparedWith: { routeSettlement: ref(settlement), dailyTotals: ref(totalsDoc) }, totals, differences };
}

const DOCUMENT_COLUMNS = [
  'id',
  'document_type',
  'document_number',
  'state',
  'note',
  'reason_code',
  'content',
  'result',
] as const;

/**
 * A document rejected R07 is another distributor's (the connection serves one distributor code): it is no document
 * of this distributor's days, neither counted nor named, and does not make a day due.
 */
const ofThisDistributor = (eb: ExpressionBuilder<DB, 'dms_documents'>) =>
  eb.or([eb('reason_code', 'is', null), eb('reason_code', '<>', OTHER_DISTRIBUTOR)]);
const OTHER_DISTRIBUTOR: ReasonCode = 'R07';

/** Reconciles one salesman's day in one transaction; returns whether its result changed. */
export async function reconcileDay(
  db: Db,
  connection: DmsConnectionRow,
  salesmanCode: string,
  businessDate: string,
): Promise<boolean> {
  const org = connection.organization_id;
  return inTransaction(db, async (tx) => {
    // One run per day at a time: the day's row (or the lack of one) is decided under this lock.
    await tx
      .selectFrom('dms_connections')
      .select('id')
      .where('organization_id', '=', org)
      .where('id', '=', connection.id)
      .forNoKeyUpdate()
      .execute();
    const documents = (await tx
      .selectFrom('dms_documents')
      .select(DOCUMENT_COLUMNS)
      .where('organization_id', '=', org)
      .where('connection_id', '=', connection.id)
      .where('document_date', '=', businessDate)
      .where('salesman_code', '=', salesmanCode)
      .where('state', '<>', 'superseded')
      .where(ofThisDistributor)
      .orderBy('received_at')
      .orderBy('id')
      .execute()) as DayDocument[];
    const numbers = new Set(documents.map((d) => d.document_number));
    const listed = documents
      .filter((d) => COMPARISON_TYPES.has(d.document_type))
      .flatMap((d) => (d.content as { body?: { documents?: string[] } }).body?.documents ?? [])
      .filter((n) => !numbers.has(n));
    const elsewhere =
      listed.length === 0
        ? []
        : ((await tx
            .selectFrom('dms_documents')
            .select(DOCUMENT_COLUMNS)
            .where('organization_id', '=', org)
            .where('connection_id', '=', connection.id)
            .where('document_number', 'in', [...new Set(listed)])
            .where('state', '<>', 'superseded')
            .where(ofThisDistributor)
            .orderBy('received_at')
            .execute()) as DayDocument[]);
    const result = computeResult(documents, new Map(elsewhere.map((d) => [d.document_number, d])));
    return save(tx, connection, salesmanCode, businessDate, result);
  });
}

async function save(
  tx: Tx,
  connection: DmsConnectionRow,
  salesmanCode: string,
  businessDate: string,
  result: Result,
): Promise<boolean> {
  const org = connection.organization_id;
  const hash = createHash('sha256').update(canonicalJson(result)).digest('hex');
  const existing = await tx
    .selectFrom('dms_reconciliations')
    .select(['id', 'result_hash'])
    .where('organization_id', '=', org)
    .where('connection_id', '=', connection.id)
    .where('salesman_code', '=', salesmanCode)
    .where('business_date', '=', businessDate)
    .executeTakeFirst();
  const now = new Date(); // when it was checked: a bookkeeping time, by the real clock
  if (existing?.result_hash === hash) {
    await tx
      .updateTable('dms_reconciliations')
      .set({ checked_at: now })
      .where('organization_id', '=', org)
      .where('id', '=', existing.id)
      .execute();
    return false;
  }
  const count = result.differences.length;
  const row = {
    status: count === 0 ? 'balanced' : 'differences',
    difference_count: count,
    result: JSON.stringify(result),
    result_hash: hash,
    checked_at: now,
    updated_at: now,
  };
  const id = existing?.id ?? newId('dmr');
  if (existing) {
    await tx
      .updateTable('dms_reconciliations')
      .set(row)
      .where('organization_id', '=', org)
      .where('id', '=', id)
      .execute();
  } else {
    await tx
      .insertInto('dms_reconciliations')
      .values({
        organization_id: org,
        id,
        connection_id: connection.id,
        salesman_code: salesmanCode,
        business_date: businessDate,
        created_at: now,
        ...row,
      })
      .execute();
  }
  await recordEvent(tx, org, DMS_RECONCILIATION_COMPLETED, DMS_RECONCILIATION, id);
  if (count > 0) {
    const kinds = [...new Set(result.differences.map((d) => d.kind))].join(', ');
    await notify(
      tx,
      org,
      RECONCILIATION_NOTIFICATION,
      `DMS reconciliation of salesman ${salesmanCode} on ${businessDate}: ${count} difference${count === 1 ? '' : 's'} (${kinds}). Read it with GET /dms/${connection.system}/reconciliations?salesman=${encodeURIComponent(salesmanCode)}&date=${businessDate}.`,
    );
  }
  return true;
}

/**
 * The days of a connection due at `now`: every salesman's day among the last three closed dates, and any older
 * closed day with a document that arrived or changed since the day was last checked (or never checked).
 */
export async function dueDays(
  db: Db,
  connection: DmsConnectionRow,
  now: Date,
): Promise<{ salesmanCode: string; businessDate: string }[]> {
  const closed = lastClosedDate(now, connection.cut_off_time, await timeZoneOf(db, connection.organization_id));
  const recent = addDays(closed, -(DAYS_CHECKED_AGAIN - 1));
  const rows = await db
    .selectFrom('dms_documents as d')
    .select(['d.salesman_code', 'd.document_date'])
    .distinct()
    .where('d.organization_id', '=', connection.organization_id)
    .where('d.connection_id', '=', connection.id)
    .where('d.salesman_code', 'is not', null)
    .where('d.document_date', 'is not', null)
    .where('d.document_date', '<=', closed)
    .where('d.document_type', 'not in', [...MASTER_DATA_TYPES])
    .where((eb) => eb.or([eb('d.reason_code', 'is', null), eb('d.reason_code', '<>', OTHER_DISTRIBUTOR)]))
    .where((eb) =>
      eb.or([
        eb('d.document_date', '>=', recent),
        eb.not(
          eb.exists(
            eb
              .selectFrom('dms_reconciliations as r')
              .select('r.id')
              .whereRef('r.organization_id', '=', 'd.organization_id')
              .whereRef('r.connection_id', '=', 'd.connection_id')
              .whereRef('r.salesman_code', '=', 'd.salesman_code')
              .whereRef('r.business_date', '=', 'd.document_date')
              .whereRef('r.checked_at', '>=', 'd.updated_at'),
          ),
        ),
      ]),
    )
    .orderBy('d.document_date')
    .orderBy('d.salesman_code')
    .execute();
  return rows.map((row) => ({ salesmanCode: row.salesman_code!, businessDate: row.document_date! }));
}

/** One run over every connection (the job's, each minute); returns how many days changed. */
export async function reconcileDue(db: Db, now: Date = businessNow(), organizationId?: string): Promise<number> {
  let query = db.selectFrom('dms_connections').selectAll();
  if (organizationId) query = query.where('organization_id', '=', organizationId);
  let changed = 0;
  for (const connection of await query.execute()) {
    for (const day of await dueDays(db, connection, now)) {
      if (await reconcileDay(db, connection, day.salesmanCode, day.businessDate)) changed += 1;
    }
  }
  return changed;
}
