import type { Router } from 'express';
import type { Db } from '../../platform/database/transaction.js';
import { resourceRoutes } from '../../platform/resources/routes.js';
import { locationFilters } from './repository.js';
import { locations } from './service.js';

/** GET /locations, GET /locations/{id}, GET/PUT /locations/by-code/{system}/{code}. */
export function locationRoutes(db: Db): Router {
  return resourceRoutes(db, locations, { path: '/locations', filters: locationFilters });
}
