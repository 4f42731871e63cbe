// The whole sandbox distributor as rows with ids and their relations: catalogue and empties, prices, warehouses,
// routes with their salesperson and vans, outlets on the routes, and a journey plan per route. Everything but
// the ids is deterministic from the seed (synthetic-*.ts); the ids are ordinary new ids.
import type { ColumnsOf } from '../../platform/resources/table.js';

type CustomerColumns = Required<ColumnsOf<'customers'>>;
import { newId } from '../../platform/ids.js';
import { syntheticVisits, type SyntheticVisit } from './synthetic-journey-plans.js';
import { syntheticLocations, vanCode, type SyntheticLocation } from './synthetic-locations.js';
import { syntheticOutlets } from './synthetic-outlets.js';
import { syntheticPrices, type SyntheticPrice } from './synthetic-prices.js';
import { syntheticProducts, type SyntheticProduct } from './synthetic-products.js';
import { syntheticRoutes } from './synthetic-routes.js';

type WithId<T> = T & { id: string };

export interface SandboxDistributor {
  outlets: WithId<CustomerColumns>[];
  products: WithId<
    Omit<SyntheticProduct, 'empties' | 'baseCasePrice'> & {
      empties: { productId: string; quantity: number; per: string }[];
    }
  >[];
  prices: WithId<SyntheticPrice & { product_id: string }>[];
  locations: WithId<Omit<SyntheticLocation, 'routeCode'> & { route_id: string | null }>[];
  salespeople: { id: string; salesman_code: string; name: string; phone: string; route_id: string }[];
  routes: { id: string; route_code: string; name: string; salesperson_id: string; van_location_id: string }[];
  journeyPlans: { id: string; route_id: string }[];
  visits: (SyntheticVisit & { journey_plan_id: string })[];
}

export function sandboxDistributor(outletCount: number): SandboxDistributor {
  const catalogue = syntheticProducts();
  const productIds = new Map(catalogue.map((product) => [product.product_code, newId('prd')]));
  const products = catalogue.map(({ baseCasePrice: _price, empties, ...product }) => ({
    ...product,
    id: productIds.get(product.product_code)!,
    empties: empties.map((e) => ({ productId: productIds.get(e.productCode)!, quantity: e.quantity, per: e.per })),
  }));
  const prices = syntheticPrices(catalogue).map((price) => ({
    ...price,
    id: newId('prc'),
    product_id: productIds.get(price.product_code)!,
  }));

  const plannedRoutes = syntheticRoutes();
  const routeIds = new Map(plannedRoutes.map((route) => [route.route_code, newId('rte')]));
  const locations = syntheticLocations(plannedRoutes.map((route) => route.route_code)).map(
    ({ routeCode, ...location }) => ({
      ...location,
      id: newId('loc'),
      route_id: routeCode === null ? null : routeIds.get(routeCode)!,
    }),
  );
  const locationIds = new Map(locations.map((location) => [location.code, location.id]));
  const salespeople = plannedRoutes.map((route) => ({
    ...route.salesperson,
    id: newId('slp'),
    route_id: routeIds.get(route.route_code)!,
  }));
  const routes = plannedRoutes.map((route, i) => ({
    id: routeIds.get(route.route_code)!,
    route_code: route.route_code,
    name: route.name,
    salesperson_id: salespeople[i]!.id,
    van_location_id: locationIds.get(vanCode(route.route_code, 'G'))!,
  }));

  // Each outlet is served by the route of its town.
  const routeOfCity = new Map(plannedRoutes.map((route) => [route.city, routeIds.get(route.route_code)!]));
  const outlets = syntheticOutlets(outletCount).map((outlet) => ({
    ...outlet,
    id: newId('cus'),
    route_id: routeOfCity.get((outlet.address as { city: string }).city) ?? null,
  }));
  const journeyPlans = routes.map((route) => ({ id: newId('jpl'), route_id: route.id }));
  const visits = journeyPlans.flatMap((plan, i) =>
    syntheticVisits(
      outlets.filter((outlet) => outlet.route_id === plan.route_id),
      i,
    ).map((visit) => ({ ...visit, journey_plan_id: plan.id })),
  );

  return { outlets, products, prices, locations, salespeople, routes, journeyPlans, visits };
}
