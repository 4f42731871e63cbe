import type { Router } from 'express';
import type { Db } from '../../platform/database/transaction.js';
import { resourceRoutes } from '../../platform/resources/routes.js';
import { salespersonFilters } from './repository.js';
import { salespeople } from './service.js';

/** GET /salespeople, GET /salespeople/{id}, GET/PUT /salespeople/by-code/{system}/{code}. */
export function salespersonRoutes(db: Db): Router {
  return resourceRoutes(db, salespeople, { path: '/salespeople', filters: salespersonFilters });
}
