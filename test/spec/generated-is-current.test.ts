import test from 'ava';
import { mkdtempSync, readdirSync, readFileSync, rmSync, statSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, relative } from 'node:path';
import { generate, SDK_TYPES_DIR } from '../../scripts/generate.js';

function files(dir: string): string[] {
  return readdirSync(dir).flatMap((name) => {
    const path = join(dir, name);
    return statSync(path).isDirectory() ? files(path) : [path];
  });
}

test('generated/ is exactly what npm run generate makes from spec/ and prisma/ now', async (t) => {
  const fresh = mkdtempSync(join(tmpdir(), 'erp-generated-'));
  try {
    await generate(fresh);
    const expected = files(fresh)
      .map((f) => relative(fresh, f))
      .sort();
    const actual = files('generated')
      .map((f) => relative('generated', f))
      .sort();
    t.deepEqual(actual, expected, 'the same files');
    const stale = expected.filter(
      (name) => !readFileSync(join(fresh, name)).equals(readFileSync(join('generated', name))),
    );
    t.deepEqual(stale, [], 'stale files; run npm run generate');
  } finally {
    rmSync(fresh, { recursive: true, force: true });
  }
});

test('the SDK carries the same generated types as the server', (t) => {
  t.true(readFileSync(join(SDK_TYPES_DIR, 'api-types.ts')).equals(readFileSync('generated/api-types.ts')));
});
