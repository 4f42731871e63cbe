-- AlterTable
ALTER TABLE "stock_documents" ADD COLUMN     "accounting_ref" TEXT,
ADD COLUMN     "accounting_type" TEXT,
ADD COLUMN     "business_date" DATE,
ADD COLUMN     "posting_reason" TEXT,
ADD COLUMN     "posting_status" TEXT NOT NULL DEFAULT 'not_applicable',
ADD COLUMN     "supplier_code" TEXT;
