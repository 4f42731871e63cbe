import test from 'ava';
import { createHash } from 'node:crypto';
import { cpSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import pg from 'pg';
import { diffMigrationsToSchema } from '../../scripts/db/schema-engine.js';
import { applyMigrations, MIGRATIONS_DIR, readMigrations } from '../../server/platform/database/migrations.js';
import { createEmptyDatabase } from '../support/database.js';

const SCHEMA = join(MIGRATIONS_DIR, '..', 'schema.prisma');

async function withEmptyDatabase<T>(label: string, use: (url: string) => Promise<T>): Promise<T> {
  const database = await createEmptyDatabase(label);
  try {
    return await use(database.url);
  } finally {
    await database.drop();
  }
}

test('prisma/migrations and prisma/schema.prisma agree: the schema engine finds nothing left to migrate', async (t) => {
  const sql = await withEmptyDatabase('shadow_agree', (url) =>
    diffMigrationsToSchema({ migrationsDir: MIGRATIONS_DIR, schemaPath: SCHEMA, shadowDatabaseUrl: url }),
  );
  t.is(sql, '', `schema.prisma has changes no migration carries; run npm run db:migration -- <name>:\n${sql}`);
});

test('a schema change without its migration is caught by the same check', async (t) => {
  const dir = mkdtempSync(join(tmpdir(), 'erp-schema-'));
  try {
    const changed = readFileSync(SCHEMA, 'utf8') + '\nmodel Probe {\n  id String @id\n  @@map("probes")\n}\n';
    writeFileSync(join(dir, 'schema.prisma'), changed);
    const sql = await withEmptyDatabase('shadow_drift', (url) =>
      diffMigrationsToSchema({
        migrationsDir: MIGRATIONS_DIR,
        schemaPath: join(dir, 'schema.prisma'),
        shadowDatabaseUrl: url,
      }),
    );
    t.regex(sql, /CREATE TABLE "probes"/);
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
});

test("migrations are applied once, recorded in _prisma_migrations with Prisma's sha256 checksums", async (t) => {
  await withEmptyDatabase('apply', async (url) => {
    const pool = new pg.Pool({ connectionString: url });
    try {
      const expected = readMigrations();
      t.true(expected.length > 0);
      t.deepEqual(
        await applyMigrations(pool),
        expected.map((m) => m.name),
      );
      t.deepEqual(await applyMigrations(pool), [], 'a second start applies nothing');
      const { rows } = await pool.query(
        'SELECT migration_name, checksum, finished_at FROM "_prisma_migrations" ORDER BY migration_name',
      );
      t.deepEqual(
        rows.map((r) => r.migration_name),
        expected.map((m) => m.name),
      );
      for (const row of rows) {
        const sql = readFileSync(join(MIGRATIONS_DIR, row.migration_name, 'migration.sql'));
        t.is(row.checksum, createHash('sha256').update(sql).digest('hex'));
        t.truthy(row.finished_at);
      }
      const { rows: tables } = await pool.query("SELECT to_regclass('public.organizations') AS t");
      t.is(tables[0].t, 'organizations');
    } finally {
      await pool.end();
    }
  });
});

test('two processes starting at once apply each migration exactly once', async (t) => {
  await withEmptyDatabase('concurrent', async (url) => {
    const pools = [new pg.Pool({ connectionString: url }), new pg.Pool({ connectionString: url })];
    try {
      const [a, b] = await Promise.all(pools.map((pool) => applyMigrations(pool)));
      t.deepEqual(
        [...a!, ...b!].sort(),
        readMigrations()
          .map((m) => m.name)
          .sort(),
      );
      const { rows } = await pools[0]!.query('SELECT count(*)::int AS n FROM "_prisma_migrations"');
      t.is(rows[0].n, readMigrations().length);
    } finally {
      await Promise.all(pools.map((pool) => pool.end()));
    }
  });
});

test('a migration edited after it was applied is refused, and a failing migration leaves nothing behind', async (t) => {
  const dir = mkdtempSync(join(tmpdir(), 'erp-migrations-'));
  try {
    cpSync(MIGRATIONS_DIR, dir, { recursive: true });
    await withEmptyDatabase('edited', async (url) => {
      const pool = new pg.Pool({ connectionString: url });
      try {
        await applyMigrations(pool, dir);
        const first = readMigrations(dir)[0]!;
        writeFileSync(join(dir, first.name, 'migration.sql'), first.sql + '\n-- edited\n');
        await t.throwsAsync(applyMigrations(pool, dir), { message: /was changed after it was applied/ });

        writeFileSync(join(dir, first.name, 'migration.sql'), first.sql);
        const broken = join(dir, '29991231235959_broken');
        cpSync(join(dir, first.name), broken, { recursive: true });
        writeFileSync(
          join(broken, 'migration.sql'),
          'CREATE TABLE half_written (id int);\nSELECT no_such_function();\n',
        );
        await t.throwsAsync(applyMigrations(pool, dir), { message: /29991231235959_broken failed/ });
        const { rows } = await pool.query("SELECT to_regclass('public.half_written') AS t");
        t.is(rows[0].t, null, 'the failed migration rolled back whole');
      } finally {
        await pool.end();
      }
    });
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
});
