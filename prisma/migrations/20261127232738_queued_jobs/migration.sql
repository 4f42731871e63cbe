-- A queued DMS document or posting is sent once while it waits in the queue: job_id names the pg-boss job it is queued
-- in (a DMS document's until that job claims it), and it is queued again only when that job is gone, not after a
-- time however long the queue. claimed_by names the worker process whose job is posting a DMS document, so that a
-- dead worker's documents are due again within its heartbeat lease (server/modules/dms/dispatch.ts,
-- server/modules/postings/dispatch.ts). All null for the rows of before: they are due as they were.
-- AlterTable
ALTER TABLE "dms_documents" ADD COLUMN     "claimed_by" TEXT,
ADD COLUMN     "job_id" UUID;

-- AlterTable
ALTER TABLE "external_postings" ADD COLUMN     "job_id" UUID;

-- CreateIndex
CREATE INDEX "dms_documents_claimed_by_idx" ON "dms_documents"("claimed_by");
