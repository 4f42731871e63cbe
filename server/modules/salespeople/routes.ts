import type { Router } from 'express';
import type pg from 'pg';
import { resourceRoutes } from '../../platform/resources/routes.js';
import { salespersonFilters } from './repository.js';
import { salespeople } from './service.js';

/** GET /salespeople, GET /salespeople/{id}, GET/PUT /salespeople/by-code/{system}/{code}. */
export function salespersonRoutes(pool: pg.Pool): Router {
  return resourceRoutes(pool, salespeople, { path: '/salespeople', filters: salespersonFilters });
}
