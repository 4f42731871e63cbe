// The description of POST /dms/{system}/documents says what the service does with a malformed body, so that a
// contract tool (Schemathesis-style: a body its schema refuses must be a 4xx, one it accepts must not) and our own
// contract check agree with the service: only the container is a 400 (DmsIngestRequest); a malformed document is a
// 2xx with a rejected flag, and each `rejected_*` request example gets exactly the flags it declares.
import test from 'ava';
import { randomUUID } from 'node:crypto';
import { Ajv2020 } from 'ajv/dist/2020.js';
import addFormatsModule from 'ajv-formats';
import { apiDocument } from '../../server/platform/spec.js';
import { addConnection } from '../../server/modules/dms/connections.js';
import { kyselyOver } from '../../server/platform/database/database.js';
import { inTransaction } from '../../server/platform/database/transaction.js';
import { createCaller, type TestCaller } from '../support/callers.js';
import { useSharedService } from '../support/service.js';

const api = useSharedService(test);
const addFormats = addFormatsModule as unknown as (ajv: Ajv2020) => Ajv2020;
type Json = Record<string, any>;

const operation = (apiDocument as Json).paths['/dms/{system}/documents'].post;
const examples = operation.requestBody.content['application/json'].examples as Json;

/** The request body's schema, as a tool reads it from the description. */
const requestSchema = (() => {
  const ajv = new Ajv2020({ allErrors: true, strict: false });
  addFormats(ajv);
  ajv.addSchema({ $id: 'api', components: (apiDocument as Json).components });
  return ajv.compile({ $ref: 'api#/components/schemas/DmsIngestRequest' });
})();

/** The organisation the pushes go to: a canonical connection for DIST001, the examples' distributor. */
let ready: Promise<TestCaller> | undefined;
const shop = () =>
  (ready ??= (async () => {
    const pool = api().pool;
    const caller = await createCaller(pool, { modules: ['delivery', 'field-sales'] });
    await inTransaction(kyselyOver(pool), (tx) =>
      addConnection(tx, caller.organizationId, 'canonical', { distributorCode: 'DIST001' }),
    );
    return caller;
  })());

const push = async (text: string | undefined) =>
  api().request('POST', '/dms/canonical/documents', {
    headers: { ...(await shop()).auth, 'Content-Type': 'application/json', 'Idempotency-Key': randomUUID() },
    body: text,
  });

const invoice = () => structuredClone(examples.sale_invoice.value) as Json;

test.serial(
  'each rejected_* example is valid against the request schema (no 400 expected) and gets exactly the flags it declares',
  async (t) => {
    const declared = Object.entries(examples).filter(([, example]) => (example as Json)['x-expected-flags']);
    t.true(declared.length >= 5);
    const reasons = new Set<string>();
    for (const [name, example] of declared as [string, Json][]) {
      t.true(requestSchema(example.value), `${name}: the request schema takes it`);
      const answer = await push(JSON.stringify(example.value));
      t.is(answer.status, 202, name);
      t.deepEqual(
        answer.body.flags.map((f: Json) => ({ state: f.state, ...(f.reasonCode ? { reasonCode: f.reasonCode } : {}) })),
        example['x-expected-flags'],
        name,
      );
      for (const flag of example['x-expected-flags']) reasons.add(flag.reasonCode);
      // The reason code is one the operation's description lists among the checks on arrival, in order.
      for (const flag of answer.body.flags as Json[])
        t.true(
          (operation.description as string).includes(`-> ${flag.reasonCode}`) ||
            (operation.description as string).includes(`-> \`rejected\`, ${flag.reasonCode}`),
          `${name}: ${flag.reasonCode}`,
        );
    }
    t.deepEqual([...reasons].sort(), ['R01', 'R04', 'R07', 'R09']);
  },
);

test.serial(
  'what the request schema refuses is a 400 naming the problem, and nothing is stored; what it takes is a 202, malformed documents flagged R09',
  async (t) => {
    const caller = await shop();
    const before = await api().pool.query('SELECT count(*)::int AS n FROM dms_documents WHERE organization_id = $1', [
      caller.organizationId,
    ]);
    const many = { documents: Array.from({ length: 501 }, invoice) };
    const refused: [string, string | undefined, string, string?][] = [
      ['a number', '5', 'invalid_json'],
      ['a string', '"CSR01000123"', 'invalid_json'],
      ['null', 'null', 'invalid_json'],
      ['no body', undefined, 'required_field', ''],
      ['an array of documents', JSON.stringify([invoice()]), 'invalid_field', '/'],
      ['documents not an array', JSON.stringify({ documents: invoice() }), 'invalid_field', '/documents'],
      ['no documents', JSON.stringify({ documents: [] }), 'invalid_field', '/documents'],
      ['501 documents', JSON.stringify(many), 'invalid_field', '/documents'],
      [
        'a field beside documents',
        JSON.stringify({ documents: [invoice()], source: 'dms' }),
        'unknown_field',
        '/source',
      ],
    ];
    for (const [what, text, code, field] of refused) {
      if (text !== undefined) t.false(requestSchema(JSON.parse(text)), `${what}: the request schema refuses it`);
      const answer = await push(text);
      t.is(answer.status, 400, what);
      t.is(answer.body.code, code, what);
      if (field !== undefined) t.is(answer.body.errors?.[0]?.field, field, what);
      t.true((operation.description as string).includes(`400 \`${code}\``), `${what}: the description names ${code}`);
    }
    const after = await api().pool.query('SELECT count(*)::int AS n FROM dms_documents WHERE organization_id = $1', [
      caller.organizationId,
    ]);
    t.is(after.rows[0].n, before.rows[0].n, 'nothing of a refused request is stored');

    const wrongType = invoice();
    wrongType.body.lines[0].quantity = 'two';
    const unknownField = invoice();
    unknownField.body.colour = 'red';
    const taken: [string, unknown][] = [
      ['an empty object', {}],
      [
        'a document without its body',
        {
          documentType: 'sale_invoice',
          distributorCode: 'DIST001',
          documentNumber: 'CSR01000991',
          documentDate: '2026-11-25',
        },
      ],
      [
        'a batch of a number, an array and a document with a quantity that is not a number',
        { documents: [7, [], wrongType] },
      ],
      ['a typed body with an unknown field', unknownField],
    ];
    for (const [what, body] of taken) {
      t.true(requestSchema(body), `${what}: the request schema takes it`);
      const answer = await push(JSON.stringify(body));
      t.is(answer.status, 202, what);
      for (const flag of answer.body.flags as Json[]) {
        t.like(flag, { state: 'rejected', reasonCode: 'R09' }, what);
        t.regex(flag.reasonText, /^Format( of a sale_invoice)?: /, what);
      }
    }
  },
);
