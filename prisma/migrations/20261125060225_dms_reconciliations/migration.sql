-- CreateTable
CREATE TABLE "dms_reconciliations" (
    "organization_id" TEXT NOT NULL,
    "id" TEXT NOT NULL,
    "connection_id" TEXT NOT NULL,
    "salesman_code" TEXT NOT NULL,
    "business_date" TEXT NOT NULL,
    "status" TEXT NOT NULL,
    "difference_count" INTEGER NOT NULL,
    "result" JSONB NOT NULL,
    "result_hash" TEXT NOT NULL,
    "checked_at" TIMESTAMPTZ(3) NOT NULL,
    "created_at" TIMESTAMPTZ(3) NOT NULL DEFAULT CURRENT_TIMESTAMP,
    "updated_at" TIMESTAMPTZ(3) NOT NULL DEFAULT CURRENT_TIMESTAMP,

    CONSTRAINT "dms_reconciliations_pkey" PRIMARY KEY ("organization_id","id")
);

-- CreateIndex
CREATE INDEX "dms_reconciliations_organization_id_connection_id_updated_a_idx" ON "dms_reconciliations"("organization_id", "connection_id", "updated_at", "id");

-- CreateIndex
CREATE UNIQUE INDEX "dms_reconciliations_organization_id_connection_id_salesman__key" ON "dms_reconciliations"("organization_id", "connection_id", "salesman_code", "business_date");

-- CreateIndex
CREATE INDEX "dms_documents_organization_id_connection_id_document_date_s_idx" ON "dms_documents"("organization_id", "connection_id", "document_date", "salesman_code");

-- AddForeignKey
ALTER TABLE "dms_reconciliations" ADD CONSTRAINT "dms_reconciliations_organization_id_fkey" FOREIGN KEY ("organization_id") REFERENCES "organizations"("id") ON DELETE RESTRICT ON UPDATE RESTRICT;

-- AddForeignKey
ALTER TABLE "dms_reconciliations" ADD CONSTRAINT "dms_reconciliations_organization_id_connection_id_fkey" FOREIGN KEY ("organization_id", "connection_id") REFERENCES "dms_connections"("organization_id", "id") ON DELETE RESTRICT ON UPDATE RESTRICT;

-- The result's states and its count agree (Prisma has no CHECK constraints).
ALTER TABLE "dms_reconciliations" ADD CONSTRAINT "dms_reconciliations_status_check" CHECK ("status" IN ('balanced', 'differences'));
ALTER TABLE "dms_reconciliations" ADD CONSTRAINT "dms_reconciliations_count_check" CHECK ("difference_count" >= 0 AND ("status" = 'balanced') = ("difference_count" = 0));
ALTER TABLE "dms_reconciliations" ADD CONSTRAINT "dms_reconciliations_date_check" CHECK ("business_date" ~ '^\d{4}-\d{2}-\d{2}$');
