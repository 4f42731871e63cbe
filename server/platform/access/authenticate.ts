// Authentication, IP allowlist, rate limit and scope, in that order, for every operation whose spec declares
// a security requirement. Runs before request validation, so a caller without a usable key learns that first.
import type { RequestHandler } from 'express';
import ipaddr from 'ipaddr.js';
import { sql } from 'kysely';
import { preparedStatement, statementBuilder } from '../database/prepared.js';
import type { Db } from '../database/transaction.js';
import type { Environment } from '../config.js';
import { ApiError } from '../errors/api-error.js';
import { API_BASE_PATH, type ApiDocument } from '../spec.js';
import { environmentMarker, hashSecret, KEY_LIKE, parseSecret, secretMatches } from './api-key-secret.js';
import type { CallerContext } from './context.js';
import { rateDecision, takeTokenUpsert } from './rate-limit.js';
import { operationSecurityIndex } from './scopes.js';

const UNAUTHORIZED_DETAIL = 'Send a valid API key as "Authorization: Bearer <API_KEY>".';

/** 400 key_in_query when anything in the query string looks like an API key; first of all checks. */
export const refuseKeyInQuery: RequestHandler = (req, _res, next) => {
  const query = req.originalUrl.indexOf('?');
  if (query >= 0 && KEY_LIKE.test(decodeURIComponentSafe(req.originalUrl.slice(query + 1)))) {
    // The API log and the process log record the path without its query string for this request.
    req.url = req.url.split('?')[0]!;
    next(new ApiError('key_in_query', 'An API key was sent in the query string, where it is logged and cached. Send it only in the Authorization header, and rotate this key now.'));
    return;
  }
  next();
};

/** `buckets` runs with synchronous_commit off (see Database.relaxed): the bucket update needs no fsync. */
export function authenticate(options: { buckets: Db; environment: Environment; document: ApiDocument }): RequestHandler {
  const securityOf = operationSecurityIndex(options.document);
  return async (req, res, next) => {
    const security = securityOf(req.method, req.path.startsWith(API_BASE_PATH) ? req.path.slice(API_BASE_PATH.length) : req.path);
    if (!security || security.scopes === null) return next();

    const header = req.headers.authorization ?? '';
    const match = /^Bearer +(\S+) *$/i.exec(header);
    const parsed = match ? parseSecret(match[1]!) : null;
    if (!parsed) throw new ApiError('unauthorized', UNAUTHORIZED_DETAIL);
    if (parsed.environment !== options.environment) {
      throw new ApiError('wrong_environment', `This is the ${options.environment} environment; it takes keys containing _${environmentMarker(options.environment)}_, and this key contains _${environmentMarker(parsed.environment)}_.`);
    }
    // One round trip: find the key by prefix and secret hash and, only when it is usable, take a token from its
    // bucket for this class. A wrong secret touches no bucket, so it cannot spend someone else's budget.
    const key = await findKeyAndTakeToken(options.buckets, parsed.prefix, hashSecret(match![1]!), security.rateClass, options.environment);
    // Unknown, revoked, expired and mistyped keys get the very same answer. The stored hash is compared once
    // more in constant time, so that no code path depends on a variable-time comparison of the secret.
    if (!key || !secretMatches(match![1]!, key.secret_hash)) {
      throw new ApiError('unauthorized', UNAUTHORIZED_DETAIL);
    }

    const limit = key.rate_limits[security.rateClass];
    const decision = rateDecision(limit, key.allowed, key.remaining);
    for (const [name, value] of Object.entries(decision.headers)) res.setHeader(name, value);
    res.locals.caller = toCaller(key);
    if (!decision.allowed) {
      throw new ApiError('rate_limited', `The ${security.rateClass} budget of this key (${limit.perMinute} per minute, burst ${limit.burst}) is spent. Retry after ${decision.retryAfterSeconds} s.`, undefined, { 'Retry-After': String(decision.retryAfterSeconds) });
    }
    if (!key.api_access_enabled) {
      throw new ApiError('api_disabled', `API access is switched off for ${key.organization_name}. An administrator must enable it.`);
    }
    if (key.ip_allowlist.length > 0 && !addressAllowed(req.ip ?? '', key.ip_allowlist)) {
      throw new ApiError('ip_not_allowed', `Calls from ${req.ip} are outside this key's IP allowlist.`);
    }
    const missing = security.scopes.filter((scope) => !key.scopes.includes(scope));
    if (missing.length > 0) {
      throw new ApiError('insufficient_scope', `This operation needs the scope ${missing.join(', ')}, which the key does not have.`);
    }
    next();
  };
}

/**
 * One round trip: find the key by prefix and secret hash and, only when it is usable, take a token from its bucket
 * for this class. A wrong secret touches no bucket, so it cannot spend someone else's budget.
 */
export function keyAndTokenQuery(db: Db, prefix: string, secretHash: string, rateClass: string, environment: Environment) {
  return db
    .with('key', (q) => q.selectFrom('api_keys as k').innerJoin('organizations as o', 'o.id', 'k.organization_id')
      .select([
        'k.organization_id', 'k.id', 'k.name', 'k.prefix', 'k.environment', 'k.secret_hash', 'k.scopes', 'k.rate_limits', 'k.ip_allowlist',
        'o.name as organization_name', 'o.api_access_enabled', 'o.base_currency', 'o.delivery_module_enabled', 'o.field_sales_module_enabled',
        // JSON path reads cast to float8: the builder's JSON helpers cannot cast; the class is a bound parameter.
        sql<number>`(k.rate_limits -> ${rateClass} ->> 'perMinute')::float8`.as('per_minute'),
        sql<number>`(k.rate_limits -> ${rateClass} ->> 'burst')::float8`.as('burst'),
      ])
      .where('k.prefix', '=', prefix).where('k.secret_hash', '=', secretHash).where('k.environment', '=', environment)
      .where((eb) => eb.or([eb('k.revoked_at', 'is', null), eb('k.revoked_at', '>', eb.fn<Date>('now'))]))
      .where((eb) => eb.or([eb('k.expires_at', 'is', null), eb('k.expires_at', '>', eb.fn<Date>('now'))])))
    // The key CTE carries more columns than a TokenSource; QueryCreator is invariant in its tables, hence the cast.
    .with('bucket', (q) => takeTokenUpsert(q as never, rateClass))
    .selectFrom(['key', 'bucket'])
    .selectAll('key')
    .select(['bucket.last_allowed as allowed', 'bucket.tokens as remaining']);
}

/** The same statement, compiled once (it runs on every request; see platform/database/prepared.ts). */
const keyAndToken = preparedStatement(
  (args: { prefix: string; secretHash: string; rateClass: string; environment: string }) =>
    keyAndTokenQuery(statementBuilder, args.prefix, args.secretHash, args.rateClass, args.environment as Environment),
  ['prefix', 'secretHash', 'rateClass', 'environment'],
);

async function findKeyAndTakeToken(db: Db, prefix: string, secretHash: string, rateClass: string, environment: Environment) {
  return (await keyAndToken(db, { prefix, secretHash, rateClass, environment }))[0];
}

type KeyRow = NonNullable<Awaited<ReturnType<typeof findKeyAndTakeToken>>>;

function toCaller(key: KeyRow): CallerContext {
  const scopes: ReadonlySet<string> = new Set(key.scopes);
  const organization = {
    id: key.organization_id,
    name: key.organization_name,
    baseCurrency: key.base_currency,
    deliveryModuleEnabled: key.delivery_module_enabled,
    fieldSalesModuleEnabled: key.field_sales_module_enabled,
  };
  return {
    actor: { kind: 'api_key', organization, scopes, apiKeyId: key.id, environment: key.environment as Environment },
    organizationId: key.organization_id,
    organizationName: key.organization_name,
    baseCurrency: key.base_currency,
    apiKeyId: key.id,
    keyName: key.name,
    keyPrefix: key.prefix,
    environment: key.environment as Environment,
    scopes,
    rateLimits: key.rate_limits,
  };
}

export function addressAllowed(address: string, allowlist: string[]): boolean {
  if (!ipaddr.isValid(address)) return false;
  const ip = ipaddr.process(address); // IPv4-mapped IPv6 (::ffff:10.0.0.1) counts as IPv4
  return allowlist.some((cidr) => {
    const [range, bits] = ipaddr.parseCIDR(cidr);
    return ip.kind() === range.kind() && ip.match([range, bits] as never);
  });
}

function decodeURIComponentSafe(text: string): string {
  try {
    return decodeURIComponent(text.replace(/\+/g, ' '));
  } catch {
    return text;
  }
}
