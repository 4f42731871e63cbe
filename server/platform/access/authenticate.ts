// Authentication, IP allowlist, rate limit and scope, in that order, for every operation whose spec declares
// a security requirement. Runs before request validation, so a caller without a usable key learns that first.
import type { RequestHandler } from 'express';
import ipaddr from 'ipaddr.js';
import { preparedStatement, statementBuilder } from '../database/prepared.js';
import type { Db } from '../database/transaction.js';
import type { Environment } from '../config.js';
import { ApiError } from '../errors/api-error.js';
import { API_BASE_PATH, type ApiDocument } from '../spec.js';
import { environmentMarker, hashSecret, KEY_LIKE, parseSecret, secretMatches } from './api-key-secret.js';
import type { CallerContext } from './context.js';
import type { KeyCache, KnownKey } from './key-cache.js';
import { chargedFailure } from './address-budget.js';
import { rateDecision, type RateBudget } from './rate-limit.js';
import { operationSecurityIndex } from './scopes.js';

const UNAUTHORIZED_DETAIL = 'Send a valid API key as "Authorization: Bearer <API_KEY>".';

/** 400 key_in_query when anything in the query string looks like an API key; first of all checks. */
export const refuseKeyInQuery: RequestHandler = (req, _res, next) => {
  const query = req.originalUrl.indexOf('?');
  if (query >= 0 && KEY_LIKE.test(decodeURIComponentSafe(req.originalUrl.slice(query + 1)))) {
    // The API log and the process log record the path without its query string for this request.
    req.url = req.url.split('?')[0]!;
    next(
      new ApiError(
        'key_in_query',
        'An API key was sent in the query string, where it is logged and cached. Send it only in the Authorization header, and rotate this key now.',
      ),
    );
    return;
  }
  next();
};

/** What authentication keeps of a key (see key-cache.ts): read once, then served from memory. */
export interface KeyFacts {
  caller: CallerContext;
  apiAccessEnabled: boolean;
  allowlist: [ipaddr.IPv4 | ipaddr.IPv6, number][];
}

export interface AuthenticationOptions {
  /** Where keys are read and rate-limit buckets written: runs with synchronous_commit off (see Database.relaxed). */
  buckets: Db;
  keys: KeyCache<KeyFacts>;
  budget: RateBudget;
  environment: Environment;
  document: ApiDocument;
}

export function authenticate(options: AuthenticationOptions): RequestHandler {
  const securityOf = operationSecurityIndex(options.document);
  return async (req, res, next) => {
    // HEAD is looked up as GET, as knownOperation finds it: a HEAD of a keyed read needs the key its GET needs.
    const security = securityOf(
      req.method === 'HEAD' ? 'GET' : req.method,
      req.path.startsWith(API_BASE_PATH) ? req.path.slice(API_BASE_PATH.length) : req.path,
    );
    if (!security || security.scopes === null) return next();

    const header = req.headers.authorization ?? '';
    const match = /^Bearer +(\S+) *$/i.exec(header);
    const parsed = match ? parseSecret(match[1]!) : null;
    if (!parsed) throw await chargedFailure(req, res, new ApiError('unauthorized', UNAUTHORIZED_DETAIL));
    if (parsed.environment !== options.environment) {
      throw await chargedFailure(
        req,
        res,
        new ApiError(
          'wrong_environment',
          `This is the ${options.environment} environment; it takes keys containing _${environmentMarker(options.environment)}_, and this key contains _${environmentMarker(parsed.environment)}_.`,
        ),
      );
    }
    const secretHash = hashSecret(match![1]!);
    const key = await options.keys.find(parsed.prefix, secretHash, () =>
      readKey(options.buckets, parsed.prefix, secretHash, options.environment),
    );
    // Unknown, revoked, expired and mistyped keys get the very same answer. The stored hash is compared once
    // more in constant time, so that no code path depends on a variable-time comparison of the secret.
    if (!key || !secretMatches(match![1]!, key.secretHash)) {
      throw await chargedFailure(req, res, new ApiError('unauthorized', UNAUTHORIZED_DETAIL));
    }
    const { caller, apiAccessEnabled, allowlist } = key.facts;

    // Only a usable key takes a token: a wrong secret cannot spend someone else's budget.
    const limit = caller.rateLimits[security.rateClass];
    const answer = await options.budget.take(
      { organizationId: caller.organizationId, id: caller.apiKeyId },
      security.rateClass,
      limit,
    );
    const decision = rateDecision(limit, answer.allowed, answer.remaining);
    for (const [name, value] of Object.entries(decision.headers)) res.setHeader(name, value);
    res.locals.caller = caller;
    if (!decision.allowed) {
      throw new ApiError(
        'rate_limited',
        `The ${security.rateClass} budget of this key (${limit.perMinute} per minute, burst ${limit.burst}) is spent. Retry after ${decision.retryAfterSeconds} s.`,
        undefined,
        { 'Retry-After': String(decision.retryAfterSeconds) },
      );
    }
    if (!apiAccessEnabled) {
      throw new ApiError(
        'api_disabled',
        `API access is switched off for ${caller.organizationName}. An administrator must enable it.`,
      );
    }
    if (allowlist.length > 0 && !addressInRanges(req.ip ?? '', allowlist)) {
      throw new ApiError('ip_not_allowed', `Calls from ${req.ip} are outside this key's IP allowlist.`);
    }
    const missing = security.scopes.filter((scope) => !caller.scopes.has(scope));
    if (missing.length > 0) {
      throw new ApiError(
        'insufficient_scope',
        `This operation needs the scope ${missing.join(', ')}, which the key does not have.`,
      );
    }
    next();
  };
}

/** The key by prefix and secret hash, with its organisation, when it is neither revoked nor expired now. */
export function keyQuery(db: Db, prefix: string, secretHash: string, environment: Environment) {
  return db
    .selectFrom('api_keys as k')
    .innerJoin('organizations as o', 'o.id', 'k.organization_id')
    .select([
      'k.organization_id',
      'k.id',
      'k.name',
      'k.prefix',
      'k.environment',
      'k.secret_hash',
      'k.scopes',
      'k.rate_limits',
      'k.ip_allowlist',
      'k.revoked_at',
      'k.expires_at',
      'k.created_by_member_id',
      'o.name as organization_name',
      'o.api_access_enabled',
      'o.base_currency',
      'o.delivery_module_enabled',
      'o.field_sales_module_enabled',
    ])
    .where('k.prefix', '=', prefix)
    .where('k.secret_hash', '=', secretHash)
    .where('k.environment', '=', environment)
    .where((eb) => eb.or([eb('k.revoked_at', 'is', null), eb('k.revoked_at', '>', eb.fn<Date>('now'))]))
    .where((eb) => eb.or([eb('k.expires_at', 'is', null), eb('k.expires_at', '>', eb.fn<Date>('now'))]));
}

/** The same statement, compiled once (a request with a key not in memory runs it; see platform/database/prepared.ts). */
const keyByPrefix = preparedStatement(
  (args: { prefix: string; secretHash: string; environment: string }) =>
    keyQuery(statementBuilder, args.prefix, args.secretHash, args.environment as Environment),
  ['prefix', 'secretHash', 'environment'],
);

type KeyRow = Awaited<ReturnType<typeof keyByPrefix>>[number];

async function readKey(
  db: Db,
  prefix: string,
  secretHash: string,
  environment: Environment,
): Promise<KnownKey<KeyFacts> | undefined> {
  const [row] = await keyByPrefix(db, { prefix, secretHash, environment });
  if (!row) return undefined;
  return {
    organizationId: row.organization_id,
    secretHash: row.secret_hash,
    revokedAt: row.revoked_at,
    expiresAt: row.expires_at,
    facts: {
      caller: toCaller(row),
      apiAccessEnabled: row.api_access_enabled,
      allowlist: row.ip_allowlist.map((cidr) => ipaddr.parseCIDR(cidr)),
    },
  };
}

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
    createdByMemberId: key.created_by_member_id,
    environment: key.environment as Environment,
    scopes,
    rateLimits: key.rate_limits,
  };
}

function addressInRanges(address: string, ranges: [ipaddr.IPv4 | ipaddr.IPv6, number][]): boolean {
  if (!ipaddr.isValid(address)) return false;
  const ip = ipaddr.process(address); // IPv4-mapped IPv6 (::ffff:10.0.0.1) counts as IPv4
  return ranges.some(([range, bits]) => ip.kind() === range.kind() && ip.match([range, bits] as never));
}

function decodeURIComponentSafe(text: string): string {
  try {
    return decodeURIComponent(text.replace(/\+/g, ' '));
  } catch {
    return text;
  }
}
