import type { Router } from 'express';
import type pg from 'pg';
import { resourceRoutes } from '../../platform/resources/routes.js';
import { locationFilters } from './repository.js';
import { locations } from './service.js';

/** GET /locations, GET /locations/{id}, GET/PUT /locations/by-code/{system}/{code}. */
export function locationRoutes(pool: pg.Pool): Router {
  return resourceRoutes(pool, locations, { path: '/locations', filters: locationFilters });
}
