// The document types and the DMS handlers: each declared once, by its own module's manifest, and read from the
// composed registries (decision 0046). The customer account reads the invoice's lifecycle there; the DMS reads its
// handlers there and imports none of the modules that map their own documents.
import { readdir, readFile } from 'node:fs/promises';
import path from 'node:path';
import test from 'ava';
import { documentRegistry, dmsHandlers, MODULES } from '../../server/composition/modules.js';
import { documentRegistryOf, documentType, documentTypeOf } from '../../server/domain/documents/registry.js';
import { dmsHandlerRegistryOf, handlerOf } from '../../server/modules/dms/handlers/registry.js';
import { invoiceLifecycle } from '../../server/modules/invoices/lifecycle.js';
import { saleInvoice } from '../../server/modules/invoices/dms.js';

test('each document type with a lifecycle is declared by its own module, and the registry gives its table', (t) => {
  const owners = MODULES.flatMap((module) =>
    (module.documentTypes ?? []).map((declared) => [declared.type, module.name]),
  );
  t.deepEqual(owners, [
    ['invoice', 'invoices'],
    ['trip', 'trips'],
    ['order', 'orders'],
    ['credit_note', 'credit-notes'],
    ['payment', 'payments'],
  ]);
  t.is(documentRegistry.get('invoice'), documentTypeOf('invoice'));
  t.is(documentTypeOf('invoice').lifecycle as unknown, invoiceLifecycle);
  t.is(documentRegistry.size, 5);
  t.throws(() => documentTypeOf('invoices'), {
    message: 'No module declares the document type invoices (documentTypes in its manifest).',
  });
  t.throws(
    () =>
      documentRegistryOf([
        { name: 'invoices', documentTypes: [documentType(invoiceLifecycle)] },
        { name: 'copy', documentTypes: [documentType(invoiceLifecycle)] },
      ]),
    { message: 'document type invoice is declared by two modules (invoices, copy)' },
  );
});

test('each DMS documentType is mapped by the module it posts to, and the DMS reads the handler from the registry', (t) => {
  const owners = Object.fromEntries(
    MODULES.flatMap((module) => Object.keys(module.dmsHandlers ?? {}).map((type) => [type, module.name])),
  );
  t.deepEqual(owners, {
    van_replenishment: 'stock',
    van_stock_out: 'stock',
    stock_adjustment: 'stock',
    company_invoice: 'stock',
    sale_invoice: 'invoices',
    credit_note: 'credit-notes',
    sale_return: 'returns',
    route_settlement: 'settlements',
    customer_collection: 'payments',
    cheque_processing: 'payments',
    customer: 'customers',
    product: 'products',
    price: 'prices',
    salesman: 'routes',
    warehouse: 'locations',
    reason_code: 'dms',
    inventory_summary: 'dms',
    daily_totals: 'dms',
  });
  t.is(dmsHandlers.size, 18);
  t.is(handlerOf('sale_invoice'), saleInvoice);
  t.is(handlerOf('fiscal_status'), undefined, 'a type no module maps: stored, `No mapper for fiscal_status yet`');
  t.throws(
    () =>
      dmsHandlerRegistryOf([
        { name: 'invoices', dmsHandlers: { sale_invoice: saleInvoice } },
        { name: 'copy', dmsHandlers: { sale_invoice: saleInvoice } },
      ]),
    { message: 'DMS documentType sale_invoice is mapped by two modules (invoices, copy)' },
  );
});

test('no file of the DMS imports a module that maps its own DMS documents: they plug in through the registry', async (t) => {
  const mapping = MODULES.filter(
    (module) => module.name !== 'dms' && Object.keys(module.dmsHandlers ?? {}).length > 0,
  ).map((module) => module.name);
  t.deepEqual(mapping.sort(), [
    'credit-notes',
    'customers',
    'invoices',
    'locations',
    'payments',
    'prices',
    'products',
    'returns',
    'routes',
    'settlements',
    'stock',
  ]);
  const root = path.resolve('server/modules/dms');
  const files = (await readdir(root, { recursive: true })).filter((name) => name.endsWith('.ts'));
  t.true(files.length > 20, `read ${files.length} files`);
  for (const file of files) {
    const text = await readFile(path.join(root, file), 'utf8');
    const targets = [...text.matchAll(/from '(\.{1,2}\/[^']+)'/g)].map(
      (match) =>
        path
          .relative(path.resolve('server/modules'), path.resolve(root, path.dirname(file), match[1]!))
          .split(path.sep)[0]!,
    );
    t.deepEqual(
      targets.filter((module) => mapping.includes(module)),
      [],
      `${file} imports a module that maps its own documents`,
    );
  }
});
