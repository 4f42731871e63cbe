// The postings registry: every posted document type is declared once, by its own module's manifest, and read from the
// composed registry; the postings module reaches no document module and no DMS code by import, and the DMS follows
// a posting through the listener it declares.
import { readdir, readFile } from 'node:fs/promises';
import path from 'node:path';
import test from 'ava';
import { MODULES, postingRegistry } from '../../server/composition/modules.js';
import { postingRegistryOf } from '../../server/modules/postings/registry.js';
import { followAccountingPosting } from '../../server/modules/dms/accounting.js';

const POSTINGS = path.resolve('server/modules/postings');

test('the composed registry holds each posted document type of its own module, and the DMS flag listener', (t) => {
  const owners = MODULES.flatMap((module) =>
    (module.postingSubjects ?? []).map((subject) => [subject.type, module.name]),
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
        { name: 'invoices', postingSubjects: [subject] },
        { name: 'copy', postingSubjects: [subject] },
      ]),
    { message: /posting subject invoice is declared by two modules \(invoices, copy\)/ },
  );
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
