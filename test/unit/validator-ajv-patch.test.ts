// The request validator's copy of Ajv skips its walk for `$id`/`$anchor` under a schema that has none
// (server/platform/http/openapi-validator.ts, decision 0057). What the walk registers must still be registered when
// there is something to find: a nested `$id` and an `$anchor` resolve, in a schema added after the patch, and a schema
// without either compiles and validates as before.
import test from 'ava';
import { createRequire } from 'node:module';
import { openApiValidator } from '../../server/platform/http/openapi-validator.js';
import { apiDocument } from '../../server/platform/spec.js';

openApiValidator({ document: apiDocument, validateResponses: false }); // loads the library and applies its patches
const validatorRequire = createRequire(createRequire(import.meta.url).resolve('express-openapi-validator'));
const { Ajv2020 } = validatorRequire('ajv/dist/2020') as typeof import('ajv/dist/2020.js');
const resolveModule = validatorRequire('ajv/dist/compile/resolve') as { getSchemaRefs: { __idFree?: boolean } };

test("the validator's Ajv has the patched walk", (t) => {
  t.true(resolveModule.getSchemaRefs.__idFree);
});

test('a nested $id and an $anchor below the root are still registered and resolve', (t) => {
  const ajv = new Ajv2020({ strict: false });
  ajv.addSchema(
    {
      $id: 'https://example.test/root',
      properties: {
        amount: { $anchor: 'amount', type: 'integer', minimum: 1 },
        code: { $id: 'https://example.test/code', type: 'string', pattern: '^[A-Z]+$' },
      },
    },
    'root',
  );
  const amount = ajv.compile({ $ref: 'https://example.test/root#amount' });
  t.true(amount(3));
  t.false(amount(0));
  const code = ajv.getSchema('https://example.test/code');
  t.truthy(code, 'the nested $id is known to Ajv');
  t.true(code!('UGX'));
  t.false(code!('ugx'));
});

test('a schema without ids compiles and validates, its local references resolved', (t) => {
  const ajv = new Ajv2020({ strict: false });
  const validate = ajv.compile({
    components: { positive: { type: 'integer', minimum: 1 } },
    type: 'object',
    properties: { quantity: { $ref: '#/components/positive' } },
    required: ['quantity'],
  });
  t.true(validate({ quantity: 2 }));
  t.false(validate({ quantity: 0 }));
  t.false(validate({}));
});
