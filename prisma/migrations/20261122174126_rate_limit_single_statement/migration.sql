-- AlterTable
ALTER TABLE "rate_limit_buckets" ADD COLUMN     "last_allowed" BOOLEAN NOT NULL DEFAULT true;

-- The bucket is now taken by one upsert statement (server/platform/access/rate-limit.ts), which holds the row
-- lock for less time than the function did.
DROP FUNCTION take_rate_limit_token(TEXT, TEXT, TEXT, DOUBLE PRECISION, DOUBLE PRECISION);
