-- AlterTable
ALTER TABLE "settlements" ADD COLUMN     "accounting_ref" TEXT,
ADD COLUMN     "accounting_type" TEXT,
ADD COLUMN     "posting_reason" TEXT,
ADD COLUMN     "posting_status" TEXT NOT NULL DEFAULT 'not_applicable';

-- A settlement's journal entry is posted to the accounting system too (the trip's cash expenses and difference).
ALTER TABLE external_postings DROP CONSTRAINT external_postings_kind_known;
ALTER TABLE external_postings ADD CONSTRAINT external_postings_kind_known CHECK (
  document_type IN ('invoice', 'payment', 'credit_note', 'settlement') AND system IN ('accounting', 'fiscal') AND operation IN ('post', 'reverse')
  AND (operation = 'post' OR system = 'accounting') AND (document_type <> 'settlement' OR system = 'accounting'));
ALTER TABLE settlements ADD CONSTRAINT settlements_posting_status_known CHECK (posting_status IN ('pending', 'posted', 'failed', 'not_applicable', 'reversed'));

-- The worker's sweep after each heartbeat looks only at pending postings: a partial index keeps that to the few
-- pending rows however many postings are done (the schema file cannot say a partial index).
CREATE INDEX external_postings_pending ON external_postings (next_attempt_at) WHERE status = 'pending';
