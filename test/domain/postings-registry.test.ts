// The postings registry: every posted document type is declared once, by its own module's manifest (the `posting` of
// its documentType), and read from the composed registry, which also says which types are fiscalised (a subject with a
// fiscal submission); the postings module reaches no document module and no DMS code by import, and the DMS follows
// a posting through the listener it declares.
import { readdir, readFile } from 'node:fs/promises';
import path from 'node:path';
import test from 'ava';
import { MODULES, postingRegistry } from '../../server/composition/modules.js';
import { isFiscalised, postingRegistryOf, subjectOf } from '../../server/modules/postings/registry.js';
import { documentType } from '../../server/domain/documents/registry.js';
import { followAccountingPosting } from '../../server/modules/dms/accounting.js';

const POSTINGS = path.resolve('server/modules/postings');

test('the composed registry holds each posted document type of its own module, and the DMS flag listener', (t) => {
  const owners = MODULES.flatMap((module) =>
    (module.documentTypes ?? []).filter((declared) => declared.posting).map((declared) => [declared.type, module.name]),
  );
  t.deepEqual(owners, [
    ['stock_document', 'stock'],
    ['invoice', 'invoices'],
    ['credit_note', 'credit-notes'],
    ['settlement', 'settlements'],
    ['payment', 'payments'],
  ]);
  t.deepEqual([...postingRegistry.subjects.keys()].sort(), [
    'credit_note',
    'invoice',
    'payment',
    'settlement',
    'stock_document',
  ]);
  t.deepEqual(postingRegistry.listeners, [followAccountingPosting]);
  t.deepEqual(
    MODULES.filter((module) => module.postingListeners?.length).map((module) => module.name),
    ['dms'],
  );
});

test('a document type declared by two modules is refused when the registry is composed', (t) => {
  const subject = postingRegistry.subjects.get('invoice')!;
  t.throws(
    () =>
      postingRegistryOf([
        { name: 'invoices', documentTypes: [documentType({ type: 'invoice', posting: subject })] },
        { name: 'copy', documentTypes: [documentType({ type: 'invoice' })] },
      ]),
    { message: 'document type invoice is declared by two modules (invoices, copy)' },
  );
});

test('the fiscalised types are those whose subject has a fiscal submission; a type not posted is refused by name', (t) => {
  t.deepEqual([...postingRegistry.subjects.keys()].filter(isFiscalised).sort(), ['credit_note', 'invoice']);
  t.false(isFiscalised('payment'));
  t.throws(() => subjectOf('trip'), {
    message: 'No module declares a posting subject for trip (the `posting` of its documentType in its manifest).',
  });
  t.throws(() => isFiscalised('return'), { message: /No module declares a posting subject for return/ });
});

test('the postings module imports no other module: subjects and listeners come from the composed registry', async (t) => {
  const files = (await readdir(POSTINGS)).filter((name) => name.endsWith('.ts'));
  t.true(files.length > 5);
  for (const file of files) {
    const text = await readFile(path.join(POSTINGS, file), 'utf8');
    const imports = [...text.matchAll(/from '([^']+)'/g)].map((match) => match[1]!);
    t.deepEqual(
      imports.filter((specifier) => /^\.\.\/[^.]/.test(specifier)),
      [],
      `${file} imports another module`,
    );
  }
});
