// The scopes and each operation's required scopes come from the spec, never from a second list in code.
import { operationIndex } from '../operations.js';
import { apiDocument, type ApiDocument } from '../spec.js';

type Json = Record<string, any>;

export const PII_SCOPE = 'customers:pii';

/** Every scope the spec defines (`components.securitySchemes.bearerAuth.x-scopes`), with what it allows. */
export function scopeCatalogue(document: ApiDocument = apiDocument): Record<string, string> {
  return ((document as Json).components?.securitySchemes?.bearerAuth?.['x-scopes'] ?? {}) as Record<string, string>;
}

export interface OperationSecurity {
  /** Null: the operation needs no key. Otherwise the scopes the key must hold (possibly none). */
  scopes: string[] | null;
  /** read (GET), ingest (DMS), write (the rest). */
  rateClass: 'read' | 'write' | 'ingest';
  /** The path as the spec writes it (`/customers/{id}`). */
  pathTemplate: string;
}

/** Finds an operation's security by method and path (relative to /api/v1), from the spec's one operation index. */
export function operationSecurityIndex(
  document: ApiDocument = apiDocument,
): (method: string, path: string) => OperationSecurity | null {
  const operations = operationIndex(document);
  return (method, path) => {
    const operation = operations.find(method, path);
    if (!operation) return null;
    const rateClass =
      operation.method === 'GET' ? 'read' : operation.pathTemplate.startsWith('/dms/') ? 'ingest' : 'write';
    return { scopes: operation.scopes, rateClass, pathTemplate: operation.pathTemplate };
  };
}
