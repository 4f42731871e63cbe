import type { Router } from 'express';
import type { Db } from '../../platform/database/transaction.js';
import { resourceRoutes } from '../../platform/resources/routes.js';
import { productFilters } from './repository.js';
import { products } from './service.js';

/** GET /products, GET /products/{id}, GET/PUT /products/by-code/{system}/{code}: created and changed by code only. */
export function productRoutes(db: Db): Router {
  return resourceRoutes(db, products, { path: '/products', filters: productFilters });
}
