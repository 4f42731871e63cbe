-- AlterTable
ALTER TABLE "stock_documents" ADD COLUMN     "accounting_ref" TEXT,
ADD COLUMN     "accounting_type" TEXT,
ADD COLUMN     "business_date" DATE,
ADD COLUMN     "posting_reason" TEXT,
ADD COLUMN     "posting_status" TEXT NOT NULL DEFAULT 'not_applicable',
ADD COLUMN     "supplier_code" TEXT;

-- Stock documents go to the accounting system only (a JournalEntry at cost, or a supplier's Bill), never to the
-- fiscal system, and are never reversed (a counter-document is).
ALTER TABLE external_postings DROP CONSTRAINT external_postings_kind_known;
ALTER TABLE external_postings ADD CONSTRAINT external_postings_kind_known CHECK (
  document_type IN ('invoice', 'payment', 'credit_note', 'settlement', 'stock_document') AND system IN ('accounting', 'fiscal') AND operation IN ('post', 'reverse')
  AND (operation = 'post' OR system = 'accounting') AND (document_type NOT IN ('settlement', 'stock_document') OR system = 'accounting'));
ALTER TABLE stock_documents ADD CONSTRAINT stock_documents_posting_status_known CHECK (posting_status IN ('pending', 'posted', 'failed', 'not_applicable', 'reversed'));
