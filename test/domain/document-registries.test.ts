// The document types and the DMS handlers: each document type declared once, by its own module's manifest, with its
// lifecycle, posting subject, webhook object and DMS mappings, and read from the composed registries (decisions 0046,
// 0050). The customer account reads the invoice's lifecycle there; the DMS reads its handlers there and imports none
// of the modules that map their own documents; the webhook objects of a document's events come from its declaration.
import { readdir, readFile } from 'node:fs/promises';
import path from 'node:path';
import test from 'ava';
import {
  documentRegistry,
  dmsHandlers,
  MODULES,
  webhookObjects,
  webhookObjectsOf,
} from '../../server/composition/modules.js';
import {
  documentRegistryOf,
  documentType,
  documentTypeOf,
  lifecycleOf,
} from '../../server/domain/documents/registry.js';
import { dmsHandlerRegistryOf, handlerOf } from '../../server/modules/dms/handlers/registry.js';
import { invoiceLifecycle } from '../../server/modules/invoices/lifecycle.js';
import { saleInvoice } from '../../server/modules/invoices/dms.js';

test('each document type is declared by its own module, and the registry gives its table', (t) => {
  const owners = MODULES.flatMap((module) =>
    (module.documentTypes ?? []).map((declared) => [declared.type, module.name]),
  );
  t.deepEqual(owners, [
    ['stock_document', 'stock'],
    ['invoice', 'invoices'],
    ['trip', 'trips'],
    ['order', 'orders'],
    ['credit_note', 'credit-notes'],
    ['return', 'returns'],
    ['settlement', 'settlements'],
    ['payment', 'payments'],
  ]);
  t.is(documentRegistry.get('invoice'), documentTypeOf('invoice'));
  t.is(documentTypeOf('invoice').lifecycle as unknown, invoiceLifecycle);
  t.is(lifecycleOf('invoice') as unknown, invoiceLifecycle);
  t.is(documentRegistry.size, 8);
  t.deepEqual(
    [...documentRegistry.values()].filter((declared) => declared.lifecycle).map((declared) => declared.type),
    ['invoice', 'trip', 'order', 'credit_note', 'payment'],
  );
  // A declaration holds only the parts the layers define (a misspelt part would be read by no registry).
  for (const declared of documentRegistry.values())
    t.deepEqual(
      Object.keys(declared).filter((key) => !['type', 'lifecycle', 'webhook', 'posting', 'dms'].includes(key)),
      [],
      declared.type,
    );
  t.throws(() => lifecycleOf('stock_document'), {
    message: 'The document type stock_document is declared without a lifecycle.',
  });
  t.throws(() => documentTypeOf('invoices'), {
    message: 'No module declares the document type invoices (documentTypes in its manifest).',
  });
  t.throws(
    () =>
      documentRegistryOf([
        { name: 'invoices', documentTypes: [documentType({ lifecycle: invoiceLifecycle })] },
        { name: 'copy', documentTypes: [documentType({ type: 'invoice' })] },
      ]),
    { message: 'document type invoice is declared by two modules (invoices, copy)' },
  );
});

test('each DMS documentType is mapped by the document type it posts to, master data by its module, and the DMS reads the handler from the registry', (t) => {
  const ofDocuments = Object.fromEntries(
    MODULES.flatMap((module) =>
      (module.documentTypes ?? []).flatMap((declared) =>
        Object.keys(declared.dms ?? {}).map((type) => [type, `${module.name}: ${declared.type}`]),
      ),
    ),
  );
  t.deepEqual(ofDocuments, {
    van_replenishment: 'stock: stock_document',
    van_stock_out: 'stock: stock_document',
    stock_adjustment: 'stock: stock_document',
    company_invoice: 'stock: stock_document',
    sale_invoice: 'invoices: invoice',
    credit_note: 'credit-notes: credit_note',
    sale_return: 'returns: return',
    route_settlement: 'settlements: settlement',
    customer_collection: 'payments: payment',
    cheque_processing: 'payments: payment',
  });
  const ofModules = Object.fromEntries(
    MODULES.flatMap((module) => Object.keys(module.dmsHandlers ?? {}).map((type) => [type, module.name])),
  );
  t.deepEqual(ofModules, {
    customer: 'customers',
    product: 'products',
    price: 'prices',
    salesman: 'routes',
    warehouse: 'locations',
    reason_code: 'dms',
    inventory_summary: 'dms',
    daily_totals: 'dms',
  });
  const owners = { ...ofDocuments, ...ofModules };
  t.deepEqual(Object.keys(owners).sort(), [...dmsHandlers.keys()].sort());
  t.deepEqual(Object.fromEntries(Object.entries(owners).map(([type, owner]) => [type, owner.split(':')[0]])), {
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
        { name: 'invoices', documentTypes: [documentType({ type: 'invoice', dms: { sale_invoice: saleInvoice } })] },
        { name: 'copy', dmsHandlers: { sale_invoice: saleInvoice } },
      ]),
    { message: 'DMS documentType sale_invoice is mapped by two modules (invoices, copy)' },
  );
});

test('no file of the DMS imports a module that maps its own DMS documents: they plug in through the registry', async (t) => {
  const mapping = MODULES.filter(
    (module) =>
      module.name !== 'dms' &&
      (Object.keys(module.dmsHandlers ?? {}).length > 0 ||
        (module.documentTypes ?? []).some((declared) => Object.keys(declared.dms ?? {}).length > 0)),
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

test("the webhook object of a document event is its document type's, declared with it; an event declared twice is refused", (t) => {
  const invoice = documentTypeOf('invoice');
  t.deepEqual(invoice.webhook?.events, ['invoice.created', 'invoice.updated', 'invoice.voided']);
  for (const event of invoice.webhook!.events) t.is(webhookObjects[event], invoice.webhook!.object, event);
  const fromDocuments = [...documentRegistry.values()].flatMap((declared) => declared.webhook?.events ?? []);
  t.deepEqual(fromDocuments.sort(), [
    'credit_note.cancelled',
    'credit_note.created',
    'credit_note.updated',
    'invoice.created',
    'invoice.updated',
    'invoice.voided',
    'order.created',
    'order.status_changed',
    'payment.created',
    'payment.reversed',
    'payment.updated',
    'settlement.closed',
    'settlement.updated',
    'stock.movement.created',
    'trip.closed',
  ]);
  // No module declares a document's event beside its declaration as well.
  for (const module of MODULES)
    for (const event of Object.keys(module.webhookObjects ?? {}))
      t.false(fromDocuments.includes(event), `${module.name} declares ${event} outside its document type`);
  const object = invoice.webhook!.object;
  t.throws(
    () =>
      webhookObjectsOf([
        {
          name: 'invoices',
          documentTypes: [documentType({ type: 'invoice', webhook: { object, events: ['x.made'] } })],
        },
        { name: 'copy', webhookObjects: { 'x.made': object } },
      ]),
    { message: 'event type x.made is declared by two modules' },
  );
});
