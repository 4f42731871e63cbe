import { Router } from 'express';

/**
 * Every router of the API matches paths case-sensitively, like the spec and the authentication index built from
 * it: a case-insensitive router would let `/CUSTOMERS` reach a handler that authentication did not recognise.
 */
export function apiRouter(): Router {
  return Router({ caseSensitive: true });
}
