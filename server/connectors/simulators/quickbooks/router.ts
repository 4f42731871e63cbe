// The QuickBooks Online simulator: an HTTP server of QuickBooks' REST API v3 wire format (the subset the accounting
// connector speaks), with its state in Postgres. What it does follows QuickBooks' documented behaviour:
// - `POST /v3/company/{realm}/{entity}?requestid=...` creates Invoice, Payment, CreditMemo, RefundReceipt, Bill and
//   JournalEntry; the same request id again answers the first answer (written with the entity in one transaction);
// - `?operation=void` voids an Invoice (kept, amounts zeroed, PrivateNote "Voided"), `?operation=update&include=void`
//   a Payment, `?operation=delete` deletes the others (QuickBooks cannot void them); each needs the current SyncToken
//   (5010 Stale Object otherwise);
// - faults as QuickBooks writes them (`{"Fault":{"Error":[{Message, Detail, code, element}], type}, time}`): 6140
//   Duplicate Document Number, 6210 Account Period Closed (a date on or before the company's book close date), 6000
//   business validation (a payment above its invoice's balance, an unbalanced journal entry, voiding an invoice a
//   payment is applied to), 6540 Deposited Transaction cannot be changed, 610 Object Not Found, 5010 Stale Object,
//   3200 authentication;
// - a transaction linked to a Deposit is held: it cannot be voided or deleted until it is taken out of the deposit
//   (`holdQuickBooksEntity` deposits one; `releaseQuickBooksEntity` takes it out again, as the company's accountant
//   would in QuickBooks; the trigger `[sim:held]` deposits at once);
// - more than 10 requests at once to one company, or 500 in a minute, are 429 ThrottleExceeded with Retry-After
//   (counted in this process's memory: several processes running the simulator each count their own);
// - failures on demand (server/connectors/simulators/failures.ts) and trigger values in customer or vendor names.
import { Decimal } from 'decimal.js';
import express, { type Request, type Response, type Router } from 'express';
import { sql, type Generated, type Kysely, type Transaction } from 'kysely';
import type { Db } from '../../../platform/database/transaction.js';
import { simulatorDb } from '../database.js';
import { takeFailure } from '../failures.js';

export const QUICKBOOKS_FAILURE_MODES = [
  'outage',
  'rate_limit',
  'slow',
  'timeout',
  'period_closed',
  'duplicate',
  'stale',
  'redirect',
] as const;
/**
 * Where the `redirect` mode points (both simulators): the cloud metadata service, what a hostile or hijacked endpoint
 * would redirect to. A client that followed it would send the token there; ours never follows a redirect.
 */
export const SIMULATED_REDIRECT_LOCATION = 'http://169.254.169.254/latest/meta-data/iam/security-credentials/';

/** Trigger values: a customer or vendor name containing one makes the simulator answer so (listed in the README). */
export const QUICKBOOKS_TRIGGERS = [
  { value: '[sim:period_closed]', effect: 'every write is refused with 6210 Account Period Closed' },
  { value: '[sim:rejected]', effect: 'every write is refused with 6000 Business Validation Error' },
  {
    value: '[sim:outage]',
    effect: 'the first attempt of each request id gets a 503; a retry with the same request id succeeds',
  },
  {
    value: '[sim:held]',
    effect:
      'what is posted for this party is deposited at once (linked to a Deposit): QuickBooks holds it, so a reversal in the service is refused until it is voided there by hand',
  },
] as const;

const ENTITIES = {
  invoice: 'Invoice',
  payment: 'Payment',
  creditmemo: 'CreditMemo',
  refundreceipt: 'RefundReceipt',
  bill: 'Bill',
  journalentry: 'JournalEntry',
} as const;
type Entity = (typeof ENTITIES)[keyof typeof ENTITIES];
const VOIDABLE: readonly Entity[] = ['Invoice', 'Payment'];
const WITH_DOC_NUMBER: readonly Entity[] = ['Invoice', 'CreditMemo', 'RefundReceipt', 'Bill', 'JournalEntry'];

interface Tables {
  qbo_realms: {
    realm_id: string;
    book_close_date: string | null;
    next_id: Generated<string>;
    created_at: Generated<Date>;
  };
  qbo_entities: {
    realm_id: string;
    id: string;
    entity: string;
    sync_token: Generated<number>;
    doc_number: string | null;
    txn_date: string;
    status: Generated<string>;
    total: string;
    balance: string;
    body: unknown;
    created_at: Generated<Date>;
    updated_at: Generated<Date>;
  };
  qbo_requests: {
    realm_id: string;
    request_id: string;
    status_code: number;
    response: unknown;
    created_at: Generated<Date>;
  };
  qbo_trigger_attempts: { realm_id: string; request_id: string };
}
type Sim = Kysely<Tables>;
type SimTx = Transaction<Tables>;

/** An answer: its HTTP status and JSON body. */
interface Answer {
  status: number;
  body: unknown;
  headers?: Record<string, string>;
}

class Fault extends Error {
  constructor(
    readonly code: string,
    message: string,
    readonly detail: string,
    readonly status = 400,
    readonly element = '',
  ) {
    super(message);
  }
  answer(): Answer {
    return {
      status: this.status,
      body: {
        Fault: {
          Error: [{ Message: this.message, Detail: this.detail, code: this.code, element: this.element }],
          type: 'ValidationFault',
        },
        time: new Date().toISOString(),
      },
    };
  }
}
const periodClosed = (date: string, closed: string) =>
  new Fault(
    '6210',
    'Account Period Closed',
    `The account period has closed and the account books cannot be updated through the QBO Services API. Please use the QBO website to make these changes. Books are closed through ${closed}; the transaction is dated ${date}.`,
  );

const MINUTE_LIMIT = 500;
const CONCURRENT_LIMIT = 10;

export function createQuickBooksSimulator(db: Db): Router {
  const sim = simulatorDb<Tables>(db);
  const router = express.Router();
  const inFlight = new Map<string, number>();
  const minute = new Map<string, { start: number; count: number }>();

  router.use('/v3/company/:realm', async (req: Request, res: Response) => {
    const realm = String(req.params.realm);
    const send = (answer: Answer) => {
      if (answer.headers) res.set(answer.headers);
      res.status(answer.status).json(answer.body);
    };
    if (!/^Bearer \S+$/.test(req.get('authorization') ?? '')) {
      send({
        status: 401,
        body: {
          Fault: {
            Error: [
              {
                Message: 'message=AuthenticationFailed; errorCode=003200; statusCode=401',
                Detail: 'Token invalid',
                code: '3200',
              },
            ],
            type: 'AUTHENTICATION',
          },
          time: new Date().toISOString(),
        },
      });
      return;
    }
    // The throttle: per company, per minute and at once.
    const now = Date.now();
    const window = minute.get(realm);
    if (!window || now - window.start >= 60_000) minute.set(realm, { start: now, count: 1 });
    else window.count += 1;
    const busy = (inFlight.get(realm) ?? 0) + 1;
    if (busy > CONCURRENT_LIMIT || minute.get(realm)!.count > MINUTE_LIMIT) {
      send(throttled(60));
      return;
    }
    inFlight.set(realm, busy);
    try {
      const injected = await takeFailure(db, 'accounting', realm);
      if (injected?.mode === 'slow') await sleep(injected.delayMs);
      if (injected?.mode === 'timeout') await sleep(35_000);
      const early = injected ? injectedAnswer(injected.mode, injected.delayMs) : null;
      if (early) {
        send(early);
        return;
      }
      send(await handle(sim, realm, req));
    } catch (error) {
      send(
        error instanceof Fault
          ? error.answer()
          : new Fault('500', 'Internal Server Error', (error as Error).message, 500).answer(),
      );
    } finally {
      inFlight.set(realm, (inFlight.get(realm) ?? 1) - 1);
    }
  });
  return router;
}

function throttled(retryAfter: number): Answer {
  return {
    status: 429,
    headers: { 'Retry-After': String(retryAfter) },
    body: {
      Fault: {
        Error: [
          {
            Message: 'message=ThrottleExceeded; errorCode=003001; statusCode=429',
            Detail: 'The request limit was reached.',
            code: '3001',
          },
        ],
        type: 'ThrottleExceeded',
      },
      time: new Date().toISOString(),
    },
  };
}

function injectedAnswer(mode: string, delayMs: number): Answer | null {
  switch (mode) {
    case 'outage':
      return {
        status: 503,
        body: {
          Fault: {
            Error: [{ Message: 'Service Unavailable', Detail: 'The service is temporarily unavailable.', code: '503' }],
            type: 'SERVICE',
          },
          time: new Date().toISOString(),
        },
      };
    case 'rate_limit':
      return throttled(Math.max(1, Math.ceil(delayMs / 1000)));
    case 'period_closed':
      return periodClosed('the transaction date', 'a date set by the operator').answer();
    case 'duplicate':
      return new Fault(
        '6140',
        'Duplicate Document Number Error',
        'Duplicate Document Number Error : You must specify a different number. This number has already been used.',
        400,
        'DocNumber',
      ).answer();
    case 'stale':
      return new Fault(
        '5010',
        'Stale Object Error',
        'Stale Object Error : You and another user were working on the same thing.',
      ).answer();
    case 'redirect':
      return {
        status: 307,
        headers: { Location: SIMULATED_REDIRECT_LOCATION },
        body: { redirect: SIMULATED_REDIRECT_LOCATION },
      };
    default:
      return null; // slow and timeout answer normally after their wait
  }
}

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

async function handle(sim: Sim, realm: string, req: Request): Promise<Answer> {
  const path = req.path.replace(/^\/+/, '').split('/');
  const entityName = (path[0] ?? '').toLowerCase();
  if (req.method === 'GET' && entityName === 'preferences') return preferences(sim, realm);
  if (req.method === 'GET' && entityName === 'query') return query(sim, realm, String(req.query.query ?? ''));
  const entity = ENTITIES[entityName as keyof typeof ENTITIES];
  if (!entity)
    throw new Fault('4000', 'Unsupported Operation', `Operation ${req.method} ${req.path} is not supported.`);
  if (req.method === 'GET' && path[1]) return read(sim, realm, entity, path[1]);
  if (req.method !== 'POST')
    throw new Fault('4000', 'Unsupported Operation', `Operation ${req.method} is not supported.`);

  const requestId = typeof req.query.requestid === 'string' && req.query.requestid !== '' ? req.query.requestid : null;
  const body = (req.body ?? {}) as Record<string, any>;
  if (requestId) {
    const replay = await sim
      .selectFrom('qbo_requests')
      .select(['status_code', 'response'])
      .where('realm_id', '=', realm)
      .where('request_id', '=', requestId)
      .executeTakeFirst();
    if (replay) return { status: replay.status_code, body: replay.response };
    if (await outageTrigger(sim, realm, requestId, body)) {
      return {
        status: 503,
        body: {
          Fault: {
            Error: [
              {
                Message: 'Service Unavailable',
                Detail: 'Trigger [sim:outage]: the first attempt of this request id fails.',
                code: '503',
              },
            ],
            type: 'SERVICE',
          },
          time: new Date().toISOString(),
        },
      };
    }
  }
  const operation = String(req.query.operation ?? 'create');
  return sim.transaction().execute(async (tx) => {
    await tx
      .insertInto('qbo_realms')
      .values({ realm_id: realm, book_close_date: null })
      .onConflict((c) => c.column('realm_id').doNothing())
      .execute();
    const company = await tx
      .selectFrom('qbo_realms')
      .select(['book_close_date'])
      // The close date as its calendar string.
      .select(sql<string | null>`to_char(book_close_date, 'YYYY-MM-DD')`.as('closed'))
      .where('realm_id', '=', realm)
      .forUpdate()
      .executeTakeFirstOrThrow();
    // The same request id may have arrived twice at once: under the company's lock, the second sees the first's answer.
    if (requestId) {
      const replay = await tx
        .selectFrom('qbo_requests')
        .select(['status_code', 'response'])
        .where('realm_id', '=', realm)
        .where('request_id', '=', requestId)
        .executeTakeFirst();
      if (replay) return { status: replay.status_code, body: replay.response };
    }
    let answer: Answer;
    try {
      triggers(body);
      answer =
        operation === 'create'
          ? await create(tx, realm, entity, body, company.closed)
          : operation === 'void' || (operation === 'update' && req.query.include === 'void')
            ? await voidOrDelete(tx, realm, entity, body, company.closed, 'void')
            : operation === 'delete'
              ? await voidOrDelete(tx, realm, entity, body, company.closed, 'delete')
              : (() => {
                  throw new Fault('4000', 'Unsupported Operation', `operation=${operation} is not supported.`);
                })();
    } catch (error) {
      if (!(error instanceof Fault)) throw error;
      answer = error.answer();
    }
    if (requestId)
      await tx
        .insertInto('qbo_requests')
        .values({
          realm_id: realm,
          request_id: requestId,
          status_code: answer.status,
          response: JSON.stringify(answer.body),
        })
        .execute();
    return answer;
  });
}

/** `[sim:outage]` in the party's name: the first attempt of each request id fails (remembered, so the retry passes). */
async function outageTrigger(sim: Sim, realm: string, requestId: string, body: Record<string, any>): Promise<boolean> {
  if (!partyName(body).includes('[sim:outage]')) return false;
  const first = await sim
    .insertInto('qbo_trigger_attempts')
    .values({ realm_id: realm, request_id: requestId })
    .onConflict((c) => c.columns(['realm_id', 'request_id']).doNothing())
    .executeTakeFirst();
  return Number(first.numInsertedOrUpdatedRows ?? 0n) > 0;
}

const partyName = (body: Record<string, any>): string => String(body.CustomerRef?.name ?? body.VendorRef?.name ?? '');

function triggers(body: Record<string, any>): void {
  const name = partyName(body);
  if (name.includes('[sim:period_closed]'))
    throw periodClosed(String(body.TxnDate ?? 'today'), 'the trigger [sim:period_closed]');
  if (name.includes('[sim:rejected]'))
    throw new Fault(
      '6000',
      'A business validation error has occurred while processing your request',
      'Business Validation Error: trigger [sim:rejected].',
    );
}

const money = (value: unknown, element: string): Decimal => {
  if (typeof value !== 'number' && typeof value !== 'string')
    throw new Fault(
      '2020',
      'Required param missing, need to supply the required value for the API',
      `Required parameter ${element} is missing in the request`,
      400,
      element,
    );
  const amount = new Decimal(value);
  if (!amount.isFinite()) throw new Fault('2050', 'Invalid Number', `${element} is not a number`, 400, element);
  return amount;
};

async function create(
  tx: SimTx,
  realm: string,
  entity: Entity,
  body: Record<string, any>,
  closed: string | null,
): Promise<Answer> {
  const txnDate =
    typeof body.TxnDate === 'string' && /^\d{4}-\d{2}-\d{2}$/.test(body.TxnDate)
      ? body.TxnDate
      : new Date().toISOString().slice(0, 10);
  if (closed !== null && txnDate <= closed) throw periodClosed(txnDate, closed);
  const lines = Array.isArray(body.Line) ? (body.Line as Record<string, any>[]) : [];
  if (entity !== 'Payment' && lines.length === 0)
    throw new Fault(
      '2020',
      'Required param missing, need to supply the required value for the API',
      'Required parameter Line is missing in the request',
      400,
      'Line',
    );
  if (entity === 'Bill' ? !body.VendorRef?.value : entity !== 'JournalEntry' && !body.CustomerRef?.value) {
    throw new Fault(
      '2020',
      'Required param missing, need to supply the required value for the API',
      `Required parameter ${entity === 'Bill' ? 'VendorRef' : 'CustomerRef'} is missing in the request`,
      400,
      entity === 'Bill' ? 'VendorRef' : 'CustomerRef',
    );
  }
  const docNumber =
    typeof body.DocNumber === 'string'
      ? body.DocNumber
      : typeof body.PaymentRefNum === 'string'
        ? body.PaymentRefNum
        : null;
  if (docNumber !== null && WITH_DOC_NUMBER.includes(entity)) {
    const holder = await tx
      .selectFrom('qbo_entities')
      .select(['id'])
      .where('realm_id', '=', realm)
      .where('entity', '=', entity)
      .where('doc_number', '=', docNumber)
      .where('status', '!=', 'deleted')
      .executeTakeFirst();
    if (holder) {
      throw new Fault(
        '6140',
        'Duplicate Document Number Error',
        `Duplicate Document Number Error : You must specify a different number. This number has already been used. DocNumber=${docNumber} is assigned to TxnType=${entity} with TxnId=${holder.id}`,
        400,
        'DocNumber',
      );
    }
  }

  let total: Decimal;
  if (entity === 'Payment') {
    total = money(body.TotalAmt, 'TotalAmt');
    let applied = new Decimal(0);
    for (const line of lines) {
      const amount = money(line.Amount, 'Line.Amount');
      for (const link of (line.LinkedTxn ?? []) as { TxnId: string; TxnType: string }[]) {
        if (link.TxnType !== 'Invoice')
          throw new Fault(
            '6000',
            'A business validation error has occurred while processing your request',
            `Business Validation Error: a payment links only to invoices here, not ${link.TxnType}.`,
          );
        const invoice = await tx
          .selectFrom('qbo_entities')
          .select(['balance', 'status'])
          .where('realm_id', '=', realm)
          .where('entity', '=', 'Invoice')
          .where('id', '=', String(link.TxnId))
          .forUpdate()
          .executeTakeFirst();
        if (invoice?.status !== 'active')
          throw new Fault(
            '610',
            'Object Not Found',
            `Object Not Found : Something you're trying to use has been made inactive. Check the fields with accounts, customers, items, vendors or employees. Invoice ${link.TxnId}`,
            400,
            'LinkedTxn',
          );
        if (amount.greaterThan(invoice.balance))
          throw new Fault(
            '6000',
            'A business validation error has occurred while processing your request',
            `Business Validation Error: the payment of ${amount.toFixed()} is more than invoice ${link.TxnId}'s open balance of ${new Decimal(invoice.balance).toFixed()}.`,
          );
        await tx
          .updateTable('qbo_entities')
          .set({ balance: new Decimal(invoice.balance).minus(amount).toFixed() })
          .where('realm_id', '=', realm)
          .where('id', '=', String(link.TxnId))
          .execute();
        applied = applied.plus(amount);
      }
    }
    if (applied.greaterThan(total))
      throw new Fault(
        '6000',
        'A business validation error has occurred while processing your request',
        'Business Validation Error: the lines apply more than TotalAmt.',
      );
    body.UnappliedAmt = Number(total.minus(applied).toFixed());
  } else if (entity === 'JournalEntry') {
    let debit = new Decimal(0);
    let credit = new Decimal(0);
    for (const line of lines) {
      const amount = money(line.Amount, 'Line.Amount');
      if (line.JournalEntryLineDetail?.PostingType === 'Debit') debit = debit.plus(amount);
      else if (line.JournalEntryLineDetail?.PostingType === 'Credit') credit = credit.plus(amount);
      else
        throw new Fault(
          '2020',
          'Required param missing, need to supply the required value for the API',
          'Required parameter PostingType is missing in the request',
          400,
          'PostingType',
        );
      // Each line books to an account (QuickBooks: "Required parameter Line.JournalEntryLineDetail.AccountRef is missing").
      if (!line.JournalEntryLineDetail?.AccountRef?.value)
        throw new Fault(
          '2020',
          'Required param missing, need to supply the required value for the API',
          'Required parameter Line.JournalEntryLineDetail.AccountRef is missing in the request',
          400,
          'AccountRef',
        );
    }
    if (!debit.equals(credit))
      throw new Fault(
        '6000',
        'A business validation error has occurred while processing your request',
        `Business Validation Error: Your Journal Entry is not balanced (debits ${debit.toFixed()}, credits ${credit.toFixed()}).`,
      );
    total = debit;
  } else {
    // A bill's line is an item (goods received: ItemBasedExpenseLineDetail.ItemRef) or an expense account.
    if (
      entity === 'Bill' &&
      lines.some(
        (line) =>
          !line.ItemBasedExpenseLineDetail?.ItemRef?.value && !line.AccountBasedExpenseLineDetail?.AccountRef?.value,
      )
    ) {
      throw new Fault(
        '2020',
        'Required param missing, need to supply the required value for the API',
        'Required parameter Line.ItemBasedExpenseLineDetail.ItemRef or Line.AccountBasedExpenseLineDetail.AccountRef is missing in the request',
        400,
        'ItemRef',
      );
    }
    total = lines
      .reduce((sum, line) => sum.plus(money(line.Amount, 'Line.Amount')), new Decimal(0))
      .plus(body.TxnTaxDetail?.TotalTax === undefined ? 0 : money(body.TxnTaxDetail.TotalTax, 'TotalTax'));
  }
  const { next_id: id } = await tx
    .updateTable('qbo_realms')
    .set((eb) => ({ next_id: eb('next_id', '+', '1') }))
    .where('realm_id', '=', realm)
    .returning('next_id')
    .executeTakeFirstOrThrow();
  const balance = entity === 'Invoice' || entity === 'CreditMemo' ? total : new Decimal(0);
  const deposited = partyName(body).includes('[sim:held]') ? [{ TxnId: `D${String(id)}`, TxnType: 'Deposit' }] : [];
  const stored = {
    ...body,
    Id: String(id),
    ...(deposited.length > 0 ? { LinkedTxn: deposited } : {}),
    SyncToken: '0',
    TxnDate: txnDate,
    TotalAmt: Number(total.toFixed()),
    ...(entity === 'Invoice' ? { Balance: Number(balance.toFixed()) } : {}),
    ...(entity === 'CreditMemo'
      ? { Balance: Number(balance.toFixed()), RemainingCredit: Number(balance.toFixed()) }
      : {}),
    MetaData: { CreateTime: new Date().toISOString(), LastUpdatedTime: new Date().toISOString() },
  };
  await tx
    .insertInto('qbo_entities')
    .values({
      realm_id: realm,
      id: String(id),
      entity,
      doc_number: docNumber,
      txn_date: txnDate,
      total: total.toFixed(),
      balance: balance.toFixed(),
      body: JSON.stringify(stored),
    })
    .execute();
  return { status: 200, body: { [entity]: stored, time: new Date().toISOString() } };
}

async function voidOrDelete(
  tx: SimTx,
  realm: string,
  entity: Entity,
  body: Record<string, any>,
  closed: string | null,
  how: 'void' | 'delete',
): Promise<Answer> {
  if (how === 'void' && !VOIDABLE.includes(entity))
    throw new Fault(
      '4000',
      'Unsupported Operation',
      `The Operation Void for ${entity} is not supported for Quickbooks Online.`,
    );
  const row = await tx
    .selectFrom('qbo_entities')
    .selectAll()
    .where('realm_id', '=', realm)
    .where('entity', '=', entity)
    .where('id', '=', String(body.Id ?? ''))
    .forUpdate()
    .executeTakeFirst();
  if (!row || row.status === 'deleted')
    throw new Fault(
      '610',
      'Object Not Found',
      `Object Not Found : Another user has deleted this transaction. ${entity} ${String(body.Id ?? '')}`,
      400,
      'Id',
    );
  if (String(body.SyncToken ?? '') !== String(row.sync_token))
    throw new Fault(
      '5010',
      'Stale Object Error',
      `Stale Object Error : You and another user were working on the same thing. ${entity} ${row.id} is at SyncToken ${row.sync_token}.`,
      400,
      'SyncToken',
    );
  const txnDate = toDay(row.txn_date);
  if (closed !== null && txnDate <= closed) throw periodClosed(txnDate, closed);
  const stored = row.body as Record<string, any>;
  if (row.status === 'voided') return { status: 200, body: { [entity]: stored, time: new Date().toISOString() } }; // voiding twice changes nothing
  if (((stored.LinkedTxn ?? []) as { TxnType: string }[]).some((link) => link.TxnType === 'Deposit')) {
    throw new Fault(
      '6540',
      'Deposited Transaction cannot be changed',
      `This transaction has been deposited. If you want to change or delete it, you must edit the deposit it appears on and remove it first. ${entity} ${row.id}`,
    );
  }
  if (entity === 'Invoice') {
    const applied = await tx
      .selectFrom('qbo_entities')
      .select('id')
      .where('realm_id', '=', realm)
      .where('entity', '=', 'Payment')
      .where('status', '=', 'active')
      // Payments whose lines link this invoice (the JSON path of QuickBooks' LinkedTxn).
      .where(
        sql<boolean>`body @> ${JSON.stringify({ Line: [{ LinkedTxn: [{ TxnId: row.id, TxnType: 'Invoice' }] }] })}::jsonb`,
      )
      .execute();
    if (applied.length > 0)
      throw new Fault(
        '6000',
        'A business validation error has occurred while processing your request',
        `Business Validation Error: Invoice ${row.id} has payment(s) ${applied.map((p) => p.id).join(', ')} applied; remove them first.`,
      );
  }
  if (entity === 'Payment' && row.status === 'active') {
    for (const line of (stored.Line ?? []) as { Amount: number; LinkedTxn?: { TxnId: string }[] }[]) {
      for (const link of line.LinkedTxn ?? []) {
        await tx
          .updateTable('qbo_entities')
          .set((eb) => ({ balance: eb('balance', '+', String(line.Amount)) }))
          .where('realm_id', '=', realm)
          .where('entity', '=', 'Invoice')
          .where('id', '=', String(link.TxnId))
          .execute();
      }
    }
  }
  const syncToken = row.sync_token + 1;
  const next =
    how === 'void'
      ? {
          ...stored,
          SyncToken: String(syncToken),
          TotalAmt: 0,
          ...(entity === 'Invoice' ? { Balance: 0 } : {}),
          Line: [],
          PrivateNote: `Voided${stored.PrivateNote ? ` ${stored.PrivateNote}` : ''}`,
        }
      : stored;
  await tx
    .updateTable('qbo_entities')
    .set({
      status: how === 'void' ? 'voided' : 'deleted',
      sync_token: syncToken,
      body: JSON.stringify(next),
      total: how === 'void' ? '0' : row.total,
      balance: '0',
      updated_at: new Date(),
    })
    .where('realm_id', '=', realm)
    .where('id', '=', row.id)
    .execute();
  return {
    status: 200,
    body:
      how === 'void'
        ? { [entity]: next, time: new Date().toISOString() }
        : { [entity]: { Id: row.id, status: 'Deleted', domain: 'QBO' }, time: new Date().toISOString() },
  };
}

const toDay = (value: unknown): string =>
  value instanceof Date ? value.toISOString().slice(0, 10) : String(value).slice(0, 10);

async function read(sim: Sim, realm: string, entity: Entity, id: string): Promise<Answer> {
  const row = await sim
    .selectFrom('qbo_entities')
    .select(['body', 'status', 'sync_token'])
    .where('realm_id', '=', realm)
    .where('entity', '=', entity)
    .where('id', '=', id)
    .executeTakeFirst();
  if (!row || row.status === 'deleted')
    throw new Fault(
      '610',
      'Object Not Found',
      `Object Not Found : Something you're trying to use has been made inactive or deleted. ${entity} ${id}`,
      400,
      'Id',
    );
  return { status: 200, body: { [entity]: row.body, time: new Date().toISOString() } };
}

/** `select * from <Entity> where DocNumber = '<x>'`: the one query form the connector uses. */
async function query(sim: Sim, realm: string, text: string): Promise<Answer> {
  const match = /^select \* from (\w+) where DocNumber = '([^']{1,64})'$/i.exec(text.trim());
  const entity = match
    ? Object.values(ENTITIES).find((name) => name.toLowerCase() === match[1]!.toLowerCase())
    : undefined;
  if (!match || !entity)
    throw new Fault(
      '4000',
      'Error parsing query',
      `QueryParserError: only "select * from <Entity> where DocNumber = '<number>'" is supported here: ${text}`,
    );
  const rows = await sim
    .selectFrom('qbo_entities')
    .select(['body'])
    .where('realm_id', '=', realm)
    .where('entity', '=', entity)
    .where('doc_number', '=', match[2]!)
    .where('status', '!=', 'deleted')
    .orderBy('id')
    .execute();
  return {
    status: 200,
    body: {
      QueryResponse:
        rows.length === 0 ? {} : { [entity]: rows.map((row) => row.body), startPosition: 1, maxResults: rows.length },
      time: new Date().toISOString(),
    },
  };
}

async function preferences(sim: Sim, realm: string): Promise<Answer> {
  const company = await sim
    .selectFrom('qbo_realms')
    // The close date as its calendar string.
    .select(sql<string | null>`to_char(book_close_date, 'YYYY-MM-DD')`.as('closed'))
    .where('realm_id', '=', realm)
    .executeTakeFirst();
  return {
    status: 200,
    body: {
      Preferences: { AccountingInfoPrefs: { BookCloseDate: company?.closed ?? null } },
      time: new Date().toISOString(),
    },
  };
}

/** Closes the company's books through `through` (YYYY-MM-DD), or opens them (null): what its accountant would do. */
export async function closeQuickBooksBooks(db: Db, realm: string, through: string | null): Promise<void> {
  const sim = simulatorDb<Tables>(db);
  await sim
    .insertInto('qbo_realms')
    .values({ realm_id: realm, book_close_date: through })
    .onConflict((c) => c.column('realm_id').doUpdateSet({ book_close_date: through }))
    .execute();
}

/** Deposits the entity (links it to a Deposit), as the company's accountant would: QuickBooks then holds it. */
export async function holdQuickBooksEntity(db: Db, realm: string, id: string): Promise<void> {
  await setDeposit(db, realm, id, true);
}

/** Takes the entity out of its deposit again: it can be voided or deleted once more. */
export async function releaseQuickBooksEntity(db: Db, realm: string, id: string): Promise<void> {
  await setDeposit(db, realm, id, false);
}

async function setDeposit(db: Db, realm: string, id: string, deposited: boolean): Promise<void> {
  const sim = simulatorDb<Tables>(db);
  const row = await sim
    .selectFrom('qbo_entities')
    .select(['body', 'sync_token'])
    .where('realm_id', '=', realm)
    .where('id', '=', id)
    .executeTakeFirst();
  if (!row) throw new Error(`The QuickBooks simulator holds no entity ${id} in company ${realm}.`);
  const body = row.body as Record<string, any>;
  const others = ((body.LinkedTxn ?? []) as { TxnType: string }[]).filter((link) => link.TxnType !== 'Deposit');
  // A change by someone else: the SyncToken moves on, so a client holding the old one gets 5010 Stale Object.
  const syncToken = row.sync_token + 1;
  const next = {
    ...body,
    SyncToken: String(syncToken),
    LinkedTxn: deposited ? [...others, { TxnId: `D${id}`, TxnType: 'Deposit' }] : others,
  };
  await sim
    .updateTable('qbo_entities')
    .set({ body: JSON.stringify(next), sync_token: syncToken })
    .where('realm_id', '=', realm)
    .where('id', '=', id)
    .execute();
}

/** The body of the company's active entity of this type with this document number, as QuickBooks would answer it. */
export async function quickBooksEntity(
  db: Db,
  realm: string,
  entity: string,
  docNumber: string,
): Promise<Record<string, any> | null> {
  const row = await simulatorDb<Tables>(db)
    .selectFrom('qbo_entities')
    .select(['body'])
    .where('realm_id', '=', realm)
    .where('entity', '=', entity)
    .where('doc_number', '=', docNumber)
    .where('status', '=', 'active')
    .executeTakeFirst();
  return (row?.body as Record<string, any> | undefined) ?? null;
}

/** How many active (not voided, not deleted) entities the company holds, all or with one document number. */
export async function quickBooksPostingCount(db: Db, realm: string, docNumber?: string): Promise<number> {
  let q = simulatorDb<Tables>(db)
    .selectFrom('qbo_entities')
    .select((eb) => eb.fn.countAll<string>().as('n'))
    .where('realm_id', '=', realm)
    .where('status', '=', 'active');
  if (docNumber !== undefined) q = q.where('doc_number', '=', docNumber);
  return Number((await q.executeTakeFirstOrThrow()).n);
}
