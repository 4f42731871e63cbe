// The handler of each documentType the service maps. A type without one is stored and stays `received` with the
// note `No mapper for <type> yet` (fiscal status in this version).
import { companyInvoice, inventorySummary, stockAdjustment, vanReplenishment, vanStockOut } from './stock.js';
import { customer, price, product, reasonCode, salesman, warehouse } from './master-data.js';
import { dailyTotals, routeSettlement } from './day-close.js';
import { chequeProcessing, customerCollection } from './money.js';
import { creditNote, saleInvoice, saleReturn } from './sales.js';
import type { DocumentHandler } from './types.js';

export const HANDLERS: ReadonlyMap<string, DocumentHandler> = new Map<string, DocumentHandler>([
  ['customer', customer],
  ['product', product],
  ['price', price],
  ['salesman', salesman],
  ['warehouse', warehouse],
  ['reason_code', reasonCode],
  ['van_replenishment', vanReplenishment],
  ['van_stock_out', vanStockOut],
  ['sale_invoice', saleInvoice],
  ['sale_return', saleReturn],
  ['credit_note', creditNote],
  ['customer_collection', customerCollection],
  ['cheque_processing', chequeProcessing],
  ['company_invoice', companyInvoice],
  ['stock_adjustment', stockAdjustment],
  ['inventory_summary', inventorySummary],
  ['route_settlement', routeSettlement],
  ['daily_totals', dailyTotals],
]);
