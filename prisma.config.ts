// Prisma 7 reads its configuration here. The datasource URL is only used by Prisma's own CLI commands
// (for example `prisma migrate deploy` on a machine with network access); the service itself connects
// through server/platform/database.
import { defineConfig } from 'prisma/config';

export default defineConfig({
  schema: 'prisma/schema.prisma',
  migrations: { path: 'prisma/migrations' },
  datasource: { url: process.env.DATABASE_URL ?? 'postgresql://localhost:5432/erp' },
});
