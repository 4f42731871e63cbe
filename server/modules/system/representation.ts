import { ERROR_CATALOGUE, type ErrorCode, type ErrorCodeEntry } from '../../platform/errors/catalogue.js';
import type { components } from '../../../generated/api-types.js';

import type { CallerContext } from '../../platform/access/context.js';
import { environmentMarker } from '../../platform/access/api-key-secret.js';

type KeyIntrospection = components['schemas']['KeyIntrospection'];
type ErrorCodeBody = components['schemas']['ErrorCode'];
type ErrorCodeListBody = components['schemas']['ErrorCodeList'];

export function errorCodeRepresentation(code: ErrorCode, entry: ErrorCodeEntry): ErrorCodeBody {
  return { code, status: entry.status, title: entry.title, description: entry.description };
}

/** Ordered by status, then code. */
export function errorCodeList(): ErrorCodeListBody {
  const data = (Object.entries(ERROR_CATALOGUE) as [ErrorCode, ErrorCodeEntry][])
    .map(([code, entry]) => errorCodeRepresentation(code, entry))
    .sort((a, b) => a.status - b.status || a.code.localeCompare(b.code));
  return { data };
}

export function keyIntrospection(caller: CallerContext): KeyIntrospection {
  return {
    name: caller.keyName,
    prefix: caller.keyPrefix,
    environment: environmentMarker(caller.environment),
    organization: { id: caller.organizationId, name: caller.organizationName },
    scopes: [...caller.scopes].sort(),
    rateLimits: caller.rateLimits,
  };
}
