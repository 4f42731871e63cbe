// Sends the planned requests one after the other and judges each answer.
//
// What passes: the answer is 2xx, its status is one the operation documents, and its headers and body are
// valid against the document (responseContract, the checker every test uses). Anything else fails, a documented
// 4xx included: the examples are the document's own requests, sent with a key that holds the scopes, so they are
// expected to succeed; a 4xx means the example or the deployment is wrong, and the line says which problem came
// back. A 401 or 5xx always fails. A request the document does not let us build (a required parameter or body
// without an example) fails too, without being sent, and so does a write that needs a record this run did not
// write (its create failed): a write is never bound to a record that was there before the run (bind.ts).
// An operation read by a signed URL (`x-signed-url`, a photo) is sent with a URL a record of its list links; when
// no record links one (a fresh organisation), its example URL is sent instead and passes only when it is refused
// as documented (403 invalid_signature: no deployment signed the example).
import { randomBytes } from 'node:crypto';
import { LiveRecords, placeholdersIn, prefixOf } from './bind.js';
import { exchange, type Answer } from './exchange.js';
import { DmsExamples, type DmsChanges } from './dms.js';
import { freshenCodes, newRunNumber } from './fresh-codes.js';
import type { Json } from './operations.js';
import { isRead, planRequests, type PlannedRequest } from './plan.js';
import { responseContract } from './response-contract.js';

export interface ContractRunOptions {
  document: Json;
  /** The API root, `http://host:port/api/v1`, without a trailing slash. */
  apiRoot: string;
  key: string;
  timeoutMs: number;
  /** Names this run in request ids and Idempotency-Keys. */
  runId?: string;
  /**
   * The distributor code of the organisation's DMS connection (--dms): the DMS examples are sent, with that code and
   * numbers made new for the run (dms.ts). Without it they are skipped.
   */
  dmsDistributorCode?: string;
  /** Filled in as the run goes: what it changed in the organisation. */
  changes?: RunChanges;
}

/** What a run changed, for its report. */
export interface RunChanges {
  /** The records it wrote (created, or changed by a write that named them), by kind (id prefix). */
  written: [string, string[]][];
  /** What it sent to the DMS connection; undefined when the DMS examples were skipped. */
  dms?: DmsChanges;
  /** The requests it skipped because they send DMS documents. */
  dmsSkipped: number;
}

export interface Outcome {
  request: PlannedRequest;
  passed: boolean;
  /** Nothing was sent for it (its request could not be built, or it needs a record this run did not write). */
  notSent?: boolean;
  /** Not sent, and not a failure: it acts on live records only the service writes, and the organisation has none. */
  skipped?: boolean;
  status?: number;
  ms?: number;
  requestId: string;
  /** Why it failed: the first violation, or the problem the deployment answered, or why nothing was sent. */
  reason?: string;
  /** Every violation of the document found in the answer. */
  violations: string[];
  /** What the command did beyond sending the example as it stands. */
  notes: string[];
  /** What was sent, for --verbose. */
  sent?: { url: string; body?: string };
}

export function newRunId(): string {
  return randomBytes(4).toString('hex');
}

export async function* checkDeployment(options: ContractRunOptions): AsyncGenerator<Outcome> {
  const { document, apiRoot, key, timeoutMs } = options;
  const runId = options.runId ?? newRunId();
  // `paths: null` describes no operations, like `paths: {}` (the checker expects an object).
  const contract = responseContract(document.paths ? document : { ...document, paths: {} });
  const plan = planRequests(document);
  const lists = listPathsByKind(plan);
  const records = new LiveRecords(async (prefix) => {
    const path = lists.get(prefix);
    if (!path) return [];
    const answer = await exchange(
      {
        method: 'GET',
        url: apiRoot + path,
        headers: { Authorization: `Bearer ${key}`, 'X-Request-Id': `contract-${runId}-list-${prefix}` },
      },
      timeoutMs,
    );
    if (answer.status !== 200) return [];
    return ((JSON.parse(answer.bodyText) as { data?: { id?: unknown }[] }).data ?? []).flatMap((r) =>
      typeof r.id === 'string' ? [r.id] : [],
    );
  });
  let runNumber = newRunNumber();
  const dms = options.dmsDistributorCode ? new DmsExamples(options.dmsDistributorCode, newRunNumber) : undefined;
  const changes = options.changes;
  if (changes) changes.dms = dms?.changes;
  /** Kinds of record (id prefixes) only writes that were skipped would have made: a read of one is skipped too. */
  const skippedKinds = new Set<string>();
  /** Kinds of record a write of the plan makes. */
  const writtenKinds = new Set(plan.filter((r) => !isRead(r.method)).flatMap((r) => r.produces));
  /**
   * External codes a create of this run made new, by the example's code: a read by code whose example names one is
   * sent with the new code (a credit note has no upsert by code, so only its create gives it the code it is read by).
   */
  const freshCodeOf = new Map<string, string>();
  let sequence = 0;
  /** The writes that did not succeed, with their request ids: the lines a write not sent for want of a record points to. */
  const failedWrites: { request: PlannedRequest; requestId: string }[] = [];
  const judged = (outcome: Outcome): Outcome => {
    if (
      !isRead(outcome.request.method) &&
      !(outcome.status !== undefined && outcome.status >= 200 && outcome.status < 300)
    ) {
      failedWrites.push({ request: outcome.request, requestId: outcome.requestId });
    }
    return outcome;
  };

  for (const request of plan) {
    sequence += 1;
    const requestId = `contract-${runId}-${String(sequence).padStart(2, '0')}`;
    if (request.unusable) {
      yield judged({
        request,
        passed: false,
        notSent: true,
        requestId,
        reason: `not sent: ${request.unusable}`,
        violations: [],
        notes: [],
      });
      continue;
    }
    const notes: string[] = [];
    const write = !isRead(request.method);
    if (request.dms && !dms) {
      for (const prefix of request.produces) skippedKinds.add(prefix);
      if (changes) changes.dmsSkipped += 1;
      yield {
        request,
        passed: true,
        notSent: true,
        skipped: true,
        requestId,
        violations: [],
        notes: [],
        reason:
          "skipped: it sends DMS documents, which the service keeps for good and posts (stock, money, waits, the day's reconciliation); --dms DISTRIBUTOR_CODE sends them, into an organisation kept for this check",
      };
      continue;
    }
    const bound = await records.bind(
      { path: request.pathParameters, query: request.query, headers: request.headers, body: request.body?.value },
      write && !request.liveRecords,
    );
    if (write && request.liveRecords && bound.unbound.length > 0) {
      const kinds = [...new Set(bound.unbound.map((p) => prefixOf(p)!))].join(', ');
      yield {
        request,
        passed: true,
        notSent: true,
        skipped: true,
        requestId,
        reason: `skipped: the organisation has no ${kinds} record to act on (only the service writes them)`,
        violations: [],
        notes: [],
      };
      continue;
    }
    if (write && bound.unbound.length > 0) {
      const reason = `not sent: ${missingRecords(bound.unbound, failedWrites, records)}`;
      yield judged({ request, passed: false, notSent: true, requestId, reason, violations: [], notes: [] });
      continue;
    }
    if (!write && !request.signedUrl && bound.unbound.length > 0) {
      // No record to read, and none this run could make: the organisation has none of a kind only the service writes
      // (a trip), or the writes that make one were skipped. Not a failure of the deployment; nothing to check.
      const kinds = [...new Set(bound.unbound.map((p) => prefixOf(p)!))];
      const unmade = kinds.filter((prefix) => !writtenKinds.has(prefix) || skippedKinds.has(prefix));
      if (unmade.length === kinds.length) {
        const why = unmade.every((prefix) => skippedKinds.has(prefix))
          ? 'the writes that make one were skipped'
          : 'no request of this check writes one; the service does';
        yield {
          request,
          passed: true,
          notSent: true,
          skipped: true,
          requestId,
          reason: `skipped: the organisation has no ${kinds.join(', ')} record to read (${why})`,
          violations: [],
          notes: [],
        };
        continue;
      }
    }
    if (bound.unbound.length > 0) notes.push(`no live record for ${bound.unbound.join(', ')}: sent as it is`);
    const exampleCode = bound.value.path.code;
    if (!write && typeof exampleCode === 'string' && freshCodeOf.has(exampleCode)) {
      bound.value.path.code = freshCodeOf.get(exampleCode)!;
      notes.push(`read by the code this run's create made new: ${bound.value.path.code}`);
    }
    const isCreate = request.method === 'POST' && request.phase === 'create';
    let liveUrl: string | undefined;
    if (request.signedUrl) {
      liveUrl = await linkedUrl(apiRoot, key, request.signedUrl, timeoutMs, `contract-${runId}-link-${sequence}`);
      notes.push(
        liveUrl
          ? `sent the ${request.signedUrl.field} of a ${request.signedUrl.list} record, not the example's URL`
          : `no ${request.signedUrl.list} record has a ${request.signedUrl.field}: sent the example's URL, which must be refused (403 invalid_signature)`,
      );
    }

    const send = async (body: unknown) => {
      const path = request.template.replace(/\{([^}]+)\}/g, (_, name: string) =>
        encodeURIComponent(String(bound.value.path[name])),
      );
      const query = new URLSearchParams(
        Object.entries(bound.value.query).flatMap(([name, value]) =>
          (Array.isArray(value) ? value : [value]).map((v): [string, string] => [name, String(v)]),
        ),
      );
      const headers: Record<string, string> = {
        ...bound.value.headers,
        Authorization: `Bearer ${key}`,
        'X-Request-Id': requestId,
      };
      if (!['GET', 'HEAD', 'OPTIONS', 'TRACE', 'DELETE'].includes(request.method))
        headers['Idempotency-Key'] = `contract-${runId}-${sequence}-${randomBytes(6).toString('hex')}`;
      let text: string | undefined;
      if (request.body) {
        headers['Content-Type'] = request.body.mediaType;
        text = typeof body === 'string' && !/json$/.test(request.body.mediaType) ? body : JSON.stringify(body);
      }
      if (liveUrl) {
        const live = new URL(liveUrl);
        return {
          path: live.pathname.slice(new URL(apiRoot).pathname.length),
          url: liveUrl,
          text,
          answer: await exchange({ method: request.method, url: liveUrl, headers, body: text }, timeoutMs),
        };
      }
      const url = apiRoot + path + (query.size > 0 ? `?${query}` : '');
      return {
        path,
        url,
        text,
        answer: await exchange({ method: request.method, url, headers, body: text }, timeoutMs),
      };
    };

    let result: Awaited<ReturnType<typeof send>>;
    try {
      let body = bound.value.body;
      if (dms && request.dms) {
        const all = plan
          .filter((r) => r.method === request.method && r.template === request.template)
          .map((r) => r.body?.value);
        const prepared = dms.prepare(`${request.method} ${request.template}`, body, all);
        body = prepared.body;
        notes.push(...prepared.notes);
      }
      let fresh = (isCreate && !request.dms) || request.method === 'PATCH' ? freshenCodes(body, runNumber) : undefined;
      if (fresh && fresh.fields.length > 0) body = fresh.body;
      result = await send(body);
      // Six digits can still meet a code an earlier run made: one more try with other digits.
      if (
        fresh &&
        fresh.fields.length > 0 &&
        result.answer.status === 422 &&
        namesAny(result.answer.bodyText, fresh.fields)
      ) {
        runNumber = newRunNumber();
        fresh = freshenCodes(bound.value.body, runNumber);
        result = await send(fresh.body);
      }
      if (fresh && fresh.fields.length > 0) notes.push(`codes made new for this run: ${fresh.codes.join(', ')}`);
      if (fresh && result.answer.status >= 200 && result.answer.status < 300) {
        const given =
          (bound.value.body as { externalCodes?: Record<string, unknown> } | undefined)?.externalCodes ?? {};
        const made = (fresh.body as { externalCodes?: Record<string, unknown> }).externalCodes ?? {};
        for (const [system, code] of Object.entries(given)) {
          if (typeof code === 'string' && typeof made[system] === 'string' && !freshCodeOf.has(code))
            freshCodeOf.set(code, made[system] as string);
        }
      }
    } catch (error) {
      yield judged({
        request,
        passed: false,
        requestId,
        reason: `no answer: ${(error as Error).message}`,
        violations: [],
        notes,
      });
      continue;
    }
    const { answer, path, url, text } = result;
    if (answer.waitedSeconds > 0) notes.push(`rate-limited: waited ${answer.waitedSeconds} s`);
    const violations = contract
      .check({
        method: request.method,
        path,
        status: answer.status,
        headers: answer.headers,
        bodyText: answer.bodyText,
      })
      .map((v) => v.replace(/^[A-Z]+ \S+ -> \d+: /, ''));
    const success =
      request.signedUrl && !liveUrl
        ? answer.status === 403 &&
          (parseJson(answer.bodyText) as { code?: string } | undefined)?.code === 'invalid_signature'
        : answer.status >= 200 && answer.status < 300;
    // A DMS push answers 2xx whatever its documents are: each flag says. A rejected one fails (unless declared).
    const flagProblem =
      success && dms && request.dms ? dms.judge(parseJson(answer.bodyText), request.expectedFlags) : undefined;
    if (success && write) {
      // The records it wrote: those its answer returns, and those its path or body names.
      const referenced = placeholdersIn([request.pathParameters, request.body?.value]).flatMap(
        (p) => records.boundTo(p) ?? [],
      );
      records.learn(parseJson(answer.bodyText), referenced);
    }
    if (changes) changes.written = records.writtenByKind();
    const passed = success && violations.length === 0 && !flagProblem;
    yield judged({
      request,
      passed,
      status: answer.status,
      ms: answer.ms,
      requestId,
      violations,
      notes,
      sent: { url, body: text },
      reason: passed
        ? undefined
        : flagProblem
          ? `flag ${flagProblem}${violations.length > 0 ? `; ${violations[0]}` : ''}`
          : reasonOf(answer, violations, success),
    });
  }
}

/** The first signed URL a record of `link.list` holds in `link.field`, if any (the list read with the run's key). */
async function linkedUrl(
  apiRoot: string,
  key: string,
  link: { list: string; field: string },
  timeoutMs: number,
  requestId: string,
): Promise<string | undefined> {
  const answer = await exchange(
    {
      method: 'GET',
      url: `${apiRoot}${link.list}?limit=100`,
      headers: { Authorization: `Bearer ${key}`, 'X-Request-Id': requestId },
    },
    timeoutMs,
  );
  if (answer.status !== 200) return undefined;
  const records = (parseJson(answer.bodyText) as { data?: Record<string, unknown>[] } | undefined)?.data ?? [];
  const url = records.map((record) => record[link.field]).find((value): value is string => typeof value === 'string');
  return url;
}

/** The GET collection that lists each kind of record (by the id prefix its examples carry). */
function listPathsByKind(plan: PlannedRequest[]): Map<string, string> {
  const paths = new Map<string, string>();
  for (const request of plan) {
    if (request.method !== 'GET' || request.template.includes('{')) continue;
    for (const prefix of request.produces) if (!paths.has(prefix)) paths.set(prefix, request.template);
  }
  return paths;
}

/**
 * Why a write was not sent: which kinds of record it needs that this run did not write, and the lines of the
 * writes of those kinds that failed.
 */
function missingRecords(
  unbound: string[],
  failedWrites: { request: PlannedRequest; requestId: string }[],
  records: LiveRecords,
): string {
  const kinds = [...new Set(unbound.map((p) => prefixOf(p)!))];
  const ofKind = failedWrites.filter(({ request }) => request.produces.some((prefix) => kinds.includes(prefix)));
  const creates = ofKind.filter(({ request }) => request.phase === 'create');
  const failed = creates.length > 0 ? creates : ofKind;
  const written = kinds.reduce((sum, prefix) => sum + records.writtenCount(prefix), 0);
  const why =
    failed.length > 0
      ? `see ${failed.map(({ request, requestId }) => `${request.method} ${request.template}${request.exampleName ? ` (example: ${request.exampleName})` : ''} [${requestId}]`).join(', ')}`
      : written > 0
        ? `the ${written} it wrote stand for other ids of the examples, and two ids never share a record`
        : 'no write before it returned one';
  return `the record${kinds.length > 1 ? 's' : ''} it needs (${kinds.join(', ')}) ${kinds.length > 1 ? 'were' : 'was'} not created by this run (${why})`;
}

function reasonOf(answer: Answer, violations: string[], success: boolean): string {
  const more = violations.length > 1 ? ` (and ${violations.length - 1} more)` : '';
  if (success) return violations[0]! + more;
  const problem = parseJson(answer.bodyText) as
    | { code?: string; detail?: string; errors?: { field?: string; message?: string }[] }
    | undefined;
  const field = problem?.errors?.[0];
  const told = problem?.code
    ? `${problem.code}: ${problem.detail ?? ''}${field?.field ? ` [${field.field}: ${field.message ?? ''}]` : ''}`
    : `${answer.status} with ${answer.bodyText.length === 0 ? 'no body' : `body ${JSON.stringify(answer.bodyText.slice(0, 200))}`}`;
  return violations.length > 0 ? `${told}; ${violations[0]}${more}` : told;
}

function namesAny(bodyText: string, fields: string[]): boolean {
  const problem = parseJson(bodyText) as { errors?: { field?: string }[] } | undefined;
  return (problem?.errors ?? []).some((e) => fields.includes(e.field ?? ''));
}

function parseJson(text: string): unknown {
  try {
    return JSON.parse(text);
  } catch {
    return undefined;
  }
}
