import type { Response } from 'express';
import type { Environment } from '../config.js';
import type { RateLimits } from './rate-limit.js';

/** Who is calling: the key and its organisation, set by authentication for every operation that needs a key. */
export interface CallerContext {
  organizationId: string;
  organizationName: string;
  baseCurrency: string;
  deliveryModuleEnabled: boolean;
  fieldSalesModuleEnabled: boolean;
  apiKeyId: string;
  keyName: string;
  keyPrefix: string;
  environment: Environment;
  scopes: ReadonlySet<string>;
  rateLimits: RateLimits;
}

export function callerOf(res: Response): CallerContext {
  const caller = res.locals.caller as CallerContext | undefined;
  if (!caller) throw new Error('no caller: the route is not behind authentication');
  return caller;
}
