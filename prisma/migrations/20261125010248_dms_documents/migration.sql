-- AlterTable
ALTER TABLE "connector_connections" DROP COLUMN "fiscalise_dms";

-- CreateTable
CREATE TABLE "dms_connections" (
    "organization_id" TEXT NOT NULL,
    "id" TEXT NOT NULL,
    "system" TEXT NOT NULL,
    "distributor_code" TEXT NOT NULL,
    "synchronous" BOOLEAN NOT NULL DEFAULT false,
    "return_path" TEXT NOT NULL,
    "webhook_endpoint_id" TEXT,
    "fiscalise" BOOLEAN NOT NULL DEFAULT true,
    "cut_off_time" TEXT NOT NULL DEFAULT '20:00',
    "created_at" TIMESTAMPTZ(3) NOT NULL DEFAULT CURRENT_TIMESTAMP,
    "updated_at" TIMESTAMPTZ(3) NOT NULL DEFAULT CURRENT_TIMESTAMP,

    CONSTRAINT "dms_connections_pkey" PRIMARY KEY ("organization_id","id")
);

-- CreateTable
CREATE TABLE "dms_batches" (
    "organization_id" TEXT NOT NULL,
    "id" TEXT NOT NULL,
    "connection_id" TEXT NOT NULL,
    "source" TEXT NOT NULL,
    "document_count" INTEGER NOT NULL,
    "synchronous" BOOLEAN NOT NULL,
    "received_at" TIMESTAMPTZ(3) NOT NULL DEFAULT CURRENT_TIMESTAMP,

    CONSTRAINT "dms_batches_pkey" PRIMARY KEY ("organization_id","id")
);

-- CreateTable
CREATE TABLE "dms_documents" (
    "organization_id" TEXT NOT NULL,
    "id" TEXT NOT NULL,
    "connection_id" TEXT NOT NULL,
    "batch_id" TEXT NOT NULL,
    "position" INTEGER NOT NULL,
    "natural_key" TEXT,
    "version" INTEGER,
    "document_type" TEXT NOT NULL,
    "document_number" TEXT NOT NULL,
    "document_date" TEXT,
    "distributor_code" TEXT NOT NULL,
    "salesman_code" TEXT,
    "dms_status" TEXT,
    "content" JSONB NOT NULL,
    "content_hash" TEXT NOT NULL,
    "state" TEXT NOT NULL,
    "note" TEXT,
    "reason_code" TEXT,
    "reason_text" TEXT,
    "mikono_table" TEXT,
    "mikono_id" TEXT,
    "quickbooks_ref" TEXT,
    "posted_at" TIMESTAMPTZ(3),
    "result" JSONB,
    "accounting_type" TEXT,
    "accounting_id" TEXT,
    "waiting_for" TEXT,
    "retry_until" TIMESTAMPTZ(3),
    "next_attempt_at" TIMESTAMPTZ(3),
    "attempts" INTEGER NOT NULL DEFAULT 0,
    "received_at" TIMESTAMPTZ(3) NOT NULL DEFAULT CURRENT_TIMESTAMP,
    "updated_at" TIMESTAMPTZ(3) NOT NULL DEFAULT CURRENT_TIMESTAMP,

    CONSTRAINT "dms_documents_pkey" PRIMARY KEY ("organization_id","id")
);

-- CreateTable
CREATE TABLE "dms_reason_codes" (
    "organization_id" TEXT NOT NULL,
    "code" TEXT NOT NULL,
    "kind" TEXT NOT NULL,
    "description" TEXT NOT NULL,
    "created_at" TIMESTAMPTZ(3) NOT NULL DEFAULT CURRENT_TIMESTAMP,
    "updated_at" TIMESTAMPTZ(3) NOT NULL DEFAULT CURRENT_TIMESTAMP,

    CONSTRAINT "dms_reason_codes_pkey" PRIMARY KEY ("organization_id","code")
);

-- CreateIndex
CREATE UNIQUE INDEX "dms_connections_organization_id_system_key" ON "dms_connections"("organization_id", "system");

-- CreateIndex
CREATE INDEX "dms_documents_organization_id_connection_id_updated_at_id_idx" ON "dms_documents"("organization_id", "connection_id", "updated_at", "id");

-- CreateIndex
CREATE INDEX "dms_documents_organization_id_batch_id_position_idx" ON "dms_documents"("organization_id", "batch_id", "position");

-- CreateIndex
CREATE INDEX "dms_documents_organization_id_accounting_type_accounting_id_idx" ON "dms_documents"("organization_id", "accounting_type", "accounting_id");

-- CreateIndex
CREATE INDEX "dms_documents_organization_id_waiting_for_idx" ON "dms_documents"("organization_id", "waiting_for");

-- CreateIndex
CREATE INDEX "dms_documents_next_attempt_at_idx" ON "dms_documents"("next_attempt_at");

-- CreateIndex
CREATE UNIQUE INDEX "dms_documents_organization_id_natural_key_version_key" ON "dms_documents"("organization_id", "natural_key", "version");

-- AddForeignKey
ALTER TABLE "dms_connections" ADD CONSTRAINT "dms_connections_organization_id_fkey" FOREIGN KEY ("organization_id") REFERENCES "organizations"("id") ON DELETE RESTRICT ON UPDATE RESTRICT;

-- AddForeignKey
ALTER TABLE "dms_batches" ADD CONSTRAINT "dms_batches_organization_id_fkey" FOREIGN KEY ("organization_id") REFERENCES "organizations"("id") ON DELETE RESTRICT ON UPDATE RESTRICT;

-- AddForeignKey
ALTER TABLE "dms_batches" ADD CONSTRAINT "dms_batches_organization_id_connection_id_fkey" FOREIGN KEY ("organization_id", "connection_id") REFERENCES "dms_connections"("organization_id", "id") ON DELETE RESTRICT ON UPDATE RESTRICT;

-- AddForeignKey
ALTER TABLE "dms_documents" ADD CONSTRAINT "dms_documents_organization_id_fkey" FOREIGN KEY ("organization_id") REFERENCES "organizations"("id") ON DELETE RESTRICT ON UPDATE RESTRICT;

-- AddForeignKey
ALTER TABLE "dms_documents" ADD CONSTRAINT "dms_documents_organization_id_connection_id_fkey" FOREIGN KEY ("organization_id", "connection_id") REFERENCES "dms_connections"("organization_id", "id") ON DELETE RESTRICT ON UPDATE RESTRICT;

-- AddForeignKey
ALTER TABLE "dms_documents" ADD CONSTRAINT "dms_documents_organization_id_batch_id_fkey" FOREIGN KEY ("organization_id", "batch_id") REFERENCES "dms_batches"("organization_id", "id") ON DELETE RESTRICT ON UPDATE RESTRICT;

-- AddForeignKey
ALTER TABLE "dms_reason_codes" ADD CONSTRAINT "dms_reason_codes_organization_id_fkey" FOREIGN KEY ("organization_id") REFERENCES "organizations"("id") ON DELETE RESTRICT ON UPDATE RESTRICT;

-- The flag's rules, kept by the table: a state is one of four; a posted flag names its record and when; a rejected one
-- its reason code (R01 to R09) and text; a document in the chain of its key has a version from 1.
ALTER TABLE "dms_documents" ADD CONSTRAINT "dms_documents_state_check" CHECK ("state" IN ('received', 'posted', 'rejected', 'superseded'));
ALTER TABLE "dms_documents" ADD CONSTRAINT "dms_documents_posted_check" CHECK ("state" <> 'posted' OR ("mikono_table" IS NOT NULL AND "mikono_id" IS NOT NULL AND "posted_at" IS NOT NULL));
ALTER TABLE "dms_documents" ADD CONSTRAINT "dms_documents_rejected_check" CHECK ("state" <> 'rejected' OR ("reason_code" ~ '^R0[1-9]$' AND "reason_text" IS NOT NULL));
ALTER TABLE "dms_documents" ADD CONSTRAINT "dms_documents_version_check" CHECK (("natural_key" IS NULL) = ("version" IS NULL) AND ("version" IS NULL OR "version" >= 1));
ALTER TABLE "dms_connections" ADD CONSTRAINT "dms_connections_return_path_check" CHECK ("return_path" IN ('response', 'callback', 'flag_file'));
ALTER TABLE "dms_connections" ADD CONSTRAINT "dms_connections_cut_off_check" CHECK ("cut_off_time" ~ '^([01][0-9]|2[0-3]):[0-5][0-9]$');
ALTER TABLE "dms_reason_codes" ADD CONSTRAINT "dms_reason_codes_kind_check" CHECK ("kind" IN ('stock', 'cheque'));
