import {
  ERROR_CATALOGUE,
  FIELD_REASON_CATALOGUE,
  REFUSAL_REASON_CATALOGUE,
  catalogueEntry,
  type ErrorCodeEntry,
} from '../../platform/errors/catalogue.js';
import type { components } from '../../../generated/api-types.js';

import type { CallerContext } from '../../platform/access/context.js';
import { environmentMarker } from '../../platform/access/api-key-secret.js';

type KeyIntrospection = components['schemas']['KeyIntrospection'];
type ErrorCodeBody = components['schemas']['ErrorCode'];
type ErrorCodeListBody = components['schemas']['ErrorCodeList'];

export function errorCodeRepresentation(code: string, entry: ErrorCodeEntry): ErrorCodeBody {
  return { code, status: entry.status, title: entry.title, description: entry.description };
}

/** Every code, problem codes, refusal reasons and field reasons alike, ordered by status, then code. */
export function errorCodeList(): ErrorCodeListBody {
  const data = [
    ...Object.keys(ERROR_CATALOGUE),
    ...Object.keys(REFUSAL_REASON_CATALOGUE),
    ...Object.keys(FIELD_REASON_CATALOGUE),
  ]
    .map((code) => errorCodeRepresentation(code, catalogueEntry(code)!))
    .sort((a, b) => a.status - b.status || a.code.localeCompare(b.code));
  return { data };
}

export function keyIntrospection(caller: CallerContext): KeyIntrospection {
  return {
    name: caller.keyName,
    prefix: caller.keyPrefix,
    // The key's kind (`test`/`live`) as the 1.13.0 contract and the product spec name it, not the deployment's
    // name that /health gives (`sandbox`/`production`).
    environment: environmentMarker(caller.environment),
    organization: { id: caller.organizationId, name: caller.organizationName },
    createdByMemberId: caller.createdByMemberId,
    scopes: [...caller.scopes].sort(),
    rateLimits: caller.rateLimits,
  };
}
