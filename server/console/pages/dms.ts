// DMS documents in the console: the flags filtered by state, reason, salesman, date and type with the count per
// reason; one document with its body, versions, flag history, posting and what it made; re-processing one document
// or every document of a reason (the owner and the members who manage settings) through the same function as the
// operator CLI's `admin dms reprocess` (server/modules/dms/operations.ts). CSV of the list.
import { Router, type Request, type Response } from 'express';
import { sql } from 'kysely';
import type { Db } from '../../platform/database/transaction.js';
import { REASON_CODES, REASON_MEANINGS, type ReasonCode } from '../../modules/dms/reasons.js';
import { reprocessDocuments, whyNotReprocessable } from '../../modules/dms/operations.js';
import { html, type Html } from '../html.js';
import { CONSOLE_PATH, when } from '../layout.js';
import { sendCsv } from '../csv.js';
import { dmsContentFor, manages, seesPersonalData } from '../access.js';
import { recordAction, requireManager, sendNotFound, sendPage, sessionOf, type ConsoleDeps } from '../context.js';
import type { ConsoleSession } from '../sessions.js';

const STATES = ['received', 'posted', 'rejected', 'superseded'] as const;
/**
 * Reasons that re-processing never changes: refused on arrival, before the document took its place among its key's
 * versions (R01, R04, R07: the DMS sends it again corrected), R05 (never), R02 (never sent). No button for them.
 */
const ARRIVAL_OR_FINAL: readonly ReasonCode[] = ['R01', 'R02', 'R04', 'R05', 'R07'];
const PAGE_SIZE = 100;
const CSV_LIMIT = 10_000;
const DATE = /^\d{4}-\d{2}-\d{2}$/;
const CODE = /^[A-Za-z0-9_.\-/]{1,64}$/;

interface Filters {
  state?: string;
  waiting?: boolean;
  reason?: ReasonCode;
  salesman?: string;
  date?: string;
  type?: string;
  /** Keyset: rows updated before this (updated_at, id). */
  before?: { at: Date; id: string };
}

/** The filters of the query string; a value that is not one of the allowed shapes is ignored (and shown as such). */
function filtersOf(req: Request): { filters: Filters; ignored: string[] } {
  const q = req.query as Record<string, unknown>;
  const text = (name: string) => (typeof q[name] === 'string' && q[name] !== '' ? (q[name] as string) : undefined);
  const filters: Filters = {};
  const ignored: string[] = [];
  const state = text('state');
  if (state === 'waiting') filters.waiting = true;
  else if (state && (STATES as readonly string[]).includes(state)) filters.state = state;
  else if (state) ignored.push('state');
  const reason = text('reason');
  if (reason && (REASON_CODES as readonly string[]).includes(reason)) filters.reason = reason as ReasonCode;
  else if (reason) ignored.push('reason');
  for (const name of ['salesman', 'type'] as const) {
    const value = text(name);
    if (value && CODE.test(value)) filters[name] = value;
    else if (value) ignored.push(name);
  }
  const date = text('date');
  if (date && DATE.test(date)) filters.date = date;
  else if (date) ignored.push('date');
  const before = text('before');
  const match = before ? /^(\d{4}-\d{2}-\d{2}T[\d:.]+Z)~([A-Za-z0-9_]{1,64})$/.exec(before) : null;
  if (match && !Number.isNaN(Date.parse(match[1]!))) filters.before = { at: new Date(match[1]!), id: match[2]! };
  else if (before) ignored.push('before');
  return { filters, ignored };
}

function filtered(db: Db, organizationId: string, filters: Filters, options: { reason?: boolean } = {}) {
  let query = db.selectFrom('dms_documents').where('organization_id', '=', organizationId);
  if (filters.waiting) query = query.where('state', '=', 'received').where('waiting_for', 'is not', null);
  if (filters.state) query = query.where('state', '=', filters.state);
  if (filters.reason && options.reason !== false) query = query.where('reason_code', '=', filters.reason);
  if (filters.salesman) query = query.where('salesman_code', '=', filters.salesman);
  if (filters.date) query = query.where('document_date', '=', filters.date);
  if (filters.type) query = query.where('document_type', '=', filters.type);
  return query;
}

const LIST_COLUMNS = [
  'id',
  'document_type',
  'document_number',
  'document_date',
  'salesman_code',
  'state',
  'reason_code',
  'reason_text',
  'note',
  'waiting_for',
  'received_at',
  'updated_at',
] as const;

async function listDocuments(db: Db, organizationId: string, filters: Filters, limit: number) {
  let query = filtered(db, organizationId, filters).select([...LIST_COLUMNS]);
  const before = filters.before;
  if (before)
    query = query.where((eb) =>
      eb.or([eb('updated_at', '<', before.at), eb.and([eb('updated_at', '=', before.at), eb('id', '<', before.id)])]),
    );
  return query.orderBy('updated_at', 'desc').orderBy('id', 'desc').limit(limit).execute();
}

/** Rejected documents per reason code under the other filters (the reason filter itself left out, so every reason shows). */
async function countsByReason(db: Db, organizationId: string, filters: Filters) {
  const rows = await filtered(
    db,
    organizationId,
    { ...filters, state: 'rejected', waiting: false, before: undefined },
    { reason: false },
  )
    // count(*) as a plain template: the same form as the count beside it, which needs FILTER (no builder form).
    .select(['reason_code', sql<string>`count(*)`.as('count')])
    .groupBy('reason_code')
    .orderBy('reason_code')
    .execute();
  return rows.map((row) => ({ reason: row.reason_code as ReasonCode, count: Number(row.count) }));
}

async function countsByState(db: Db, organizationId: string, filters: Filters) {
  const rows = await filtered(db, organizationId, { ...filters, state: undefined, waiting: false, before: undefined })
    // The waiting count is an aggregate with FILTER, which the builder has no form for.
    .select([
      'state',
      sql<string>`count(*)`.as('count'),
      sql<string>`count(*) FILTER (WHERE state = 'received' AND waiting_for IS NOT NULL)`.as('waiting'),
    ])
    .groupBy('state')
    .execute();
  return rows;
}

async function choices(db: Db, organizationId: string) {
  const [types, salesmen] = await Promise.all([
    db
      .selectFrom('dms_documents')
      .select('document_type')
      .distinct()
      .where('organization_id', '=', organizationId)
      .orderBy('document_type')
      .execute(),
    db
      .selectFrom('salespeople')
      .select(['salesman_code', 'name'])
      .where('organization_id', '=', organizationId)
      .orderBy('salesman_code')
      .limit(500)
      .execute(),
  ]);
  return { types: types.map((t) => t.document_type), salesmen };
}

function queryString(filters: Filters, extra: Record<string, string> = {}): string {
  const params = new URLSearchParams();
  if (filters.waiting) params.set('state', 'waiting');
  else if (filters.state) params.set('state', filters.state);
  if (filters.reason) params.set('reason', filters.reason);
  if (filters.salesman) params.set('salesman', filters.salesman);
  if (filters.date) params.set('date', filters.date);
  if (filters.type) params.set('type', filters.type);
  for (const [name, value] of Object.entries(extra)) params.set(name, value);
  const text = params.toString();
  return text ? `?${text}` : '';
}

const NOTICES: Record<string, (count: string) => string> = {
  reprocessed: (count) => `${count} document(s) are received again and will be posted in the next minute.`,
  nothing: () => 'Nothing was re-processed: no document of that selection can be re-processed.',
};

function notice(req: Request): Html {
  const kind = typeof req.query.notice === 'string' ? req.query.notice : '';
  const count = typeof req.query.count === 'string' && /^\d{1,6}$/.test(req.query.count) ? req.query.count : '0';
  const text = NOTICES[kind]?.(count);
  return text ? html`<p class="notice" role="status">${text}</p>` : html``;
}

function select(
  name: string,
  label: string,
  current: string | undefined,
  options: readonly (readonly [string, string])[],
): Html {
  return html`<div class="field"><label for="f-${name}">${label}</label><select id="f-${name}" name="${name}"><option value="">All</option>${options.map(([value, text]) => html`<option value="${value}"${current === value ? html` selected` : ''}>${text}</option>`)}</select></div>`;
}

function stateCell(row: { state: string; reason_code: string | null; waiting_for: string | null }): Html {
  if (row.state === 'rejected') return html`<span class="state-rejected">rejected ${row.reason_code}</span>`;
  if (row.state === 'received' && row.waiting_for) return html`<span class="state-received">waiting</span>`;
  return html`<span class="state-${row.state}">${row.state}</span>`;
}

function reprocessReasonForm(session: ConsoleSession, reason: ReasonCode, filters: Filters): Html {
  if (!manages(session) || ARRIVAL_OR_FINAL.includes(reason)) return html``;
  return html`<form class="inline" method="post" action="${CONSOLE_PATH}/dms/reprocess"><input type="hidden" name="_csrf" value="${session.csrfToken}"><input type="hidden" name="reason" value="${reason}">${filters.date ? html`<input type="hidden" name="date" value="${filters.date}">` : ''}<button type="submit" class="secondary">Re-process all<span class="vh"> ${reason} documents${filters.date ? ` of ${filters.date}` : ''}</span></button></form>`;
}

async function listPage(deps: ConsoleDeps, req: Request, res: Response): Promise<void> {
  const session = sessionOf(res);
  const { filters, ignored } = filtersOf(req);
  if (req.query.format === 'csv') {
    const rows = await listDocuments(deps.db, session.organizationId, { ...filters, before: undefined }, CSV_LIMIT);
    sendCsv(
      res,
      'dms-documents.csv',
      [
        'documentId',
        'documentType',
        'documentNumber',
        'documentDate',
        'salesmanCode',
        'state',
        'reasonCode',
        'reasonText',
        'note',
        'waitingFor',
        'receivedAt',
        'updatedAt',
      ],
      rows.map((r) => [
        r.id,
        r.document_type,
        r.document_number,
        r.document_date,
        r.salesman_code,
        r.state,
        r.reason_code,
        r.reason_text,
        r.note,
        r.waiting_for,
        r.received_at.toISOString(),
        r.updated_at.toISOString(),
      ]),
    );
    return;
  }
  const [rows, reasons, states, { types, salesmen }] = await Promise.all([
    listDocuments(deps.db, session.organizationId, filters, PAGE_SIZE + 1),
    countsByReason(deps.db, session.organizationId, filters),
    countsByState(deps.db, session.organizationId, filters),
    choices(deps.db, session.organizationId),
  ]);
  const shown = rows.slice(0, PAGE_SIZE);
  const last = shown[shown.length - 1];
  const older =
    rows.length > PAGE_SIZE && last
      ? `${CONSOLE_PATH}/dms${queryString(filters, { before: `${last.updated_at.toISOString()}~${last.id}` })}`
      : null;
  const stateCount = (state: string) => Number(states.find((s) => s.state === state)?.count ?? 0);
  const waiting = states.reduce((sum, s) => sum + Number(s.waiting), 0);
  const body = html`${notice(req)}
${ignored.length > 0 ? html`<p class="error" role="alert">Ignored (not a valid value): ${ignored.join(', ')}.</p>` : ''}
<form class="filters" method="get" action="${CONSOLE_PATH}/dms">
${select('state', 'State', filters.waiting ? 'waiting' : filters.state, [
  ['received', 'Received'],
  ['waiting', 'Waiting (R08 wait list)'],
  ['posted', 'Posted'],
  ['rejected', 'Rejected'],
  ['superseded', 'Superseded'],
])}
${select(
  'reason',
  'Reason',
  filters.reason,
  REASON_CODES.map((code) => [code, code] as const),
)}
${select(
  'salesman',
  'Salesman',
  filters.salesman,
  salesmen.map((s) => [s.salesman_code, `${s.salesman_code} ${s.name}`] as const),
)}
<div class="field"><label for="f-date">Document date</label><input id="f-date" name="date" type="date" value="${filters.date ?? ''}"></div>
${select(
  'type',
  'Document type',
  filters.type,
  types.map((t) => [t, t] as const),
)}
<button type="submit">Show</button>
<a href="${CONSOLE_PATH}/dms">Clear</a>
</form>
<h2>By state</h2>
<p>Received ${stateCount('received')} (of which waiting ${waiting}) · Posted ${stateCount('posted')} · Rejected ${stateCount('rejected')} · Superseded ${stateCount('superseded')}</p>
<h2>Rejected, by reason</h2>
${
  reasons.length === 0
    ? html`<p>No rejected documents under these filters.</p>`
    : html`<table>
<thead><tr><th scope="col">Reason</th><th scope="col">Meaning</th><th scope="col" class="num">Documents</th><th scope="col">Action</th></tr></thead>
<tbody>${reasons.map((r) => html`<tr><td><a href="${CONSOLE_PATH}/dms${queryString({ ...filters, state: 'rejected', waiting: false, reason: r.reason, before: undefined })}">${r.reason}</a></td><td>${REASON_MEANINGS[r.reason] ?? ''}</td><td class="num">${r.count}</td><td>${reprocessReasonForm(session, r.reason, filters)}</td></tr>`)}</tbody>
</table>`
}
<h2>Documents</h2>
<p><a href="${CONSOLE_PATH}/dms${queryString(filters, { format: 'csv' })}">Download these documents as CSV</a> (up to ${CSV_LIMIT.toLocaleString('en')})</p>
${
  shown.length === 0
    ? html`<p>No documents under these filters.</p>`
    : html`<table>
<thead><tr><th scope="col">Type</th><th scope="col">Number</th><th scope="col">Date</th><th scope="col">Salesman</th><th scope="col">State</th><th scope="col">Why</th><th scope="col">Updated</th></tr></thead>
<tbody>${shown.map((r) => html`<tr><td>${r.document_type}</td><td><a href="${CONSOLE_PATH}/dms/${r.id}">${r.document_number}</a></td><td class="nowrap">${r.document_date ?? ''}</td><td>${r.salesman_code ?? ''}</td><td>${stateCell(r)}</td><td>${r.state === 'rejected' ? r.reason_text : r.waiting_for ? html`waits for ${r.waiting_for}${r.note ? html`: ${r.note}` : ''}` : (r.note ?? '')}</td><td class="nowrap">${when(r.updated_at)}</td></tr>`)}</tbody>
</table>`
}
${older ? html`<p><a href="${older}">Older documents</a></p>` : ''}`;
  sendPage(res, 'DMS documents', body);
}

async function documentPage(deps: ConsoleDeps, req: Request, res: Response): Promise<void> {
  const session = sessionOf(res);
  const id = String(req.params.id);
  const org = session.organizationId;
  const row = await deps.db
    .selectFrom('dms_documents')
    .selectAll()
    .where('organization_id', '=', org)
    .where('id', '=', id)
    .executeTakeFirst();
  if (!row) {
    sendNotFound(
      res,
      `There is no DMS document ${id} in this organisation.`,
      html`<p><a href="${CONSOLE_PATH}/dms">All DMS documents</a></p>`,
    );
    return;
  }
  const [versions, history, actions, postings, why] = await Promise.all([
    row.natural_key === null
      ? Promise.resolve([])
      : deps.db
          .selectFrom('dms_documents')
          .select(['id', 'version', 'state', 'reason_code', 'dms_status', 'received_at'])
          .where('organization_id', '=', org)
          .where('natural_key', '=', row.natural_key)
          .orderBy('version')
          .execute(),
    deps.db
      .selectFrom('events')
      .select(['id', 'type', 'created_at'])
      .where('organization_id', '=', org)
      .where('resource', '=', 'dms_document')
      .where('record_id', '=', id)
      .orderBy('created_at')
      .orderBy('id')
      .limit(200)
      .execute(),
    deps.db
      .selectFrom('dms_actions')
      .select(['kind', 'status', 'detail', 'created_at', 'updated_at'])
      .where('organization_id', '=', org)
      .where('subject_id', '=', id)
      .execute(),
    row.accounting_type && row.accounting_id
      ? deps.db
          .selectFrom('external_postings')
          .select([
            'id',
            'system',
            'operation',
            'status',
            'attempts',
            'external_ref',
            'reason',
            'last_attempt_at',
            'next_attempt_at',
          ])
          .where('organization_id', '=', org)
          .where('document_type', '=', row.accounting_type)
          .where('document_id', '=', row.accounting_id)
          .orderBy('system')
          .orderBy('operation')
          .execute()
      : Promise.resolve([]),
    whyNotReprocessable(deps.db, org, id),
  ]);
  const content = dmsContentFor(session, row.content);
  // What reprocessDocuments selects (operations.ts): rejected but not R05 and placed among its versions, or held with no retry left.
  const reprocessable =
    (row.state === 'rejected' && row.reason_code !== 'R05' && row.natural_key !== null) ||
    (row.state === 'received' && row.next_attempt_at === null);
  const canReprocess = manages(session) && reprocessable;
  const body = html`${notice(req)}
<dl class="facts">
<dt>State</dt><dd>${stateCell(row)}</dd>
${row.state === 'rejected' ? html`<dt>Reason</dt><dd>${row.reason_code}: ${row.reason_text}</dd>` : ''}
${row.note ? html`<dt>Note</dt><dd>${row.note}</dd>` : ''}
${row.waiting_for ? html`<dt>Waits for</dt><dd>${row.waiting_for}${row.retry_until ? html` (until ${when(row.retry_until)}, then R08)` : ''}</dd>` : ''}
<dt>Type</dt><dd>${row.document_type}</dd>
<dt>Number</dt><dd>${row.document_number}</dd>
<dt>Date</dt><dd>${row.document_date ?? ''}</dd>
<dt>Salesman</dt><dd>${row.salesman_code ?? ''}</dd>
<dt>DMS status</dt><dd>${row.dms_status ?? ''}</dd>
<dt>Received</dt><dd>${when(row.received_at)}</dd>
<dt>Attempts</dt><dd>${row.attempts}${row.next_attempt_at ? html`, next at ${when(row.next_attempt_at)}` : ''}</dd>
<dt>Made</dt><dd>${row.mikono_table ? html`${row.mikono_table} ${row.mikono_id}` : 'nothing yet'}</dd>
${row.quickbooks_ref ? html`<dt>QuickBooks</dt><dd>${row.quickbooks_ref}</dd>` : ''}
</dl>
${
  canReprocess
    ? html`<form method="post" action="${CONSOLE_PATH}/dms/${id}/reprocess"><input type="hidden" name="_csrf" value="${session.csrfToken}"><p><button type="submit">Re-process this document</button> <span class="muted">once its cause is fixed (set-up, period, the document it waits for)</span></p></form>`
    : !reprocessable && why && row.state !== 'posted' && row.state !== 'superseded'
      ? html`<p class="muted">${why}</p>`
      : ''
}
<h2>Postings in the external systems</h2>
${
  postings.length === 0
    ? html`<p>None.</p>`
    : html`<table><thead><tr><th scope="col">System</th><th scope="col">Operation</th><th scope="col">Status</th><th scope="col" class="num">Attempts</th><th scope="col">Reference</th><th scope="col">Why</th><th scope="col">Last attempt</th></tr></thead>
<tbody>${postings.map((p) => html`<tr><td>${manages(session) ? html`<a href="${CONSOLE_PATH}/postings/${p.id}">${p.system}<span class="vh"> posting: what the system holds</span></a>` : p.system}</td><td>${p.operation}</td><td>${p.status}</td><td class="num">${p.attempts}</td><td>${p.external_ref ?? ''}</td><td>${p.reason ?? ''}</td><td>${when(p.last_attempt_at)}</td></tr>`)}</tbody></table>`
}
<h2>Versions</h2>
${
  versions.length === 0
    ? html`<p>This document took no place among versions (refused on arrival).</p>`
    : html`<table><thead><tr><th scope="col" class="num">Version</th><th scope="col">Document</th><th scope="col">DMS status</th><th scope="col">State</th><th scope="col">Received</th></tr></thead>
<tbody>${versions.map((v) => html`<tr><td class="num">${v.version}</td><td>${v.id === id ? html`${v.id} (this one)` : html`<a href="${CONSOLE_PATH}/dms/${v.id}">${v.id}</a>`}</td><td>${v.dms_status ?? ''}</td><td>${v.state}${v.reason_code ? ` ${v.reason_code}` : ''}</td><td>${when(v.received_at)}</td></tr>`)}</tbody></table>`
}
<h2>Flag history</h2>
<table><thead><tr><th scope="col">When</th><th scope="col">What</th></tr></thead>
<tbody><tr><td>${when(row.received_at)}</td><td>received</td></tr>
${history.map((e) => html`<tr><td>${when(e.created_at)}</td><td>flag changed (${e.type})</td></tr>`)}
${actions.map((a) => html`<tr><td>${when(a.updated_at)}</td><td>${a.kind}: ${a.detail ?? a.status}</td></tr>`)}
<tr><td>${when(row.updated_at)}</td><td>now ${row.state}${row.reason_code ? ` ${row.reason_code}` : ''}</td></tr></tbody></table>
${row.result ? html`<h2>What posting found</h2><pre tabindex="0" role="region" aria-label="What posting found">${JSON.stringify(row.result, null, 2)}</pre>` : ''}
<h2>Body as received</h2>
${seesPersonalData(session) ? '' : html`<p class="muted">Personal fields (phone, tax ID) are left out for your role.</p>`}
<pre tabindex="0" role="region" aria-label="Body as received">${JSON.stringify(content, null, 2)}</pre>
<p><a href="${CONSOLE_PATH}/dms">All DMS documents</a></p>`;
  sendPage(res, `${row.document_type} ${row.document_number}`, body);
}

export function dmsRoutes(deps: ConsoleDeps): Router {
  const router = Router();
  const wrap =
    (fn: (deps: ConsoleDeps, req: Request, res: Response) => Promise<void>) =>
    (req: Request, res: Response, next: (e?: unknown) => void) =>
      fn(deps, req, res).catch(next);
  router.get('/dms', wrap(listPage));
  router.get('/dms/:id', wrap(documentPage));
  router.post(
    '/dms/:id/reprocess',
    requireManager,
    wrap(async (d, req, res) => {
      const session = sessionOf(res);
      const id = String(req.params.id);
      const ids = await reprocessDocuments(d.db, session.organizationId, { documentId: id });
      recordAction(d, req, res, 303);
      res.redirect(
        303,
        `${CONSOLE_PATH}/dms/${encodeURIComponent(id)}?notice=${ids.length > 0 ? 'reprocessed' : 'nothing'}&count=${ids.length}`,
      );
    }),
  );
  router.post(
    '/dms/reprocess',
    requireManager,
    wrap(async (d, req, res) => {
      const session = sessionOf(res);
      const body = req.body as Record<string, unknown>;
      const reason =
        typeof body.reason === 'string' &&
        (REASON_CODES as readonly string[]).includes(body.reason) &&
        body.reason !== 'R05'
          ? body.reason
          : null;
      const date = typeof body.date === 'string' && DATE.test(body.date) ? body.date : undefined;
      if (!reason) {
        sendPage(
          res,
          'Refused',
          html`<p class="error" role="alert">Choose a reason code to re-process (R05 never can be).</p>`,
          422,
        );
        return;
      }
      const ids = await reprocessDocuments(d.db, session.organizationId, {
        reasons: [reason],
        ...(date ? { date } : {}),
      });
      recordAction(d, req, res, 303);
      res.redirect(
        303,
        `${CONSOLE_PATH}/dms?state=rejected&notice=${ids.length > 0 ? 'reprocessed' : 'nothing'}&count=${ids.length}`,
      );
    }),
  );
  return router;
}
