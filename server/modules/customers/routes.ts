import type { Router } from 'express';
import type { Db } from '../../platform/database/transaction.js';
import { resourceRoutes } from '../../platform/resources/routes.js';
import { customerFilters } from './repository.js';
import { customers } from './service.js';

/** GET/POST /customers, GET/PATCH /customers/{id}, GET/PUT /customers/by-code/{system}/{code}. */
export function customerRoutes(db: Db): Router {
  return resourceRoutes(db, customers, { path: '/customers', create: true, update: true, filters: customerFilters });
}
