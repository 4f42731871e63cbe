// The functions take_rate_tokens (decision 0053) and take_address_tokens (decision 0056) run the statements
// rate-limit.ts and address-budget.ts build, word for word: each body in the newest migration that defines it is
// compared with the statement as compiled now. A change to a bucket's arithmetic (takeTokenUpsert,
// takeForAddressesUpsert, grantedTokens) without a migration replacing the function fails here, not silently in
// production.
import { readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import test from 'ava';
import { takeAddressTokensStatement } from '../../server/platform/access/address-budget.js';
import { takeTokensStatement } from '../../server/platform/access/rate-limit.js';

const migrations = fileURLToPath(new URL('../../prisma/migrations/', import.meta.url));
const words = (text: string) => text.replace(/\s+/g, ' ').trim();

function newestBody(name: string): { migration: string; body: string } {
  const defining = readdirSync(migrations, { withFileTypes: true })
    .filter((entry) => entry.isDirectory())
    .map((entry) => entry.name)
    .sort()
    .filter((folder) =>
      new RegExp(`FUNCTION ${name}\\(`).test(readFileSync(join(migrations, folder, 'migration.sql'), 'utf8')),
    );
  const migration = defining.at(-1)!;
  const text = readFileSync(join(migrations, migration, 'migration.sql'), 'utf8');
  const body = /RETURN QUERY\s+([\s\S]*?);\s*END;/.exec(text)?.[1];
  return { migration, body: body ?? '' };
}

const functions = [
  { name: 'take_rate_tokens', statement: takeTokensStatement, source: 'rate-limit.ts' },
  { name: 'take_address_tokens', statement: takeAddressTokensStatement, source: 'address-budget.ts' },
];

for (const { name, statement, source } of functions) {
  test(`the newest ${name} runs the statement ${source} compiles, its parameter named p_batch`, (t) => {
    const { migration, body } = newestBody(name);
    t.truthy(migration, `a migration defines ${name}`);
    const compiled = statement('batch').compile();
    t.deepEqual(compiled.parameters, ['batch'], 'the batch is the only parameter');
    t.is(words(body), words(compiled.sql.replace('$1', 'p_batch')), `${migration} differs from ${source}`);
  });

  test(`the comparison of ${name} would see a changed statement`, (t) => {
    const { body } = newestBody(name);
    const changed = statement('batch').compile().sql.replace('$1', 'p_batch').replace('/ 60', '/ 61');
    t.not(words(body), words(changed));
  });
}
