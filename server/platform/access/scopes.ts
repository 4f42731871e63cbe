// The scopes and each operation's required scopes come from the spec, never from a second list in code.
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

const METHODS = ['get', 'put', 'post', 'patch', 'delete'];

/** Finds an operation's security by method and path (relative to /api/v1), built once from the spec. */
export function operationSecurityIndex(document: ApiDocument = apiDocument): (method: string, path: string) => OperationSecurity | null {
  const routes = Object.entries(document.paths).map(([template, item]) => ({
    template,
    pattern: new RegExp(`^${template.replace(/[.*+?^$()|[\]\\]/g, '\\$&').replace(/\{[^}]+\}/g, '[^/]+')}/?$`),
    operations: new Map(METHODS.filter((m) => (item as Json)[m]).map((m) => [m.toUpperCase(), (item as Json)[m] as Json])),
  }));
  const globalSecurity = (document as Json).security as Json[] | undefined;
  return (method, path) => {
    for (const route of routes) {
      if (!route.pattern.test(path)) continue;
      const operation = route.operations.get(method.toUpperCase());
      if (!operation) return null;
      const security = (operation.security ?? globalSecurity ?? []) as Json[];
      const scopes = security.length === 0 ? null : ((security[0]!.bearerAuth ?? []) as string[]);
      const rateClass = method.toUpperCase() === 'GET' ? 'read' : route.template.startsWith('/dms/') ? 'ingest' : 'write';
      return { scopes, rateClass, pathTemplate: route.template };
    }
    return null;
  };
}
