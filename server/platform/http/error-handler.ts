// Turns whatever went wrong into the spec's problem documents. The mapping of the validator's and the body
// parser's errors onto our codes lives here and only here.
import type { ErrorRequestHandler, Request } from 'express';
import type { Logger } from 'pino';
import { ApiError, type FieldError } from '../errors/api-error.js';
import { sendProblem } from '../errors/problem.js';
import type { ApiDocument } from '../spec.js';
import { closestName, fieldHints } from './field-hints.js';
import { operationOf } from './known-operation.js';
import { JSON_BODY_LIMIT_BYTES, NOT_UTF8 } from './json-body.js';

interface ValidatorErrorItem {
  path: string;
  message: string;
  errorCode?: string;
}

interface HttpLikeError {
  status?: number;
  statusCode?: number;
  type?: string;
  path?: string;
  message: string;
  errors?: ValidatorErrorItem[];
}

/** When a request has several field problems, the problem's `code` is the first of these that occurs. */
const FIELD_CODE_PRECEDENCE = ['idempotency_key_required', 'unknown_field', 'required_field', 'invalid_field'] as const;
const UNKNOWN_PROPERTY_ERRORS = ['additionalProperties.openapi.validation', 'unevaluatedProperties.openapi.validation'];
/** Summaries of alternatives (`oneOf` of an object or null): they only repeat what the branches said. */
const ALTERNATIVE_SUMMARY = /^must (match (exactly one|a) schema in (oneOf|anyOf)|be null|match "(then|else)" schema)$/;
/**
 * At most this many field problems are listed in `errors[]`; the detail gives the total. A body of 45,000 unknown
 * fields once made an 11.6 MB answer and held the event loop for seconds while each got its hint: a caller fixes
 * the first fifty and sends again.
 */
export const MAX_FIELD_ERRORS = 50;

export function errorHandler(logger: Logger, document: ApiDocument): ErrorRequestHandler {
  const hints = fieldHints(document);
  return (error: unknown, req, res, _next) => {
    const apiError = toApiError(error, req, (pointer) => hints.allowedAt(operationOf(res), pointer));
    if (apiError.status >= 500) {
      logger.error(
        { err: error, requestId: res.locals.requestId, method: req.method, path: req.originalUrl },
        'request failed',
      );
    }
    if (res.headersSent) {
      res.end();
      return;
    }
    // Refused before its body was read whole (401 before the body, 413 at the limit, a broken upload): the
    // connection closes after the answer instead of reading the rest only to throw it away.
    const carriesBody =
      Number(req.headers['content-length'] ?? 0) > 0 || req.headers['transfer-encoding'] !== undefined;
    if (carriesBody && !req.complete) res.setHeader('Connection', 'close');
    sendProblem(res, apiError);
  };
}

function toApiError(error: unknown, req: Request, allowedAt: (pointer: string) => string[]): ApiError {
  if (error instanceof ApiError) return error;
  const e = (error ?? {}) as HttpLikeError;
  const status = e.status ?? e.statusCode;

  // express.json (body-parser) reports these before the validator sees the request.
  const bodyProblem = bodyParserProblem(e, req);
  if (bodyProblem) return bodyProblem;

  // A path segment that is not valid percent-encoded UTF-8, on a path the validator leaves to its module (the DMS
  // push): the router could not decode its parameter (express marks that URIError 400).
  if (error instanceof URIError && status === 400) {
    return new ApiError('invalid_field', 'A path segment is not valid percent-encoded UTF-8.', [
      { field: '/path', code: 'invalid_field', message: 'not valid percent-encoded UTF-8' },
    ]);
  }

  // A value the validator let through but PostgreSQL refuses (class 22, "data exception": out of range,
  // overflow, bad encoding). Modules check these first and name the field; this is the backstop that keeps
  // them from ever being a 500.
  const sqlState = (error as { code?: unknown } | null)?.code;
  if (typeof sqlState === 'string' && /^22[0-9A-Z]{3}$/.test(sqlState)) {
    return new ApiError('invalid_field', `A value is outside what can be stored: ${e.message}.`);
  }

  if (Array.isArray(e.errors) && typeof status === 'number') {
    // express-openapi-validator
    if (status === 400) return validationProblem(e.errors, allowedAt);
    if (status === 404 || status === 405) {
      return new ApiError(
        'not_found',
        `${req.method} ${req.path} is not an operation of this API. See GET /api/v1/openapi.json.`,
      );
    }
    if (status === 415) {
      return new ApiError(
        'unsupported_media_type',
        `Content-Type ${req.headers['content-type'] ?? '(none)'} is not accepted here; send application/json.`,
      );
    }
    if (status === 413) return new ApiError('payload_too_large', 'The body is over the limit for this operation.');
  }
  return new ApiError(
    'server_error',
    'The service failed to complete the request. It is safe to retry with the same Idempotency-Key; quote the request id to support if it persists.',
  );
}

/** Content-Encodings the body parser undoes; any other is 415. */
const ACCEPTED_ENCODINGS = 'gzip, deflate, br or identity';

/**
 * Every error the body parser can raise, as the problem the caller can act on. Its errors are http-errors with a
 * `type`; a body that does not decompress is a zlib error that carries only `status: 400` and a zlib `code`.
 * Anything else it marks as the caller's fault (a 4xx status) is still the body's fault: never a 500.
 */
function bodyParserProblem(e: HttpLikeError & { code?: unknown }, req: Request): ApiError | null {
  const encoding = req.headers['content-encoding'];
  switch (e.type) {
    case 'entity.parse.failed':
      return new ApiError('invalid_json', `The body is not valid JSON: ${e.message}.`);
    case NOT_UTF8:
      return new ApiError('invalid_json', `${e.message}.`);
    case 'entity.too.large':
      return new ApiError(
        'payload_too_large',
        `The body is larger than the ${JSON_BODY_LIMIT_BYTES / 1024 / 1024} MB accepted for JSON (counted after decompression).`,
      );
    case 'encoding.unsupported':
      return new ApiError(
        'unsupported_media_type',
        `Content-Encoding ${String(encoding)} is not accepted: send the body as ${ACCEPTED_ENCODINGS}.`,
      );
    case 'charset.unsupported':
      return new ApiError('unsupported_media_type', `${e.message}. Send UTF-8 JSON.`);
    case 'request.size.invalid':
      return new ApiError('invalid_json', 'The body is shorter or longer than its Content-Length says.');
    case 'request.aborted':
      return new ApiError('invalid_json', 'The body ended before it was complete.');
  }
  const status = e.status ?? e.statusCode;
  if (
    status === 400 &&
    e.type === undefined &&
    !Array.isArray(e.errors) &&
    encoding !== undefined &&
    typeof e.code === 'string'
  ) {
    return new ApiError(
      'invalid_json',
      `The body is marked Content-Encoding: ${String(encoding)} but is not valid ${String(encoding)} data (${e.message}). Send the encoding the header names, or no Content-Encoding.`,
    );
  }
  if (e.type !== undefined && typeof status === 'number' && status >= 400 && status < 500) {
    return new ApiError('invalid_json', `The body could not be read: ${e.message}.`);
  }
  return null;
}

function validationProblem(items: ValidatorErrorItem[], allowedAt: (pointer: string) => string[]): ApiError {
  // Linear in the number of problems: the fields allowed at a place are read once per place (a body of thousands of
  // unknown fields at its top level asks once), and summaries of alternatives are dropped by a set of the fields
  // that have a problem of their own, not by comparing every pair.
  const allowedOnce = new Map<string, string[]>();
  const allowedCached = (pointer: string) => {
    const parent = pointer.slice(0, pointer.lastIndexOf('/') + 1);
    let allowed = allowedOnce.get(parent);
    if (allowed === undefined) {
      allowed = allowedAt(pointer);
      allowedOnce.set(parent, allowed);
    }
    return allowed;
  };
  const seen = new Set<string>();
  const all: FieldError[] = [];
  for (const item of items) {
    const e = toFieldError(item);
    const key = `${e.field}\u0000${e.code}\u0000${e.message}`;
    if (!seen.has(key)) {
      seen.add(key);
      all.push(e);
    }
  }
  // Summaries of alternatives repeat a field's own problem, or one of a field below it: dropped when one is listed.
  // Every field with a problem that is not a summary, and each of its parents, is "explained" (only when there are
  // summaries at all: most requests have none).
  const isSummary = all.map((e) => ALTERNATIVE_SUMMARY.test(e.message));
  let errors = all;
  if (isSummary.some(Boolean)) {
    const explained = new Set<string>();
    all.forEach((e, i) => {
      if (isSummary[i]) return;
      for (let field = e.field; ; field = field.slice(0, field.lastIndexOf('/'))) {
        if (explained.has(field)) break;
        explained.add(field);
        if (field === '') break;
      }
    });
    errors = all.filter((e, i) => !isSummary[i] || !explained.has(e.field));
  }
  const code = FIELD_CODE_PRECEDENCE.find((c) => errors.some((f) => f.code === c)) ?? 'invalid_field';
  // The problems of the problem's own code first, so the capped list shows what the detail speaks of; only those
  // listed get their hint (the allowed fields, the near miss).
  const ofCode = errors.filter((f) => f.code === code);
  const ordered = [...ofCode, ...errors.filter((f) => f.code !== code)];
  const listedErrors = ordered
    .slice(0, MAX_FIELD_ERRORS)
    .map((f) => (f.code === 'unknown_field' ? unknownField(f.field, allowedCached) : f));
  // The detail is a sentence a person can act on: each field of the problem's code with what is wrong with it.
  const problems = listedErrors
    .filter((f) => f.code === code)
    .slice(0, 5)
    .map((f) => `\`${f.field || '(body)'}\` ${f.message}`);
  const listed = problems.join('; ') + (ofCode.length > 5 ? `; and ${ofCode.length - 5} more` : '');
  const end = /[.?]$/.test(listed) ? '' : '.';
  const capped =
    ordered.length > MAX_FIELD_ERRORS
      ? ` ${ordered.length} problems in all; errors[] lists the first ${MAX_FIELD_ERRORS}.`
      : '';
  const detail = {
    idempotency_key_required:
      'This create needs an Idempotency-Key header (1 to 255 characters): make one per operation and reuse it on every retry.',
    unknown_field: `The request has fields this operation does not accept: ${listed}${end}`,
    required_field: `Required fields are missing: ${listed}${end}`,
    invalid_field: `Some fields are invalid: ${listed}${end}`,
  }[code];
  return new ApiError(code, detail + capped, listedErrors);
}

/** The plain problem of one validator error; an unknown field's hint is added later, only to those listed. */
function toFieldError(item: ValidatorErrorItem): FieldError {
  const unknownQuery = item.message.startsWith('Unknown query parameter')
    ? /^Unknown query parameter '(.+)'$/.exec(item.message)
    : null;
  if (unknownQuery)
    return { field: `/query/${unknownQuery[1]}`, code: 'unknown_field', message: 'is not a field here' };
  const field = toPointer(item.path);
  if (UNKNOWN_PROPERTY_ERRORS.includes(item.errorCode ?? ''))
    return { field, code: 'unknown_field', message: 'is not a field here' };
  if (item.errorCode === 'required.openapi.validation') {
    if (field === '/header/Idempotency-Key')
      return { field, code: 'idempotency_key_required', message: 'required on this create' };
    return { field, code: 'required_field', message: 'is required' };
  }
  return {
    field,
    code: 'invalid_field',
    message: item.message.replace(/^must be equal to one of the allowed values: /, 'must be one of: '),
  };
}

/** An unknown field, with the near miss it probably meant, or else the fields allowed there. */
function unknownField(field: string, allowedAt: (pointer: string) => string[]): FieldError {
  const sent = field.slice(field.lastIndexOf('/') + 1);
  const allowed = allowedAt(field);
  const guess = closestName(sent, allowed);
  const message =
    guess !== null
      ? `is not a field here; did you mean \`${guess}\`?`
      : allowed.length > 0
        ? `is not a field here; the fields here are ${allowed.join(', ')}`
        : 'is not a field here';
  return { field, code: 'unknown_field', message };
}

/** The validator says `/body/lines/0/qty`, `/query/limit`, `/headers/idempotency-key`; we say `/lines/0/qty`, `/query/limit`, `/header/Idempotency-Key`. */
function toPointer(path: string): string {
  if (path === '/body') return '';
  if (path.startsWith('/body/')) return path.slice('/body'.length);
  const header = /^\/headers\/(.+)$/.exec(path);
  if (header)
    return `/header/${header[1]!.replace(/(^|-)([a-z])/g, (_m, dash: string, c: string) => dash + c.toUpperCase())}`;
  return path.replace(/^\/params\//, '/path/');
}
