// The function take_rate_tokens (decision 0053) runs the statement rate-limit.ts builds, word for word: its body in
// the newest migration that defines it is compared with takeTokensStatement as compiled now. A change to the bucket's
// arithmetic (takeTokenUpsert) without a migration replacing the function fails here, not silently in production.
import { readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import test from 'ava';
import { takeTokensStatement } from '../../server/platform/access/rate-limit.js';

const migrations = fileURLToPath(new URL('../../prisma/migrations/', import.meta.url));
const words = (text: string) => text.replace(/\s+/g, ' ').trim();

function newestBody(): { migration: string; body: string } {
  const defining = readdirSync(migrations, { withFileTypes: true })
    .filter((entry) => entry.isDirectory())
    .map((entry) => entry.name)
    .sort()
    .filter((name) =>
      /FUNCTION take_rate_tokens\(/.test(readFileSync(join(migrations, name, 'migration.sql'), 'utf8')),
    );
  const migration = defining.at(-1)!;
  const text = readFileSync(join(migrations, migration, 'migration.sql'), 'utf8');
  const body = /RETURN QUERY\s+([\s\S]*?);\s*END;/.exec(text)?.[1];
  return { migration, body: body ?? '' };
}

test('the newest take_rate_tokens runs the statement takeTokensStatement compiles, its parameter named p_batch', (t) => {
  const { migration, body } = newestBody();
  t.truthy(migration, 'a migration defines take_rate_tokens');
  const compiled = takeTokensStatement('batch').compile();
  t.deepEqual(compiled.parameters, ['batch'], 'the batch is the only parameter');
  t.is(words(body), words(compiled.sql.replace('$1', 'p_batch')), `${migration} differs from rate-limit.ts`);
});

test('the comparison would see a changed statement', (t) => {
  const { body } = newestBody();
  const changed = takeTokensStatement('batch').compile().sql.replace('$1', 'p_batch').replace('/ 60', '/ 61');
  t.not(words(body), words(changed));
});
