-- AlterTable
ALTER TABLE "dms_batches" ADD COLUMN     "file_bytes" INTEGER,
ADD COLUMN     "file_content" BYTEA,
ADD COLUMN     "file_error" TEXT,
ADD COLUMN     "file_error_column" INTEGER,
ADD COLUMN     "file_error_line" INTEGER,
ADD COLUMN     "file_name" TEXT,
ADD COLUMN     "file_parsed_at" TIMESTAMPTZ(3),
ADD COLUMN     "file_sha256" TEXT,
ADD COLUMN     "file_status" TEXT;

-- CreateIndex
CREATE UNIQUE INDEX "dms_batches_organization_id_connection_id_file_sha256_key" ON "dms_batches"("organization_id", "connection_id", "file_sha256");

-- A batch is a JSON push or an XML file; a file's columns are all there exactly when it is a file, and a parse error
-- has its place in the file.
ALTER TABLE "dms_batches" ADD CONSTRAINT "dms_batches_source_check" CHECK ("source" IN ('json', 'xml_file'));
ALTER TABLE "dms_batches" ADD CONSTRAINT "dms_batches_file_check" CHECK (
  ("source" = 'json' AND "file_status" IS NULL AND "file_sha256" IS NULL AND "file_bytes" IS NULL AND "file_content" IS NULL)
  OR ("source" = 'xml_file' AND "file_status" IN ('received', 'parsed', 'failed') AND "file_sha256" ~ '^[0-9a-f]{64}$'
      AND "file_bytes" BETWEEN 1 AND 5242880
      AND ("file_status" = 'failed') = ("file_error" IS NOT NULL)
      AND ("file_status" = 'received') = ("file_parsed_at" IS NULL)));
