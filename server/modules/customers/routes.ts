import type { Router } from 'express';
import type pg from 'pg';
import { resourceRoutes } from '../../platform/resources/routes.js';
import { customerFilters } from './repository.js';
import { customers } from './service.js';

/** GET/POST /customers, GET/PATCH /customers/{id}, GET/PUT /customers/by-code/{system}/{code}. */
export function customerRoutes(pool: pg.Pool): Router {
  return resourceRoutes(pool, customers, { path: '/customers', create: true, update: true, filters: customerFilters });
}
