// The HTTP edge's view of the caller: the key that authenticated the request, with its key-only facts (rate
// limits, prefix, name) beside the Actor that everything below the routes receives.
import type { Response } from 'express';
import type { ApiKeyActor } from './actor.js';
import type { Environment } from '../config.js';
import type { RateLimits } from './rate-limit.js';

/** Who is calling: the key and its organisation, set by authentication for every operation that needs a key. */
export interface CallerContext {
  /** What the routes hand to posting functions, queries and representations. */
  actor: ApiKeyActor;
  organizationId: string;
  organizationName: string;
  baseCurrency: string;
  apiKeyId: string;
  keyName: string;
  keyPrefix: string;
  /** The member who had the key made, when recorded (GET /me shows it). */
  createdByMemberId: string | null;
  environment: Environment;
  scopes: ReadonlySet<string>;
  rateLimits: RateLimits;
}

export function callerOf(res: Response): CallerContext {
  const caller = res.locals.caller as CallerContext | undefined;
  if (!caller) throw new Error('no caller: the route is not behind authentication');
  return caller;
}

/** The actor of an authenticated request: routes turn the request into this and a typed command. */
export function actorOf(res: Response): ApiKeyActor {
  return callerOf(res).actor;
}
