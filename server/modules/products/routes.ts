import type { Router } from 'express';
import type pg from 'pg';
import { resourceRoutes } from '../../platform/resources/routes.js';
import { productFilters } from './repository.js';
import { products } from './service.js';

/** GET /products, GET /products/{id}, GET/PUT /products/by-code/{system}/{code}: created and changed by code only. */
export function productRoutes(pool: pg.Pool): Router {
  return resourceRoutes(pool, products, { path: '/products', filters: productFilters });
}
