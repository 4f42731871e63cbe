-- AlterTable
ALTER TABLE "credit_notes" ALTER COLUMN "posting_status" SET DEFAULT 'not_applicable';

-- AlterTable
ALTER TABLE "invoices" ADD COLUMN     "accounting_ref" TEXT,
ADD COLUMN     "accounting_type" TEXT,
ADD COLUMN     "fiscal_fdn" TEXT,
ADD COLUMN     "fiscal_id" TEXT,
ADD COLUMN     "fiscal_qr_code" TEXT,
ADD COLUMN     "fiscal_status" TEXT,
ADD COLUMN     "fiscal_verification_code" TEXT,
ADD COLUMN     "fiscalised_at" TIMESTAMPTZ(3),
ADD COLUMN     "posting_reason" TEXT,
ADD COLUMN     "posting_status" TEXT NOT NULL DEFAULT 'not_applicable';

-- AlterTable
ALTER TABLE "payments" ADD COLUMN     "accounting_ref" TEXT,
ADD COLUMN     "accounting_type" TEXT,
ADD COLUMN     "posting_reason" TEXT,
ADD COLUMN     "posting_status" TEXT NOT NULL DEFAULT 'not_applicable';

-- CreateTable
CREATE TABLE "connector_connections" (
    "organization_id" TEXT NOT NULL,
    "system" TEXT NOT NULL,
    "provider" TEXT NOT NULL,
    "enabled" BOOLEAN NOT NULL DEFAULT true,
    "base_url" TEXT NOT NULL,
    "account" TEXT NOT NULL,
    "device_no" TEXT,
    "credentials_ciphertext" TEXT,
    "fiscalise_dms" BOOLEAN NOT NULL DEFAULT true,
    "created_at" TIMESTAMPTZ(3) NOT NULL DEFAULT CURRENT_TIMESTAMP,
    "updated_at" TIMESTAMPTZ(3) NOT NULL DEFAULT CURRENT_TIMESTAMP,

    CONSTRAINT "connector_connections_pkey" PRIMARY KEY ("organization_id","system")
);

-- CreateTable
CREATE TABLE "external_postings" (
    "organization_id" TEXT NOT NULL,
    "id" TEXT NOT NULL,
    "document_type" TEXT NOT NULL,
    "document_id" TEXT NOT NULL,
    "document_number" TEXT NOT NULL,
    "system" TEXT NOT NULL,
    "operation" TEXT NOT NULL DEFAULT 'post',
    "status" TEXT NOT NULL,
    "request_id" TEXT NOT NULL,
    "attempts" INTEGER NOT NULL DEFAULT 0,
    "next_attempt_at" TIMESTAMPTZ(3) NOT NULL DEFAULT CURRENT_TIMESTAMP,
    "queued_at" TIMESTAMPTZ(3),
    "last_attempt_at" TIMESTAMPTZ(3),
    "claimed_by" TEXT,
    "external_type" TEXT,
    "external_ref" TEXT,
    "reason" TEXT,
    "reversible_at" TIMESTAMPTZ(3),
    "created_at" TIMESTAMPTZ(3) NOT NULL DEFAULT CURRENT_TIMESTAMP,
    "updated_at" TIMESTAMPTZ(3) NOT NULL DEFAULT CURRENT_TIMESTAMP,

    CONSTRAINT "external_postings_pkey" PRIMARY KEY ("organization_id","id")
);

-- CreateIndex
CREATE INDEX "external_postings_organization_id_status_updated_at_idx" ON "external_postings"("organization_id", "status", "updated_at");

-- CreateIndex
CREATE INDEX "external_postings_queued_at_next_attempt_at_idx" ON "external_postings"("queued_at", "next_attempt_at");

-- CreateIndex
CREATE UNIQUE INDEX "external_postings_organization_id_document_type_document_id_key" ON "external_postings"("organization_id", "document_type", "document_id", "system", "operation");

-- AddForeignKey
ALTER TABLE "connector_connections" ADD CONSTRAINT "connector_connections_organization_id_fkey" FOREIGN KEY ("organization_id") REFERENCES "organizations"("id") ON DELETE RESTRICT ON UPDATE RESTRICT;

-- AddForeignKey
ALTER TABLE "external_postings" ADD CONSTRAINT "external_postings_organization_id_fkey" FOREIGN KEY ("organization_id") REFERENCES "organizations"("id") ON DELETE RESTRICT ON UPDATE RESTRICT;

-- The values each column takes (the schema cannot say them).
ALTER TABLE connector_connections ADD CONSTRAINT connector_connections_system_known CHECK (
  (system = 'accounting' AND provider = 'quickbooks' AND device_no IS NULL) OR (system = 'fiscal' AND provider = 'efris'));
ALTER TABLE external_postings ADD CONSTRAINT external_postings_kind_known CHECK (
  document_type IN ('invoice', 'payment', 'credit_note') AND system IN ('accounting', 'fiscal') AND operation IN ('post', 'reverse')
  AND (operation = 'post' OR system = 'accounting'));
ALTER TABLE external_postings ADD CONSTRAINT external_postings_status_known CHECK (status IN ('pending', 'posted', 'failed', 'cancelled'));
ALTER TABLE external_postings ADD CONSTRAINT external_postings_failure_explained CHECK (status NOT IN ('failed', 'cancelled') OR reason IS NOT NULL);
ALTER TABLE external_postings ADD CONSTRAINT external_postings_attempts_counted CHECK (attempts >= 0);
ALTER TABLE invoices ADD CONSTRAINT invoices_posting_status_known CHECK (posting_status IN ('pending', 'posted', 'failed', 'not_applicable', 'reversed'));
ALTER TABLE payments ADD CONSTRAINT payments_posting_status_known CHECK (posting_status IN ('pending', 'posted', 'failed', 'not_applicable', 'reversed'));
ALTER TABLE credit_notes ADD CONSTRAINT credit_notes_posting_status_known CHECK (posting_status IN ('pending', 'posted', 'failed', 'not_applicable', 'reversed'));
ALTER TABLE invoices ADD CONSTRAINT invoices_fiscal_status_known CHECK (fiscal_status IS NULL OR fiscal_status IN ('pending', 'fiscalised', 'failed', 'cancelled'));
ALTER TABLE credit_notes ADD CONSTRAINT credit_notes_fiscal_status_known CHECK (fiscal_status IS NULL OR fiscal_status IN ('pending', 'submitted', 'fiscalised', 'failed', 'rejected', 'cancelled'));

-- Credit notes issued before any connection existed were shown `pending` for a posting nobody would make.
UPDATE credit_notes SET posting_status = 'not_applicable', posting_reason = 'Issued before the organisation had an accounting connection.'
WHERE posting_status = 'pending';
ALTER TABLE credit_notes ALTER COLUMN posting_status SET DEFAULT 'not_applicable';
